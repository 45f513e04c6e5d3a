"""The SQLite files ragaudit shares (embedding cache, chat cache): the journal mode follows the
filesystem (WAL on one machine, a rollback journal where other machines open the file too), and
concurrent writers leave a whole file with every row."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import ragaudit
from ragaudit.retrieval.embedding_cache import CACHE_FILE
from ragaudit.sqlite_files import (
    NETWORK_FILESYSTEMS,
    SHARED_ENV,
    connect_shared,
    filesystem_type,
    journal_mode,
    shared_between_machines,
)

MOUNTINFO = """\
22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
40 22 0:50 / /mnt/nfs rw,relatime shared:30 - nfs4 fileserver:/export rw,vers=4.2,local_lock=none
41 22 8:2 / /mnt/nfs-scratch rw,relatime shared:31 - ext4 /dev/sdb1 rw
42 40 0:51 / /mnt/nfs/local rw,relatime shared:32 - tmpfs tmpfs rw
43 22 0:52 / /mnt/my\\040share rw,relatime shared:33 - cifs //server/share rw
"""


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/home/ana/.ragaudit/cache", "ext4"),
        ("/mnt/nfs", "nfs4"),
        ("/mnt/nfs/team/cache/embeddings.sqlite", "nfs4"),
        ("/mnt/nfs-scratch/cache", "ext4"),  # a longer name, not a folder below /mnt/nfs
        ("/mnt/nfs/local/cache", "tmpfs"),  # the innermost mount wins
        ("/mnt/my share/cache", "cifs"),  # mountinfo writes a space as \040
    ],
)
def test_the_filesystem_is_the_innermost_mount_of_the_path(path: str, expected: str) -> None:
    assert filesystem_type(Path(path), MOUNTINFO) == expected


def test_network_filesystems_are_shared_unless_the_variable_says_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(SHARED_ENV, raising=False)
    assert shared_between_machines(Path("/mnt/nfs/cache"), MOUNTINFO)
    assert shared_between_machines(Path("/mnt/my share/cache"), MOUNTINFO)
    assert not shared_between_machines(Path("/home/ana/cache"), MOUNTINFO)
    monkeypatch.setenv(SHARED_ENV, "1")
    assert shared_between_machines(Path("/home/ana/cache"), MOUNTINFO)
    monkeypatch.setenv(SHARED_ENV, "0")
    assert not shared_between_machines(Path("/mnt/nfs/cache"), MOUNTINFO)
    assert {"nfs", "nfs4", "cifs", "lustre", "gpfs"} <= NETWORK_FILESYSTEMS


def test_this_machine_reads_its_own_mounts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not Path("/proc/self/mountinfo").exists():
        pytest.skip("no /proc/self/mountinfo: not Linux")
    monkeypatch.delenv(SHARED_ENV, raising=False)
    kind = filesystem_type(tmp_path)
    assert kind is not None
    assert journal_mode(tmp_path / "x.sqlite") == ("delete" if kind in NETWORK_FILESYSTEMS else "wal")


def _open(path: Path) -> sqlite3.Connection:
    def initialise(conn: sqlite3.Connection) -> None:
        with conn:
            conn.execute("CREATE TABLE IF NOT EXISTS t (k TEXT PRIMARY KEY)")

    return connect_shared(path, initialise, timeout_s=0.5)


def test_the_journal_mode_follows_the_setting_and_converts_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "c.sqlite"
    monkeypatch.setenv(SHARED_ENV, "0")
    with _open(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        conn.execute("INSERT INTO t VALUES ('kept')")
    conn.close()
    monkeypatch.setenv(SHARED_ENV, "1")  # the same file, now shared between machines
    conn = _open(path)
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("delete",)
    assert conn.execute("PRAGMA synchronous").fetchone() == (2,)  # FULL
    assert conn.execute("SELECT k FROM t").fetchall() == [("kept",)]
    conn.close()
    assert not (tmp_path / "c.sqlite-wal").exists()


def test_a_file_held_in_the_other_mode_is_an_error_naming_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "c.sqlite"
    monkeypatch.setenv(SHARED_ENV, "0")
    holder = _open(path)  # another process keeps the file open in WAL mode
    try:
        monkeypatch.setenv(SHARED_ENV, "1")
        with pytest.raises(sqlite3.OperationalError, match=SHARED_ENV):
            _open(path)
    finally:
        holder.close()


_WRITER = textwrap.dedent(
    """
    import sys
    import numpy as np
    from ragaudit.retrieval.embedding_cache import EmbeddingCache

    class HashEncoder:  # deterministic vectors: this child only exercises the shared SQLite file
        fingerprint = "hash-encoder@1"
        dim = 8
        def encode(self, texts):
            return np.array([[float(len(t) + i) for i in range(8)] for t in texts], dtype=np.float32)

    texts = [f"text {i}" for i in range(int(sys.argv[2]), int(sys.argv[3]))]
    with EmbeddingCache(HashEncoder(), sys.argv[1], batch_size=5) as cache:
        cache.embed(texts)
    """
)


@pytest.mark.parametrize("shared", ["1", "0"], ids=["rollback-journal", "wal"])
def test_concurrent_writers_leave_a_whole_cache(tmp_path: Path, shared: str) -> None:
    """Four processes write overlapping ranges in batches of 5 at once: the file passes SQLite's
    integrity check and holds every text once, with its vector, in the mode asked for."""
    src = str(Path(ragaudit.__file__).parents[1])
    env = {"PATH": "", "PYTHONPATH": src, SHARED_ENV: shared}
    ranges = [(0, 120), (60, 180), (100, 220), (0, 220)]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(tmp_path), str(lo), str(hi)], env=env, stderr=subprocess.PIPE
        )
        for lo, hi in ranges
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
    with sqlite3.connect(tmp_path / CACHE_FILE) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("delete" if shared == "1" else "wal",)
        rows = conn.execute("SELECT dim, vector FROM embeddings WHERE model = 'hash-encoder@1'").fetchall()
    assert len(rows) == 220
    lengths = {len(f"text {i}") for i in range(220)}
    got = {float(np.frombuffer(blob, dtype="<f4")[0]) for dim, blob in rows if dim == 8}
    assert got == {float(n) for n in lengths}
