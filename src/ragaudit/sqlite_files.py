"""Opening the SQLite files ragaudit keeps (embedding cache, LLM answer cache) safely across processes
and, on a network filesystem, across machines.

Several processes may open the same file at once (parallel test workers, a sweep and an eval, the
cells of ``--executor ray`` on every node). SQLite honours the busy timeout for ordinary reads and
writes, but switching a fresh file's journal mode or creating its tables can still fail at once with
"database is locked"; those steps are retried with a short backoff until ``timeout_s`` has passed.

**The journal mode follows the filesystem.** On a local disk the file runs in WAL mode (readers never
wait for the writer). WAL keeps its index in shared memory (the ``-shm`` file, memory-mapped), which
only works between processes of one machine: SQLite's documentation says WAL "does not work over a
network filesystem", and two machines writing one WAL file through NFS can corrupt it. So a file on a
network filesystem (NFS, SMB/CIFS, CephFS, Lustre, GPFS, ...; read from ``/proc/self/mountinfo``)
runs with a rollback journal (``journal_mode=DELETE``, ``synchronous=FULL``): every transaction takes
SQLite's file locks, which the NFS server arbitrates between machines (NFSv4, or NFSv3 with its lock
manager; a mount with ``nolock`` or ``local_lock=all`` keeps locks on each machine, and then no SQLite
file may be written from two machines). Each write is one transaction, committed through the journal,
so a reader never sees half a batch and a writer that dies leaves the file as it was before its batch.
``$RAGAUDIT_CACHE_SHARED`` overrides the detection: ``1`` always uses the rollback journal (a shared
filesystem the detection does not know), ``0`` always WAL (one machine only).
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

SHARED_ENV = "RAGAUDIT_CACHE_SHARED"
"""``1``: the SQLite files are shared between machines (rollback journal); ``0``: one machine (WAL);
unset: decided by the filesystem of each file."""

NETWORK_FILESYSTEMS = frozenset(
    {
        "nfs",
        "nfs4",
        "cifs",
        "smb3",
        "smbfs",
        "ceph",
        "fuse.ceph",
        "fuse.cephfs",
        "glusterfs",
        "fuse.glusterfs",
        "lustre",
        "gpfs",
        "beegfs",
        "afs",
        "9p",
        "fuse.sshfs",
        "fuse.juicefs",
        "fuse.gcsfuse",
        "fuse.s3fs",
    }
)
"""Filesystem types whose files other machines can open at the same time."""

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _unescape(field: str) -> str:
    """A mountinfo path field: spaces, tabs, newlines and backslashes are written as octal escapes."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field


def filesystem_type(path: Path, mountinfo: str | None = None) -> str | None:
    """The type of the filesystem ``path`` is on (``ext4``, ``nfs4``, ...), from the mount whose mount
    point is the longest prefix of it in ``mountinfo`` (default: ``/proc/self/mountinfo``); ``None``
    when that cannot be read (not Linux)."""
    if mountinfo is None:
        try:
            mountinfo = Path("/proc/self/mountinfo").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
    target = Path(os.path.realpath(path))  # symlinks followed to the mount they lead to
    best: tuple[int, str] | None = None
    for line in mountinfo.splitlines():
        head, sep, tail = line.partition(" - ")
        fields, rest = head.split(), tail.split()
        if not sep or len(fields) < 5 or not rest:
            continue
        point = Path(_unescape(fields[4]))
        if (target == point or point in target.parents) and (best is None or len(point.parts) >= best[0]):
            best = (len(point.parts), rest[0])
    return best[1] if best is not None else None


def shared_between_machines(path: Path, mountinfo: str | None = None) -> bool:
    """Whether ``path`` must be opened so that several machines can share it (see the module
    docstring): ``$RAGAUDIT_CACHE_SHARED`` when set, else whether it is on a network filesystem."""
    forced = os.environ.get(SHARED_ENV, "").strip().lower()
    if forced in _TRUE:
        return True
    if forced in _FALSE:
        return False
    return filesystem_type(path, mountinfo) in NETWORK_FILESYSTEMS


def journal_mode(path: Path) -> str:
    """``delete`` (rollback journal) for a file shared between machines, else ``wal``."""
    return "delete" if shared_between_machines(path) else "wal"


def connect_shared(
    path: Path, initialise: Callable[[sqlite3.Connection], None], timeout_s: float = 60.0
) -> sqlite3.Connection:
    """A connection to ``path`` (created with its parents) in the journal mode of :func:`journal_mode`,
    after ``initialise(conn)`` ran.

    Raises ``OSError`` or ``sqlite3.Error`` when the file cannot be opened within ``timeout_s`` (also
    when another process keeps it in the other journal mode all that time).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = journal_mode(path)
    deadline = time.monotonic() + timeout_s
    delay = 0.01
    while True:
        conn = sqlite3.connect(path, timeout=timeout_s, check_same_thread=False)
        switched = False
        try:
            (got,) = conn.execute(f"PRAGMA journal_mode={mode.upper()}").fetchone()
            if str(got).lower() != mode:  # another connection holds the file in the other mode
                raise sqlite3.OperationalError(f"database is locked in journal mode {got}")
            switched = True
            conn.execute("PRAGMA synchronous=" + ("NORMAL" if mode == "wal" else "FULL"))
            initialise(conn)
            return conn
        except sqlite3.OperationalError as exc:
            conn.close()
            busy = "locked" in str(exc) or "busy" in str(exc)
            if busy and time.monotonic() + delay <= deadline:
                time.sleep(delay)
                delay = min(delay * 2, 0.5)
                continue
            if busy and not switched:
                raise sqlite3.OperationalError(
                    f"{exc}: {path} could not be switched to journal mode {mode} within {timeout_s:g} s; "
                    f"another process may hold it in the other mode: set {SHARED_ENV} alike on every "
                    "machine that opens it"
                ) from exc
            raise
        except BaseException:
            conn.close()
            raise
