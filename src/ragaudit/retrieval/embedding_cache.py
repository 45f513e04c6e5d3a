"""An on-disk embedding cache: a text is embedded once per model, ever, on this machine.

Vectors live in one SQLite file, keyed by ``(model fingerprint, sha256(text))`` and stored as float32
blobs. The default file is ``.ragaudit/cache/embeddings.sqlite`` under the current directory; the
environment variable ``RAGAUDIT_CACHE_DIR`` names another folder, and an explicit ``path`` wins over
both. Several processes may share the file, on one machine or (on a network filesystem such as NFS)
on several: it runs in WAL mode on a local disk and with a rollback journal on a network filesystem
(:mod:`ragaudit.sqlite_files`), and each batch is written in its own transaction, so an interrupted
job keeps what it had embedded and a reader never sees half a batch.

:class:`EmbeddingCache` wraps a :class:`~ragaudit.retrieval.embedder.TextEncoder` and is one itself
(same ``fingerprint`` and ``dim``), so whatever takes an encoder can take a cached one.
"""

from __future__ import annotations

import hashlib
import sqlite3
import sys
import threading
from collections.abc import Iterator, Sequence, Set
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np

from ragaudit.cache import CACHE_ENV, default_cache_dir
from ragaudit.counters import Counter
from ragaudit.errors import InputError
from ragaudit.retrieval.embedder import FloatMatrix, TextEncoder
from ragaudit.sqlite_files import connect_shared

