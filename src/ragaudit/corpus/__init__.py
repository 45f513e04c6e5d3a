"""Corpora: documents, chunkers, and the projection of span labels onto chunks."""
