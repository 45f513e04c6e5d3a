"""The ONNX Runtime embedding backends (the packaged int8 MiniLM; fp32 built by the export script),
checked against torch reference vectors, and how backends are chosen, keyed and guarded."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ragaudit.errors import InputError, MissingDependencyError, ValidationError
from ragaudit.pipelines.config import parse_pipeline
from ragaudit.retrieval.embedder import DEFAULT_MODEL, Embedder
from ragaudit.retrieval.embedder_onnx import (
    FP32_FOLDER,
    INT8_FOLDER,
    MODELS_ENV,
    PACKAGED_INT8_SHA256,
    OnnxModel,
    file_sha256,
    length_batches,
    mean_pool_normalise,
    packaged_int8_dir,
)
from ragaudit.retrieval.embedding_cache import EmbeddingCache

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"
TEXTS: list[str] = json.loads((DATA / "minilm_reference_texts.json").read_text(encoding="utf-8"))
REFERENCE = np.load(DATA / "minilm_reference_vectors.npy")  # torch, scripts/make_reference_vectors.py


@pytest.fixture(scope="module")
def int8() -> Embedder:
    return Embedder()


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray((a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)))


# ------------------------------------------------------------------------------------- the default


def test_default_backend_is_the_packaged_int8_onnx_model(int8: Embedder) -> None:
    assert int8.backend == "onnx-int8"
    assert int8.path == packaged_int8_dir()
    assert file_sha256(int8.path / "model.onnx") == PACKAGED_INT8_SHA256
    for name in ("model.onnx", "tokenizer.json", "LICENSE", "NOTICE", "README.md"):
        assert (int8.path / name).is_file(), name
    assert "Apache License" in (int8.path / "LICENSE").read_text(encoding="utf-8")
    info = int8.info()
    assert info["backend"] == "onnx-int8"
    assert info["model"] == DEFAULT_MODEL
    assert info["threads"] >= 1


def test_int8_agrees_with_the_torch_reference_vectors(int8: Embedder) -> None:
    vectors = int8.encode(TEXTS)
    assert vectors.dtype == np.float32
    assert vectors.shape == REFERENCE.shape == (len(TEXTS), 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    cos = cosines(vectors, REFERENCE)
    tiny = [i for i, t in enumerate(TEXTS) if len(t) < 3]  # "" and "ok": almost only special tokens
    real = [i for i in range(len(TEXTS)) if i not in tiny]
    assert len(tiny) == 2
    # int8 weights (per column), int8 activations (per token row): mean 0.998 on these texts
    assert cos[real].mean() >= 0.99, cos
    assert cos[real].min() >= 0.98, cos
    assert cos[tiny].min() >= 0.93, cos
    # every text is nearest to its own reference vector
    assert list(np.argmax(vectors @ REFERENCE.T, axis=1)) == list(range(len(TEXTS)))


def test_truncation_is_256_tokens_not_the_tokenizer_files_128(int8: Embedder) -> None:
    tokenizer_file = json.loads((int8.path / "tokenizer.json").read_text(encoding="utf-8"))
    assert tokenizer_file["truncation"]["max_length"] == 128  # the file is shipped unchanged
    assert int8.max_seq_length == 256
    tokenizer = int8.model.tokenizer  # type: ignore[attr-defined]
    longest = max(TEXTS, key=len)
    assert len(tokenizer.encode(longest).ids) == 256
    assert len(tokenizer.encode("ok").ids) == 3  # no padding from the file's fixed 128 either


def test_batches_by_exact_length_and_restores_the_callers_order(int8: Embedder) -> None:
    texts = [TEXTS[i] for i in (19, 0, 12, 18, 4, 16, 9)] + [TEXTS[12]]
    lengths = [len(int8.model.tokenizer.encode(t).ids) for t in texts]  # type: ignore[attr-defined]
    batches = length_batches(lengths, 3)
    flat = [i for b in batches for i in b]
    assert sorted(flat) == list(range(len(texts)))
    assert [lengths[i] for i in flat] == sorted(lengths)  # shortest first
    assert all(len({lengths[i] for i in b}) == 1 for b in batches)  # one length per batch: no padding
    assert [2, 7] in batches  # the two copies of one text share a batch
    together = Embedder(batch_size=3).encode(texts)
    alone = np.stack([int8.encode([t])[0] for t in texts])
    assert together.tobytes() == alone.tobytes()  # per-row int8 activations: batch mates change nothing


def test_mean_pooling_uses_the_attention_mask_then_l2() -> None:
    hidden = np.array([[[1.0, 0.0], [3.0, 4.0], [100.0, 100.0]], [[0.0, 2.0], [0.0, 0.0], [0.0, 0.0]]])
    mask = np.array([[1, 1, 0], [1, 0, 0]])
    pooled = mean_pool_normalise(hidden, mask)
    expected = np.array([[2.0, 2.0], [0.0, 2.0]])  # padded positions are left out of the mean
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_allclose(pooled, expected, atol=1e-6)
    assert pooled.dtype == np.float32


def test_the_default_embedder_never_imports_torch() -> None:
    code = (
        "import sys\n"
        "from ragaudit.retrieval.embedder import Embedder\n"
        "e = Embedder()\n"
        "assert e.encode(['refund policy']).shape == (1, 384)\n"
        "print(sorted(m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "[]"


# ------------------------------------------------------------------------------------------ guards


def test_a_changed_packaged_model_file_is_a_clear_error(tmp_path: Path) -> None:
    folder = tmp_path / INT8_FOLDER
    shutil.copytree(packaged_int8_dir(), folder)
    data = bytearray((folder / "model.onnx").read_bytes())
    data[len(data) // 2] ^= 0xFF
    (folder / "model.onnx").write_bytes(bytes(data))
    with pytest.raises(InputError, match=r"sha256 [0-9a-f]{64} differs from the pinned") as caught:
        OnnxModel(folder, expected_sha256=PACKAGED_INT8_SHA256)
    assert str(folder / "model.onnx") in str(caught.value)
    assert "reinstall ragaudit" in str(caught.value)


def test_missing_onnxruntime_names_the_pip_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'ragaudit\[dense\]'"):
        OnnxModel(packaged_int8_dir())


def test_missing_sentence_transformers_names_the_torch_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from ragaudit.retrieval.embedder_torch import TorchModel

    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'ragaudit\[torch\]'"):
        TorchModel(packaged_int8_dir(), "cpu")


def test_unknown_or_unbuilt_backends_are_input_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(InputError, match="unknown embedding backend 'gpu'"):
        Embedder(backend="gpu")
    monkeypatch.setenv(MODELS_ENV, str(tmp_path))
    with pytest.raises(InputError, match="not built here") as caught:
        Embedder(backend="onnx")
    assert "scripts/export_onnx.py" in str(caught.value)
    assert str(tmp_path / FP32_FOLDER) in str(caught.value)
    with pytest.raises(InputError, match="the torch backend needs a sentence-transformers folder"):
        Embedder(packaged_int8_dir(), backend="torch")
    with pytest.raises(InputError, match="is not a model folder"):
        Embedder(tmp_path)


def test_a_users_onnx_folder_runs_on_onnx_runtime(int8: Embedder, tmp_path: Path) -> None:
    folder = tmp_path / "my-onnx-model"
    shutil.copytree(packaged_int8_dir(), folder)
    mine = Embedder(folder)
    assert (mine.backend, mine.name, mine.dim, mine.max_seq_length) == ("onnx", "my-onnx-model", 384, 256)
    assert mine.fingerprint.startswith("my-onnx-model@")
    assert mine.fingerprint != int8.fingerprint
    np.testing.assert_allclose(mine.encode(TEXTS[:5]), int8.encode(TEXTS[:5]), atol=1e-6)
    assert Embedder(packaged_int8_dir()).fingerprint == int8.fingerprint  # the packaged folder, named


def test_pipeline_files_take_a_backend() -> None:
    raw = {
        "retriever": {"type": "dense", "backend": "onnx"},
        "rerank": {"type": "bi-encoder", "backend": "torch"},
    }
    config = parse_pipeline(raw)
    assert config.retriever.params["backend"] == "onnx"
    assert config.rerank is not None and config.rerank.params["backend"] == "torch"
    with pytest.raises(ValidationError, match=r"backend must be one of 'onnx-int8', 'onnx', 'torch'"):
        parse_pipeline({"retriever": {"type": "dense", "backend": "cuda"}})


# ---------------------------------------------------------------------------- against torch itself


@pytest.fixture(scope="module")
def torch_embedder() -> Embedder:
    """The default model on the torch backend, loaded once for the tests that compare against it."""
    return Embedder(backend="torch")


@pytest.mark.torch
def test_the_cache_key_differs_per_backend(int8: Embedder, torch_embedder: Embedder, tmp_path: Path) -> None:
    torch = torch_embedder
    assert torch.fingerprint != int8.fingerprint
    assert torch.fingerprint.startswith(f"{DEFAULT_MODEL}@")
    assert int8.fingerprint.startswith(f"{DEFAULT_MODEL}@")
    with EmbeddingCache(int8, tmp_path) as cache:
        cache.embed(TEXTS[:4])
    with EmbeddingCache(torch, tmp_path) as cache:
        vectors = cache.embed(TEXTS[:4])
        assert (cache.hits, cache.misses) == (0, 4)  # int8 vectors are never served as torch ones
    np.testing.assert_allclose(vectors, REFERENCE[:4], atol=1e-5)


@pytest.mark.torch
def test_the_torch_backend_reproduces_the_reference_vectors(torch_embedder: Embedder) -> None:
    vectors = torch_embedder.encode(TEXTS)
    assert cosines(vectors, REFERENCE).min() >= 0.99999


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """The export script, run for real into a temporary folder (needs the torch and export extras)."""
    out = tmp_path_factory.mktemp("onnx-export")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "export_onnx.py"), "--out-dir", str(out)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=900,
    )
    return out, done


@pytest.mark.torch
def test_the_export_script_reproduces_the_packaged_int8_file(
    exported: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    out, done = exported
    assert done.returncode == 0, done.stderr[-2000:]
    assert "int8 model equals the packaged, pinned one" in done.stdout
    assert file_sha256(out / INT8_FOLDER / "model.onnx") == PACKAGED_INT8_SHA256
    assert PACKAGED_INT8_SHA256 in done.stdout
    for name in ("tokenizer.json", "sentence_bert_config.json", "config.json", "LICENSE", "NOTICE"):
        assert (out / INT8_FOLDER / name).read_bytes() == (packaged_int8_dir() / name).read_bytes(), name


@pytest.mark.torch
def test_fp32_onnx_equals_torch(
    exported: tuple[Path, subprocess.CompletedProcess[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    out, done = exported
    assert done.returncode == 0, done.stderr[-2000:]
    monkeypatch.setenv(MODELS_ENV, str(out))
    fp32 = Embedder(backend="onnx")
    assert fp32.path == out / FP32_FOLDER
    assert fp32.fingerprint != Embedder().fingerprint
    assert cosines(fp32.encode(TEXTS), REFERENCE).min() >= 0.9999


def test_a_pipeline_backend_reaches_the_embedder(tmp_path: Path) -> None:
    from ragaudit.corpus.loading import load_corpus
    from ragaudit.pipelines.build import build_pipeline
    from ragaudit.retrieval.dense import DenseRetriever

    corpus = load_corpus(ROOT / "src" / "ragaudit" / "demo_data" / "kb" / "corpus.jsonl")
    raw = {"retriever": {"type": "dense", "backend": "onnx-int8", "cache_dir": str(tmp_path)}}
    built = build_pipeline(parse_pipeline(raw), corpus)
    assert isinstance(built.retriever, DenseRetriever)
    assert built.retriever.info()["model"]["backend"] == "onnx-int8"
    assert built.models["embedding"] == [f"{DEFAULT_MODEL} (onnx-int8)"]
