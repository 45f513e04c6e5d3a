"""The embedder (real all-MiniLM-L6-v2, offline) and the on-disk embedding cache."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from ragaudit.cache import CACHE_ENV
from ragaudit.errors import InputError
from ragaudit.retrieval.embedder import DEFAULT_MODEL, Embedder, FloatMatrix, TextEncoder, configured_dim
from ragaudit.retrieval.embedder_onnx import onnx_configured_dim, onnx_max_seq_length
from ragaudit.retrieval.embedding_cache import CACHE_FILE, EmbeddingCache, cache_file
from ragaudit.retrieval.embedding_types import configured_max_seq_length

pytestmark = pytest.mark.slow

TEXTS = [
    "Customers can return a product within 30 days for a refund.",
    "The launch vehicle burns liquid oxygen and kerosene.",
    "If the printer jams, open tray two.",
    "Employees receive 25 days of paid leave.",
]


class CountingEncoder:
    """The real encoder, counting what it is asked to embed (a wrapper, not a stand-in)."""

    def __init__(self, inner: TextEncoder, fingerprint: str | None = None, sign: float = 1.0) -> None:
        self.inner = inner
        self._fingerprint = fingerprint
        self.sign = sign
        self.calls = 0
        self.texts: list[str] = []

    @property
    def fingerprint(self) -> str:
        return self._fingerprint or self.inner.fingerprint

    @property
    def dim(self) -> int:
        return self.inner.dim

    def encode(self, texts: Sequence[str]) -> FloatMatrix:
        self.calls += 1
        self.texts.extend(texts)
        return (self.inner.encode(texts) * self.sign).astype(np.float32)


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder()


def test_embedder_makes_unit_float32_rows(embedder: Embedder) -> None:
    vectors = embedder.encode(TEXTS)
    assert vectors.dtype == np.float32
    assert vectors.shape == (len(TEXTS), 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert embedder.encode([]).shape == (0, 384)
    same = vectors @ vectors.T
    assert np.argmax(same[0]) == 0


def test_embedder_reports_name_and_fingerprint(embedder: Embedder) -> None:
    info = embedder.info()
    assert info["model"] == DEFAULT_MODEL
    assert info["dim"] == 384
    assert embedder.fingerprint.startswith(f"{DEFAULT_MODEL}@")
    assert Embedder(DEFAULT_MODEL).fingerprint == embedder.fingerprint
    assert Embedder(embedder.path).fingerprint.endswith(embedder.fingerprint.split("@")[1])
    assert isinstance(embedder, TextEncoder)


def test_size_and_length_are_read_without_loading(embedder: Embedder) -> None:
    assert onnx_configured_dim(embedder.path) == embedder.model.dim == 384
    assert onnx_max_seq_length(embedder.path) == embedder.model.max_seq_length == 256
    assert Embedder().dim == 384 and Embedder().max_seq_length == 256


@pytest.mark.torch
def test_torch_size_and_length_are_read_without_loading() -> None:
    torch = Embedder(backend="torch")
    assert configured_dim(torch.path) == torch.dim == torch.model.dim == 384
    assert configured_max_seq_length(torch.path) == torch.max_seq_length == torch.model.max_seq_length == 256


def test_embedder_never_downloads(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="never downloads"):
        Embedder("sentence-transformers/some-other-model")
    with pytest.raises(InputError, match="is not a model folder"):
        Embedder(tmp_path)


def test_second_embed_is_served_from_cache(embedder: Embedder, tmp_path: Path) -> None:
    counting = CountingEncoder(embedder)
    with EmbeddingCache(counting, tmp_path) as cache:
        first = cache.embed(TEXTS)
        assert counting.calls == 1
        assert (cache.hits, cache.misses) == (0, len(TEXTS))
        second = cache.embed(TEXTS)
        assert counting.calls == 1
        assert (cache.hits, cache.misses) == (len(TEXTS), len(TEXTS))
        assert cache.count() == len(TEXTS)
    np.testing.assert_array_equal(first, second)
    np.testing.assert_allclose(first, embedder.encode(TEXTS), atol=1e-6)
    assert (tmp_path / CACHE_FILE).is_file()


def test_cache_survives_a_new_instance_and_embeds_only_new_texts(embedder: Embedder, tmp_path: Path) -> None:
    with EmbeddingCache(embedder, tmp_path) as cache:
        cache.embed(TEXTS[:2])
    counting = CountingEncoder(embedder)
    with EmbeddingCache(counting, tmp_path, batch_size=1) as cache:
        vectors = cache.embed([TEXTS[3], *TEXTS, TEXTS[3]])
        assert counting.texts == [TEXTS[3], TEXTS[2]]  # each new text once, cached ones never
        assert counting.calls == 2  # batch_size=1
        assert (cache.hits, cache.misses) == (2, 2)
    np.testing.assert_array_equal(vectors[0], vectors[-1])
    # the cached rows are exactly what the model gave in their own batches (int8 activations are
    # quantised per batch, so a text embedded with other batch mates differs slightly)
    np.testing.assert_allclose(vectors[1:3], embedder.encode(TEXTS[:2]), atol=1e-6)
    np.testing.assert_allclose(vectors[3], embedder.encode([TEXTS[2]])[0], atol=1e-6)
    np.testing.assert_allclose(vectors[4], embedder.encode([TEXTS[3]])[0], atol=1e-6)


def test_model_keys_do_not_collide(embedder: Embedder, tmp_path: Path) -> None:
    other = CountingEncoder(embedder, fingerprint="other-model@1", sign=-1.0)
    with EmbeddingCache(embedder, tmp_path) as cache:
        mine = cache.embed(TEXTS)
    with EmbeddingCache(other, tmp_path) as cache:
        theirs = cache.embed(TEXTS)
        assert other.calls == 1  # nothing reused from the first model's rows
        assert cache.count() == len(TEXTS)
    np.testing.assert_allclose(theirs, -mine, atol=1e-6)


def test_cache_location_default_env_and_argument(
    embedder: Embedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(CACHE_ENV, raising=False)
    assert cache_file() == tmp_path / ".ragaudit" / "cache" / CACHE_FILE
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "elsewhere"))
    assert cache_file() == tmp_path / "elsewhere" / CACHE_FILE
    assert cache_file(tmp_path / "mine.sqlite") == tmp_path / "mine.sqlite"
    with EmbeddingCache(embedder) as cache:
        assert cache.path == tmp_path / "elsewhere" / CACHE_FILE
        assert cache.path.is_file()


def test_unusable_cache_location_is_an_input_error(embedder: Embedder, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    with pytest.raises(InputError, match=CACHE_ENV):
        EmbeddingCache(embedder, blocker / "cache")


_WRITER = textwrap.dedent(
    """
    import sys
    import numpy as np
    from ragaudit.retrieval.embedding_cache import EmbeddingCache

    class HashEncoder:  # deterministic vectors: this child only exercises the shared SQLite file
        fingerprint = "hash-encoder@1"
        dim = 8
        def encode(self, texts):
            return np.array([[float((hash(t) >> i) & 1) for i in range(8)] for t in texts], dtype=np.float32)

    texts = [f"text {i}" for i in range(int(sys.argv[2]), int(sys.argv[3]))]
    with EmbeddingCache(HashEncoder(), sys.argv[1], batch_size=7) as cache:
        cache.embed(texts)
    """
)


def test_processes_share_one_cache_file(tmp_path: Path) -> None:
    env = {"PYTHONHASHSEED": "0", "PATH": ""}
    ranges = [("0", "300"), ("150", "450")]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(tmp_path), lo, hi], env=env, stderr=subprocess.PIPE
        )
        for lo, hi in ranges
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
    import sqlite3

    with sqlite3.connect(tmp_path / CACHE_FILE) as conn:
        (count,) = conn.execute("SELECT COUNT(*) FROM embeddings WHERE model = 'hash-encoder@1'").fetchone()
    assert count == 450
