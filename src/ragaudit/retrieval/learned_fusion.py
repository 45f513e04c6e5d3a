"""Learned fusion: a second stage that reorders a BM25 + dense hybrid's candidates with a fitted model.

``ragaudit fit-fusion`` fits the model on a golden set and writes it as JSON (:class:`FusionModel`;
never a pickle). Scoring needs numpy only, so the stage runs without the library that fitted it::

    [rerank]
    type = "learned"
    model = "fusion.json"
    top_n = 100

The model is linear over the standardised features of :mod:`ragaudit.retrieval.fusion_features`:
``score(x) = Σ_j w_j (x_j - mean_j) / scale_j``. The stage sits on a ``hybrid`` retriever whose
components are one BM25 and one dense retriever (in either order); anything else is an input error,
since the features are read from that hybrid's per-retriever ranks and scores, and the embedding
features (:data:`~ragaudit.retrieval.fusion_features.VECTOR_FEATURES`) through its dense retriever's
encoder (and so its embedding cache).

Model files: ``format_version`` 2 (this version) scores :data:`FEATURES`; files of version 1 (the
first 14 features, :data:`FEATURES_V1`) still load and score exactly as before. Anything else is
refused with the fix (refit).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ragaudit.errors import InputError
from ragaudit.retrieval.embedding_types import TextEncoder
from ragaudit.retrieval.fusion_features import FEATURES, FEATURES_V1, VECTOR_FEATURES, candidate_features
from ragaudit.retrieval.protocol import Retriever
from ragaudit.retrieval.rerank import Candidate

FORMAT = "ragaudit-fusion-model"
FORMAT_VERSION = 2
FEATURES_BY_VERSION: dict[int, tuple[str, ...]] = {1: FEATURES_V1, 2: FEATURES}
"""The feature list a model file of each ``format_version`` scores."""


@dataclass(frozen=True)
class FusionModel:
    """A fitted linear scorer over :data:`FEATURES` and what it was fitted on."""

    weights: tuple[float, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    features: tuple[str, ...] = FEATURES
    candidates: int = 100
    """How many of the first stage's candidates it was fitted to reorder (the stage's ``top_n``)."""
    info: Mapping[str, Any] = field(default_factory=dict)
    """Provenance and cross-validated estimates, as ``fit-fusion`` wrote them (not used for scoring)."""

    @property
    def format_version(self) -> int:
        """The file format that holds this model's feature list (1 for the first 14 features)."""
        return 1 if self.features == FEATURES_V1 else FORMAT_VERSION

    @property
    def needs_encoder(self) -> bool:
        """Whether scoring needs the dense retriever's encoder (an embedding feature is used)."""
        return any(name in VECTOR_FEATURES for name in self.features)

    def __post_init__(self) -> None:
        if self.features not in FEATURES_BY_VERSION.values():
            raise ValueError(f"unknown feature list {list(self.features)}")
        n = len(self.features)
        if not (len(self.weights) == len(self.mean) == len(self.scale) == n):
            raise ValueError("weights, mean and scale need one value per feature")
        values = (*self.weights, *self.mean, *self.scale)
        if not all(math.isfinite(v) for v in values) or any(s <= 0 for s in self.scale):
            raise ValueError("weights and mean must be finite and every scale > 0")

    def score(self, features: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """One score per row of ``features`` (columns in :attr:`features` order)."""
        standard = (features - np.asarray(self.mean)) / np.asarray(self.scale)
        return np.asarray(standard @ np.asarray(self.weights), dtype=np.float64)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "format_version": self.format_version,
            "kind": "linear",
            "features": list(self.features),
            "weights": list(self.weights),
            "mean": list(self.mean),
            "scale": list(self.scale),
            "candidates": self.candidates,
            **dict(self.info),
        }

    def write(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=2, allow_nan=False) + "\n", encoding="utf-8")


def _numbers(raw: Mapping[str, Any], key: str, where: str) -> tuple[float, ...]:
    values = raw.get(key)
    if not isinstance(values, list) or not all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in values
    ):
        raise InputError(where, None, f"{key!r} must be a list of numbers", "refit with ragaudit fit-fusion")
    return tuple(float(v) for v in values)


def load_model(path: str | Path) -> FusionModel:
    """Read a model ``fit-fusion`` wrote; an :class:`InputError` naming the file on anything else."""
    where = str(path)
    refit = "write it with ragaudit fit-fusion --out FILE"
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(where, None, "no such fusion model file", refit) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(where, None, f"not a readable JSON fusion model ({exc})", refit) from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise InputError(where, None, f'not a ragaudit fusion model (no "format": {FORMAT!r})', refit)
    version = raw.get("format_version")
    if version not in FEATURES_BY_VERSION or isinstance(version, bool) or raw.get("kind") != "linear":
        raise InputError(
            where,
            None,
            f"unsupported model version/kind {version!r}/{raw.get('kind')!r} "
            f"(this ragaudit reads versions {sorted(FEATURES_BY_VERSION)} of kind 'linear')",
            refit,
        )
    expected = FEATURES_BY_VERSION[version]
    features = raw.get("features")
    if features != list(expected):
        raise InputError(
            where,
            None,
            f"the model's features differ from those of format version {version} (fitted by another version)",
            "refit with ragaudit fit-fusion",
        )
    candidates = raw.get("candidates", 100)
    if not isinstance(candidates, int) or isinstance(candidates, bool) or candidates < 1:
        raise InputError(where, None, "'candidates' must be a positive integer", refit)
    known = {"format", "format_version", "kind", "features", "weights", "mean", "scale", "candidates"}
    try:
        return FusionModel(
            _numbers(raw, "weights", where),
            _numbers(raw, "mean", where),
            _numbers(raw, "scale", where),
            expected,
            candidates,
            {k: v for k, v in raw.items() if k not in known},
        )
    except ValueError as exc:
        raise InputError(where, None, str(exc), refit) from None


