"""Rendering results: terminal tables, JSON, Markdown and HTML reports."""
