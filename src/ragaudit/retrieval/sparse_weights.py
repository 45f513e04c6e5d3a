"""BM25-style sparse vectors for a vector database that applies IDF itself (Qdrant ``modifier=IDF``).

BM25 scores a document ``d`` for a query ``q`` as::

    score(q, d) = sum over terms t in q of  idf(t) * tf(t, d) * (k1 + 1) / (tf(t, d) + k1 * (1 - b + b * |d| / avgdl))

The right-hand factor depends only on the document, so it is computed here, once, as the document's
sparse vector weight for ``t``. The database multiplies by ``idf(t)`` at query time (Qdrant uses
Lucene's ``ln(1 + (N - df + 0.5) / (df + 0.5))``, the same as bm25s's default), and a query vector
is binary term presence (weight 1 per distinct query term), so the inner product is the BM25 score.

``scheme="tf"`` gives plain term frequencies (no saturation, no length normalisation) for comparison.

Terms come from the ``bm25`` retriever's own analyzer with its defaults (bm25s's tokenizer, English
stopwords, PyStemmer's English stemmer), so both see the same terms. (One difference: ``bm25``
counts a query term repeated in the query once per repetition; here a query term counts once.)

A term's sparse index is the first 4 bytes of its blake2b hash (Qdrant indexes are unsigned 32-bit),
so no vocabulary needs storing and any process maps a term to the same index; two terms sharing an
index (about one pair in a 100,000-term vocabulary) are scored as one term.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

SparseScheme = Literal["bm25", "tf"]


@dataclass(frozen=True)
class SparseVec:
    """A sparse vector: strictly increasing ``indices`` and their ``values``."""

    indices: tuple[int, ...]
    values: tuple[float, ...]

    def __len__(self) -> int:
        return len(self.indices)


@lru_cache(maxsize=1)
def _analyzer() -> Any:
    from ragaudit.retrieval.bm25 import Analyzer, BM25Params

    return Analyzer(BM25Params())


def analyze(texts: Sequence[str]) -> list[list[str]]:
    """Terms of each text, exactly as the ``bm25`` retriever analyses them (its default settings)."""
    terms: list[list[str]] = _analyzer()(texts)
    return terms


@lru_cache(maxsize=1 << 18)
def term_index(term: str) -> int:
    """The sparse index of ``term``: an unsigned 32-bit hash, the same in every process."""
    return int.from_bytes(hashlib.blake2b(term.encode("utf-8"), digest_size=4).digest(), "big")


def _counts(terms: Sequence[str]) -> Counter[int]:
    return Counter(term_index(t) for t in terms)


def _vector(weights: dict[int, float]) -> SparseVec:
    indices = tuple(sorted(weights))
    return SparseVec(indices, tuple(weights[i] for i in indices))


@dataclass(frozen=True)
class SparseEncoder:
    """Turns documents and queries into sparse vectors (see the module docstring for the formula).

    ``k1`` and ``b`` default to the ``bm25`` retriever's (bm25s's 1.5 and 0.75).
    """

    scheme: SparseScheme = "bm25"
    k1: float = 1.5
    b: float = 0.75

    def __post_init__(self) -> None:
        if self.scheme not in ("bm25", "tf"):
            raise ValueError(f"unknown sparse scheme {self.scheme!r}; use 'bm25' or 'tf'")
        if self.k1 < 0 or not 0 <= self.b <= 1:
            raise ValueError(f"BM25 needs k1 >= 0 and 0 <= b <= 1 (got k1={self.k1}, b={self.b})")

    def documents(self, texts: Sequence[str]) -> list[SparseVec]:
        """Document vectors; ``avgdl`` is the mean length (in terms) of ``texts``, so pass one tenant's
        documents together: each tenant is its own BM25 collection."""
        analyzed = analyze(texts)
        avgdl = sum(len(t) for t in analyzed) / len(analyzed) if analyzed else 0.0
        return [self.document_vector(terms, avgdl) for terms in analyzed]

    def document_vector(self, terms: Sequence[str], avgdl: float) -> SparseVec:
        """One document's vector from its terms and the collection's mean document length."""
        counts = _counts(terms)
        if self.scheme == "tf":
            return _vector({i: float(tf) for i, tf in counts.items()})
        ratio = len(terms) / avgdl if avgdl > 0 else 1.0
        norm = self.k1 * (1.0 - self.b + self.b * ratio)
        return _vector({i: tf * (self.k1 + 1.0) / (tf + norm) for i, tf in counts.items()})

    def queries(self, texts: Sequence[str]) -> list[SparseVec]:
        """Query vectors: weight 1 for each distinct term."""
        return [_vector(dict.fromkeys(_counts(terms), 1.0)) for terms in analyze(texts)]
