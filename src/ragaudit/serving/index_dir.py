"""The folder ``ragaudit serve`` keeps its indexes in (``--index-dir``), and how a build is switched in.

Layout::

    DIR/.lock                         held (flock) while a serve loads or builds: one at a time per folder
    DIR/<key>/manifest.json           a complete index; its folder name is the key of its inputs
    DIR/building-<key16>-<random>/    a build in progress (or one that was killed)
        building.json                 what the build created outside the folder (Qdrant collections)

A build writes everything into its ``building-`` folder, then ``manifest.json``, fsyncs every file and
folder, and renames the folder to ``<key>`` (an atomic rename on one file system), then fsyncs ``DIR``.
So ``<key>/`` exists only complete; a process killed at any point leaves a ``building-`` folder and
nothing else. At start, with the lock held (a killed process holds no lock), every ``building-`` folder
is a dead build: it is removed, and the Qdrant collections its ``building.json`` names are dropped
first. An index found unusable is renamed to a ``building-`` folder before it is deleted, for the same
reason: a half-deleted index never has its folder name.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

BUILDING_PREFIX = "building-"
MANIFEST = "manifest.json"
BUILDING_RECORD = "building.json"
LOCK_FILE = ".lock"

CollectionDropper = Callable[[dict[str, Any]], None]
"""Drops one Qdrant collection a dead build recorded (``{"collection", "location"}``)."""


@contextmanager
def locked(root: Path) -> Iterator[None]:
    """Hold ``root/.lock`` exclusively (waits for another serve loading or building in ``root``)."""
    import fcntl

    root.mkdir(parents=True, exist_ok=True)
    with open(root / LOCK_FILE, "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def fsync_path(path: Path) -> None:
    """Flush a file's or a folder's entries to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_tree(folder: Path) -> None:
    """Flush every file and folder under ``folder`` (the folder itself last)."""
    for current, folders, files in os.walk(folder, topdown=False):
        for name in files:
            fsync_path(Path(current) / name)
        for name in folders:
            fsync_path(Path(current) / name)
    fsync_path(folder)


def write_json(path: Path, value: Any) -> None:
    """Write ``value`` as JSON to ``path`` through a temporary file, fsynced, renamed in place."""
    temporary = path.with_name(path.name + ".tmp")
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(value, handle, ensure_ascii=False, indent=1, sort_keys=True)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


class Build:
    """One build in progress: its folder under ``root`` and the collections it created elsewhere."""

    def __init__(self, root: Path, key: str) -> None:
        self.root = root
        self.key = key
        self.build_id = secrets.token_hex(4)
        self.path = root / f"{BUILDING_PREFIX}{key[:16]}-{self.build_id}"
        self.path.mkdir()
        self.collections: list[dict[str, Any]] = []
        self._record()

    def _record(self) -> None:
        write_json(self.path / BUILDING_RECORD, {"key": self.key, "collections": self.collections})
        fsync_path(self.path)

    def will_create_collection(self, collection: str, location: dict[str, Any]) -> None:
        """Record a collection before it is created, so a kill during its upsert leaves it droppable."""
        self.collections.append({"collection": collection, "location": location})
        self._record()

    def commit(self, manifest: dict[str, Any]) -> Path:
        """Write the manifest last, flush everything, switch the folder to ``root/<key>``."""
        write_json(self.path / MANIFEST, manifest)
        fsync_tree(self.path)
        final = self.root / self.key
        os.rename(self.path, final)
        fsync_path(self.root)
        return final


def discard(index: Path, drop: CollectionDropper) -> None:
    """Remove a complete index found unusable: renamed to a ``building-`` folder first, then removed."""
    doomed = index.with_name(f"{BUILDING_PREFIX}discard-{secrets.token_hex(4)}")
    os.rename(index, doomed)
    fsync_path(index.parent)
    remove_build(doomed, drop)


def remove_build(folder: Path, drop: CollectionDropper) -> None:
    """Drop the collections a ``building-`` folder recorded, then delete the folder."""
    record = folder / BUILDING_RECORD
    try:
        collections = read_json(record).get("collections", []) if record.exists() else []
    except (ValueError, OSError, AttributeError):
        collections = []
    for entry in collections:
        if isinstance(entry, dict):
            drop(entry)
    shutil.rmtree(folder)


def remove_dead_builds(root: Path, drop: CollectionDropper) -> list[str]:
    """Remove every ``building-`` folder of ``root`` (call with the lock held); their names."""
    removed = []
    for folder in sorted(root.glob(BUILDING_PREFIX + "*")):
        if folder.is_dir():
            remove_build(folder, drop)
            removed.append(folder.name)
    return removed