def _unwrap(retriever: Retriever) -> Retriever:
    while getattr(retriever, "transparent", False):  # a wrapper that returns its base's results unchanged
        retriever = retriever.base  # type: ignore[attr-defined]
    return retriever


def dense_encoder(retriever: Retriever) -> TextEncoder:
    """The encoder of the dense component of a hybrid ``retriever`` (see :func:`hybrid_components`):
    the embedding cache wrapping the model when the dense retriever has one."""
    components, _ = hybrid_components(retriever)
    hybrid: Any = _unwrap(retriever)
    encoder: TextEncoder = hybrid.retrievers[components[1]].encoder
    return encoder


def hybrid_components(retriever: Retriever) -> tuple[tuple[int, int], int]:
    """The positions of BM25 and dense in a hybrid ``retriever``, and its depth; an InputError otherwise.

    A wrapper with ``transparent = True`` and a ``base`` (one that returns its base's results unchanged,
    such as ``eval-reranker``'s timer) is looked through."""
    from ragaudit.retrieval.bm25 import BM25Retriever
    from ragaudit.retrieval.dense import DenseRetriever
    from ragaudit.retrieval.fusion import HybridRetriever

    fix = '[retriever] type = "hybrid", components = [{ type = "bm25" }, { type = "dense" }], no [rewrite]'
    retriever = _unwrap(retriever)
    if not isinstance(retriever, HybridRetriever):
        raise InputError(
            "[rerank]",
            None,
            f"the learned stage needs a hybrid first stage of BM25 and dense (got {type(retriever).__name__})",
            fix,
        )
    kinds = [
        "bm25" if isinstance(r, BM25Retriever) else "dense" if isinstance(r, DenseRetriever) else "other"
        for r in retriever.retrievers
    ]
    if sorted(kinds) != ["bm25", "dense"]:
        raise InputError(
            "[rerank]",
            None,
            f"the learned stage needs exactly one bm25 and one dense component (got {kinds})",
            fix,
        )
    return (kinds.index("bm25"), kinds.index("dense")), retriever.depth


class LearnedFusionReranker:
    """Scores a hybrid's candidates with a :class:`FusionModel` (a :class:`~ragaudit.retrieval.rerank.CandidateReranker`)."""

    def __init__(
        self,
        model: FusionModel,
        components: tuple[int, int] = (0, 1),
        depth: int = 100,
        label: str = "",
        encoder: TextEncoder | None = None,
    ) -> None:
        if model.needs_encoder and encoder is None:
            raise ValueError("this fusion model uses embedding features: pass the dense retriever's encoder")
        self.model = model
        self.encoder = encoder
        self.components = components
        self.absent_rank = depth + 1
        self.default_top_n = model.candidates
        """The stage's ``top_n`` when ``[rerank]`` gives none: as many candidates as the model was fitted on."""
        self.name = f"learned fusion ({label or 'in memory'})"

    @property
    def fitted_on(self) -> Mapping[str, Any] | None:
        """What the model was fitted on (dataset, corpus, first stage and, since ``--holdout``, the case
        ids), as ``fit-fusion`` recorded it; a report on those cases is in-sample."""
        fitted = self.model.info.get("fitted_on")
        return fitted if isinstance(fitted, Mapping) else None

    def features(self, query: str, candidates: Sequence[Candidate]) -> npt.NDArray[np.float64]:
        return candidate_features(
            query, candidates, self.components, self.absent_rank, self.encoder, self.model.features
        )

    async def score_candidates(self, query: str, candidates: Sequence[Candidate]) -> list[float]:
        if self.model.needs_encoder:  # embedding (or a cache lookup) off the event loop
            features = await asyncio.to_thread(self.features, query, candidates)
        else:
            features = self.features(query, candidates)
        return [float(s) for s in self.model.score(features)]

    async def score(self, query: str, texts: Sequence[str]) -> list[float]:
        raise TypeError(
            "the learned fusion stage scores first-stage candidates (ranks and scores), not bare texts; "
            "use it through RerankRetriever over a hybrid retriever"
        )


def learned_stage(*, model: str, retriever: Retriever) -> LearnedFusionReranker:
    """``[rerank] type = "learned"``: the model file ``ragaudit fit-fusion`` wrote, over a hybrid stage."""
    if not isinstance(model, str) or not model:
        raise InputError(
            "[rerank]", None, "the learned stage needs model = a fusion model file", 'model = "fusion.json"'
        )
    components, depth = hybrid_components(retriever)
    fitted = load_model(model)
    digest = hashlib.sha256(Path(model).read_bytes()).hexdigest()[:12]
    encoder = dense_encoder(retriever) if fitted.needs_encoder else None
    return LearnedFusionReranker(fitted, components, depth, f"{Path(model).name} sha256:{digest}", encoder)
