"""What every embedding backend produces, what the cache and retrievers need from an encoder, and
small helpers the backends share."""

from __future__ import annotations

import json
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

FloatMatrix = npt.NDArray[np.float32]


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


def read_json(path: Path) -> Any:
    """The parsed JSON file at ``path``, or ``None`` when it is missing or unreadable."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def package_versions(*names: str) -> dict[str, str]:
    """Installed versions of ``names`` (``"not installed"`` for a missing one), for reports."""
    out = {}
    for name in names:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "not installed"
    return out


def configured_max_seq_length(folder: Path) -> int | None:
    """``max_seq_length`` from the folder's ``sentence_bert_config.json``, if it says."""
    config = read_json(folder / "sentence_bert_config.json")
    value = config.get("max_seq_length") if isinstance(config, dict) else None
    return value if isinstance(value, int) else None
