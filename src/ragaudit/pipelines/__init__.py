"""Pipelines: a retrieval pipeline described by a small TOML file or a preset, and built over a corpus."""
