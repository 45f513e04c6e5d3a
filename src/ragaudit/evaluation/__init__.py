"""Scoring runs against golden datasets."""
