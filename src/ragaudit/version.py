"""The installed ragaudit version."""

from __future__ import annotations

from importlib import metadata

try:
    __version__ = metadata.version("ragaudit")
except metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0+unknown"
