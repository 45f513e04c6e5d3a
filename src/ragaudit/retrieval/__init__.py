"""Retrievers: the protocol every retrieval source implements, and the built-in ones."""
