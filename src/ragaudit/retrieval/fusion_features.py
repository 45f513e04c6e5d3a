"""Per-candidate features for learned fusion: what a hybrid first stage knows about each candidate.

One row per candidate of one query, columns in :data:`FEATURES` order (a fitted model stores the names
and refuses a different list). ``bm25`` and ``dense`` are the hybrid's two sub-retrievers, found by
position (``components``); their ranks and scores come from ``metadata["fusion"]`` that
:class:`~ragaudit.retrieval.fusion.HybridRetriever` puts on every result.

==================  ==========================================================================
feature             value
==================  ==========================================================================
``bm25_score``      BM25 score min-max normalised over this query's candidates that BM25 returned;
                    0 when BM25 did not return the candidate
``bm25_log_rank``   ``ln(rank)`` in BM25's list; ``ln(absent_rank)`` when absent
``bm25_missing``    1 when BM25 did not return the candidate
``dense_cosine``    the dense retriever's score (cosine); when absent, the lowest cosine among the
                    query's candidates the dense retriever returned
``dense_score``     the cosine min-max normalised like ``bm25_score``
``dense_log_rank``  ``ln(rank)`` in the dense list; ``ln(absent_rank)`` when absent
``dense_missing``   1 when the dense retriever did not return the candidate
``rrf``             ``Σ 60 / (60 + rank)`` over the two lists (RRF with k = 60, scaled to ≤ 2)
``title_overlap``   share of the query's content words (lower-cased, singular, no stop words) in the title
``text_overlap``    share of the query's content words in the chunk text
``entity_overlap``  share of the query's entity-like words (capitalised after the first word, all-caps,
                    or holding a digit: ``Professional``, ``SSO``, ``GPT-4``, ``2024``) found as words
                    in title + text; 0 when the query has none
``log_length``      ``ln(1 + words in the chunk text)``
``superseded``      1 when the document says it is out of date: metadata ``status`` superseded /
                    deprecated / archived / obsolete / retired, a ``superseded_by``, or such a word in
                    the title
``latest_version``  1 unless another candidate of the same ``source_id`` has a higher ``version``
                    (else a later ``effective_date``)
``dense_prf3``      cosine of the candidate's embedding to the (normalised) centroid of the three
                    candidates the dense retriever ranks best: pseudo-relevance feedback (Rocchio)
                    in embedding space
``bm25_prf3``       the same, to the centroid of the three candidates BM25 ranks best
``title_cosine``    cosine of the query's embedding to the candidate's title's; 0 without a title
==================  ==========================================================================

The last three (:data:`VECTOR_FEATURES`) need the dense retriever's encoder: candidates are embedded
as ``title + newline + text`` (what the dense index embedded, so an
:class:`~ragaudit.retrieval.embedding_cache.EmbeddingCache` serves them without running the model),
titles and the query through the same encoder (and so the same cache, keyed by model and backend).
Models fitted by ragaudit before these features existed (:data:`FEATURES_V1`) use the first 14 only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ragaudit.retrieval.embedding_types import TextEncoder
from ragaudit.retrieval.rerank import Candidate
from ragaudit.text.words import QUERY_WORD, WORD, content_words, normalize_text

FEATURES_V1: tuple[str, ...] = (
    "bm25_score",
    "bm25_log_rank",
    "bm25_missing",
    "dense_cosine",
    "dense_score",
    "dense_log_rank",
    "dense_missing",
    "rrf",
    "title_overlap",
    "text_overlap",
    "entity_overlap",
    "log_length",
    "superseded",
    "latest_version",
)
"""The features of format-1 models (ragaudit's first learned fusion), in order."""
VECTOR_FEATURES: tuple[str, ...] = ("dense_prf3", "bm25_prf3", "title_cosine")
"""Features computed from embeddings (they need an encoder)."""
FEATURES: tuple[str, ...] = FEATURES_V1 + VECTOR_FEATURES
"""Column names of :func:`candidate_features`, in order."""
PRF_DEPTH = 3
RRF_K = 60.0
OUTDATED = frozenset({"superseded", "deprecated", "archived", "obsolete", "retired", "outdated"})


def _component(metadata: Mapping[str, Any], position: int) -> tuple[int | None, float | None]:
    fusion = metadata.get("fusion")
    if not isinstance(fusion, Mapping):
        return None, None
    ranks, scores = fusion.get("ranks"), fusion.get("scores")
    rank = ranks[position] if isinstance(ranks, Sequence) and position < len(ranks) else None
    score = scores[position] if isinstance(scores, Sequence) and position < len(scores) else None
    good_rank = rank if isinstance(rank, int) and not isinstance(rank, bool) and rank > 0 else None
    if isinstance(score, (int, float)) and not isinstance(score, bool) and math.isfinite(score):
        return good_rank, float(score)
    return good_rank, None


def _minmax(values: list[float | None]) -> list[float]:
    present = [v for v in values if v is not None]
    if not present:
        return [0.0] * len(values)
    low, high = min(present), max(present)
    return [0.0 if v is None else (1.0 if high == low else (v - low) / (high - low)) for v in values]


def query_entities(query: str) -> set[str]:
    """Entity-like words of ``query``, lower-cased: capitalised (not the first word), all-caps, or with a digit."""
    words = [m.group(0) for m in QUERY_WORD.finditer(query)]
    found = set()
    for i, word in enumerate(words):
        letters = [ch for ch in word if ch.isalpha()]
        caps = bool(letters) and word[0].isupper() and (i > 0 or (len(letters) > 1 and word.isupper()))
        if caps or any(ch.isdigit() for ch in word):
            found.add(normalize_text(word))
    return {w for w in found if w}


def _share(wanted: set[str], have: set[str]) -> float:
    return len(wanted & have) / len(wanted) if wanted else 0.0


def _phrases(phrases: set[str], normalized: str) -> float:
    """Share of ``phrases`` (normalised) that occur in ``normalized`` on word boundaries."""
    if not phrases:
        return 0.0
    padded = f" {normalized} "
    return sum(1 for p in phrases if f" {p} " in padded) / len(phrases)


def _outdated(c: Candidate) -> float:
    status = c.metadata.get("status")
    if isinstance(status, str) and status.lower() in OUTDATED:
        return 1.0
    if c.metadata.get("superseded_by"):
        return 1.0
    return 1.0 if OUTDATED & {w.lower() for w in WORD.findall(c.title)} else 0.0


def _version_key(metadata: Mapping[str, Any]) -> tuple[float, str]:
    version = metadata.get("version")
    number = (
        float(version)
        if isinstance(version, (int, float)) and not isinstance(version, bool) and math.isfinite(version)
        else -math.inf
    )
    date = metadata.get("effective_date")
    return number, date if isinstance(date, str) else ""


def _latest(candidates: Sequence[Candidate]) -> list[float]:
    keys = [_version_key(c.metadata) for c in candidates]
    sources = [
        str(c.metadata.get("source_id") or c.metadata.get("doc_id") or i) for i, c in enumerate(candidates)
    ]
    best: dict[str, tuple[float, str]] = {}
    for source, key in zip(sources, keys, strict=True):
        if source not in best or key > best[source]:
            best[source] = key
    return [1.0 if key >= best[source] else 0.0 for source, key in zip(sources, keys, strict=True)]


def _unit(matrix: npt.NDArray[Any]) -> npt.NDArray[np.float64]:
    rows = np.asarray(matrix, dtype=np.float64)
    norms = np.linalg.norm(rows, axis=-1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.asarray(rows / norms, dtype=np.float64)


def _feedback(vectors: npt.NDArray[np.float64], ranks: list[int | None]) -> npt.NDArray[np.float64]:
    """Cosine of every row of ``vectors`` to the centroid of the ``PRF_DEPTH`` rows ranked best."""
    ranked = sorted((r, i) for i, r in enumerate(ranks) if r is not None)[:PRF_DEPTH]
    if not ranked:
        return np.zeros(len(vectors))
    centroid = _unit(vectors[[i for _, i in ranked]].mean(axis=0))
    return np.asarray(vectors @ centroid, dtype=np.float64)


def vector_features(
    query: str,
    candidates: Sequence[Candidate],
    encoder: TextEncoder,
    bm25_ranks: list[int | None],
    dense_ranks: list[int | None],
) -> npt.NDArray[np.float64]:
    """The ``len(candidates) x len(VECTOR_FEATURES)`` columns that need embeddings."""
    n = len(candidates)
    titles = sorted({c.title for c in candidates if c.title.strip()})
    vectors = _unit(encoder.encode([query, *(c.text for c in candidates), *titles]))
    q, docs = vectors[0], vectors[1 : n + 1]
    title_cos = dict(zip(titles, (vectors[n + 1 :] @ q).tolist(), strict=True))
    out = np.zeros((n, len(VECTOR_FEATURES)), dtype=np.float64)
    out[:, 0] = _feedback(docs, dense_ranks)
    out[:, 1] = _feedback(docs, bm25_ranks)
    out[:, 2] = [title_cos.get(c.title, 0.0) for c in candidates]
    return out


def candidate_features(
    query: str,
    candidates: Sequence[Candidate],
    components: tuple[int, int] = (0, 1),
    absent_rank: int = 101,
    encoder: TextEncoder | None = None,
    names: Sequence[str] = FEATURES,
) -> npt.NDArray[np.float64]:
    """The ``len(candidates) x len(names)`` feature matrix of one query's candidates (columns in
    ``names`` order, each a name of :data:`FEATURES`).

    ``components`` gives the positions of BM25 and the dense retriever in the hybrid's ``fusion``
    metadata; ``absent_rank`` stands for "not in that list" (the hybrid's depth + 1). ``encoder`` (the
    dense retriever's) is needed only when ``names`` holds one of :data:`VECTOR_FEATURES`.
    """
    unknown = [name for name in names if name not in FEATURES]
    if unknown:
        raise ValueError(f"unknown fusion feature(s) {unknown}; known: {list(FEATURES)}")
    wants_vectors = any(name in VECTOR_FEATURES for name in names)
    if wants_vectors and encoder is None:
        raise ValueError(f"the features {list(VECTOR_FEATURES)} need the dense retriever's encoder")
    n = len(candidates)
    full = np.zeros((n, len(FEATURES)), dtype=np.float64)
    if n == 0:
        return full[:, [FEATURES.index(name) for name in names]]
    bm25 = [_component(c.metadata, components[0]) for c in candidates]
    dense = [_component(c.metadata, components[1]) for c in candidates]
    terms = content_words(query)
    entities = query_entities(query)
    present_cosines = [s for _, s in dense if s is not None]
    floor = min(present_cosines) if present_cosines else 0.0
    bm25_norm = _minmax([s for _, s in bm25])
    dense_norm = _minmax([s for _, s in dense])
    latest = _latest(candidates)
    for i, c in enumerate(candidates):
        (b_rank, _), (d_rank, d_score) = bm25[i], dense[i]
        rrf = sum(RRF_K / (RRF_K + r) for r in (b_rank, d_rank) if r is not None)
        text_words = [w.lower() for w in WORD.findall(c.content)]
        full[i, : len(FEATURES_V1)] = (
            bm25_norm[i],
            math.log(b_rank or absent_rank),
            1.0 if b_rank is None else 0.0,
            floor if d_score is None else d_score,
            dense_norm[i],
            math.log(d_rank or absent_rank),
            1.0 if d_rank is None else 0.0,
            rrf,
            _share(terms, content_words(c.title)),
            _share(terms, content_words(c.content)),
            _phrases(entities, normalize_text(f"{c.title} {c.content}")),
            math.log1p(len(text_words)),
            _outdated(c),
            latest[i],
        )
    if wants_vectors and encoder is not None:
        full[:, len(FEATURES_V1) :] = vector_features(
            query, candidates, encoder, [r for r, _ in bm25], [r for r, _ in dense]
        )
    return full[:, [FEATURES.index(name) for name in names]]