CACHE_FILE = "embeddings.sqlite"
SCHEMA_VERSION = 1
_LOOKUP_CHUNK = 500  # stays under SQLite's default limit of 999 bound parameters

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS embeddings (
    model TEXT NOT NULL,
    text_sha256 BLOB NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model, text_sha256)
) WITHOUT ROWID;
"""


def cache_file(path: str | Path | None = None) -> Path:
    """The SQLite file for ``path``: a ``.sqlite``/``.db`` file as given, a folder gets ``embeddings.sqlite``."""
    if path is None:
        return default_cache_dir() / CACHE_FILE
    p = Path(path).expanduser()
    if p.is_dir() or p.suffix not in (".sqlite", ".sqlite3", ".db"):
        return p / CACHE_FILE
    return p


def text_key(text: str) -> bytes:
    """The cache key of a text: its UTF-8 sha256 digest."""
    return hashlib.sha256(text.encode("utf-8")).digest()


def _chunks(items: Sequence[bytes], size: int) -> Iterator[Sequence[bytes]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class EmbeddingCache:
    """Embed texts through ``encoder``, computing only those not cached yet.

    ``batch_size`` texts are embedded and committed at a time. ``progress`` shows a tqdm bar on stderr:
    ``None`` (default) shows it only when stderr is a terminal and at least ``progress_min`` texts need
    embedding; ``False`` never; ``True`` always. ``hits`` / ``misses`` count distinct texts served from
    the cache / sent to the model since this object was made.
    """

    def __init__(
        self,
        encoder: TextEncoder,
        path: str | Path | None = None,
        *,
        batch_size: int = 256,
        progress: bool | None = None,
        progress_min: int = 1000,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer (got {batch_size})")
        self.encoder = encoder
        self.path = cache_file(path)
        self.batch_size = batch_size
        self.progress = progress
        self.progress_min = progress_min
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()
        self._conn = self._connect()

    def _connect(self) -> sqlite3.Connection:
        try:

            def initialise(conn: sqlite3.Connection) -> None:
                with conn:
                    conn.executescript(_SCHEMA)
                    conn.execute(
                        "INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', ?)",
                        (str(SCHEMA_VERSION),),
                    )

            conn = connect_shared(self.path, initialise)
        except (OSError, sqlite3.Error) as exc:
            raise InputError(
                str(self.path),
                None,
                f"cannot open the embedding cache: {exc}",
                f"set {CACHE_ENV} to a writable folder, or pass another cache path",
            ) from None
        return conn

    @property
    def fingerprint(self) -> str:
        return self.encoder.fingerprint

    @property
    def dim(self) -> int:
        return self.encoder.dim

    def _lookup(self, model: str, keys: Sequence[bytes]) -> dict[bytes, np.ndarray]:
        found: dict[bytes, np.ndarray] = {}
        for part in _chunks(keys, _LOOKUP_CHUNK):
            marks = ",".join("?" * len(part))
            rows = self._conn.execute(
                f"SELECT text_sha256, dim, vector FROM embeddings WHERE model = ? AND text_sha256 IN ({marks})",
                (model, *part),
            ).fetchall()
            for key, dim, blob in rows:
                vector = np.frombuffer(blob, dtype="<f4")
                if vector.shape[0] == dim:  # a damaged row is ignored and re-embedded
                    found[bytes(key)] = vector
        return found

    def _progress_bar(self, total: int) -> Any:
        show = (
            self.progress
            if self.progress is not None
            else (total >= self.progress_min and sys.stderr.isatty())
        )
        if not show:
            return None
        try:
            from tqdm import tqdm
        except ImportError:  # tqdm is a core dependency; without it there is simply no bar
            return None
        return tqdm(total=total, desc="embedding", unit="text", file=sys.stderr, leave=False)

    def missing(self, texts: Sequence[str], planned: Set[bytes] = frozenset()) -> dict[bytes, str]:
        """The distinct texts of ``texts`` not cached yet and not in ``planned`` (keys), by key, in the
        order of their first appearance: what :meth:`embed` would send to the model."""
        with self._lock:
            return self._split([text_key(t) for t in texts], texts, planned)[1]

    def _split(
        self, keys: Sequence[bytes], texts: Sequence[str], planned: Set[bytes] = frozenset()
    ) -> tuple[dict[bytes, np.ndarray], dict[bytes, str]]:
        """The cached vectors of ``keys``, and the texts to embed (new, distinct, first-seen order)."""
        cached = self._lookup(self.fingerprint, list(dict.fromkeys(keys)))
        missing: dict[bytes, str] = {}
        for key, text in zip(keys, texts, strict=True):
            if key not in cached and key not in planned and key not in missing:
                missing[key] = text
        return cached, missing

    def groups(self, missing: dict[bytes, str]) -> list[list[tuple[bytes, str]]]:
        """``missing`` cut into the batches :meth:`embed` encodes and commits one at a time
        (``batch_size`` texts each, in order). Each batch is one ``encoder.encode`` call, whose vectors
        can depend on the batch (int8 quantisation, padding), so a distributed run that encodes the
        same batches gets the same vectors."""
        items = list(missing.items())
        return [items[start : start + self.batch_size] for start in range(0, len(items), self.batch_size)]

    def store(self, batch: Sequence[tuple[bytes, str]], matrix: FloatMatrix) -> dict[bytes, np.ndarray]:
        """Write the vectors of one batch (``matrix`` row i for ``batch[i]``) in one transaction: how a
        batch embedded elsewhere (:meth:`groups`, on a Ray actor) enters the cache."""
        with self._lock:
            return self._store(batch, matrix)

    def _store(self, batch: Sequence[tuple[bytes, str]], matrix: FloatMatrix) -> dict[bytes, np.ndarray]:
        model = self.fingerprint
        out: dict[bytes, np.ndarray] = {}
        rows = []
        for (key, _), vector in zip(batch, matrix, strict=True):
            vec = np.ascontiguousarray(vector, dtype="<f4")
            out[key] = vec
            rows.append((model, key, int(vec.shape[0]), vec.tobytes()))
        with self._conn:
            self._conn.executemany(
                "INSERT OR REPLACE INTO embeddings(model, text_sha256, dim, vector) VALUES (?, ?, ?, ?)",
                rows,
            )
        return out

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        """Vectors for ``texts`` (``(n, dim)`` float32, row i for text i), embedding only the new ones."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        keys = [text_key(t) for t in texts]
        with self._lock:
            vectors, missing = self._split(keys, texts)
            self.hits += len(set(keys)) - len(missing)
            self.misses += len(missing)
            if missing:
                self._embed_missing(missing, vectors)
        return np.stack([vectors[k] for k in keys]).astype(np.float32, copy=False)

    def _embed_missing(self, missing: dict[bytes, str], out: dict[bytes, np.ndarray]) -> None:
        bar = self._progress_bar(len(missing))
        try:
            with Counter(len(missing), "embedding") as counter:  # quoted by the command line's watcher
                for batch in self.groups(missing):
                    out.update(self._store(batch, self.encoder.encode([text for _, text in batch])))
                    counter.update(len(batch))
                    if bar is not None:
                        bar.update(len(batch))
        finally:
            if bar is not None:
                bar.close()

    encode = embed
    """The :class:`TextEncoder` method: the same as :meth:`embed`."""

    def count(self) -> int:
        """How many vectors this cache file holds for this encoder's fingerprint."""
        with self._lock:
            row = self._conn.execute(
                "SELECT COUNT(*) FROM embeddings WHERE model = ?", (self.fingerprint,)
            ).fetchone()
        return int(row[0])

    def info(self) -> dict[str, Any]:
        """What a report records about the cache."""
        return {
            "path": str(self.path),
            "fingerprint": self.fingerprint,
            "hits": self.hits,
            "misses": self.misses,
        }

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> EmbeddingCache:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
