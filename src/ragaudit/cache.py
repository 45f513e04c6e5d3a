"""The folder where ragaudit keeps its caches (embeddings, chat answers): ``$RAGAUDIT_CACHE_DIR`` if
set, else ``./.ragaudit/cache``. A ground-floor module, so every layer that caches finds the same place."""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "RAGAUDIT_CACHE_DIR"


def default_cache_dir() -> Path:
    """``$RAGAUDIT_CACHE_DIR`` if set, else ``./.ragaudit/cache``."""
    env = os.environ.get(CACHE_ENV, "").strip()
    return Path(env).expanduser() if env else Path.cwd() / ".ragaudit" / "cache"
