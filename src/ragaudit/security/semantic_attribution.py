"""Semantic attribution: who owns rewritten text (a summary, a paraphrased abstract) that exact
attribution cannot place (``--attribute semantic``).

Exact attribution (:mod:`ragaudit.security.ownership`) finds a returned text in the corpus by its
5-word shingles. Text a service rewrites (a summary of a document, an abstract in other words) shares
too few shingles with its source, so it is *unattributed* and the audit says *not verified*. Semantic
attribution places such text with the project's dense embedder (all-MiniLM-L6-v2, imported only when
asked for):

1. every corpus document is embedded in passages of at most :data:`PASSAGE_WORDS` words (the title
   with each passage); a document's similarity to a text is its best passage's cosine;
2. the text goes to its **nearest document**, and so to that document's tenant, only when

       cosine(text, nearest document) >= min_cosine                      (default 0.5)
       cosine(text, nearest document) - cosine(text, nearest document of any other tenant) >= margin
                                                                          (default 0.05)

   so a text that could as well be another tenant's stays unattributed (not verified), never guessed.

It is used only for chunks exact attribution left unattributed, and reported apart from it
("semantic: N chunks, margin >= 0.05"): a rewritten text of the caller's own document then counts as
checked, one of another tenant's document is a leak (``attributed_by: semantic``). What it cannot do:
tell apart tenants whose documents say the same thing in other words (the margin keeps such text
unattributed), or place text that is no rewrite of any document (generated answers).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragaudit.corpus.model import Document

PASSAGE_WORDS = 120
"""Longest passage of a document that is embedded on its own (the model reads about 256 tokens)."""
DEFAULT_MARGIN = 0.05
"""Cosine lead of the nearest document over the nearest document of another tenant."""
DEFAULT_MIN_COSINE = 0.5
"""Least cosine between a text and the document it is given to."""


@dataclass(frozen=True)
class SemanticMatch:
    """The document a rewritten text was given to."""

    doc_id: str
    tenant_id: str
    cosine: float
    margin: float
    """Its lead over the nearest document of another tenant (``inf`` with one tenant)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "doc_id": self.doc_id,
            "tenant_id": self.tenant_id,
            "cosine": round(self.cosine, 4),
            "margin": round(self.margin, 4) if self.margin != float("inf") else None,
        }


def passages(document: Document, words: int = PASSAGE_WORDS) -> list[str]:
    """The pieces of ``document`` embedded on their own: its title with each run of ``words`` words."""
    tokens = document.text.split()
    pieces = [" ".join(tokens[i : i + words]) for i in range(0, len(tokens), words)] or [""]
    return [f"{document.title}\n{piece}".strip() for piece in pieces]


@dataclass
class SemanticAttributor:
    """Places rewritten text in the corpus by embedding similarity (see the module docstring)."""

    documents: Sequence[Document]
    margin: float = DEFAULT_MARGIN
    min_cosine: float = DEFAULT_MIN_COSINE
    encoder: Any = None
    """Anything with ``encode(texts) -> (n, dim)`` unit rows; default: the project's dense embedder."""
    _matrix: Any = field(default=None, repr=False)
    _rows: list[int] = field(default_factory=list, repr=False)
    _memo: dict[str, SemanticMatch | None] = field(default_factory=dict, repr=False)

    @classmethod
    def build(
        cls,
        documents: Iterable[Document],
        margin: float = DEFAULT_MARGIN,
        min_cosine: float = DEFAULT_MIN_COSINE,
        encoder: Any = None,
    ) -> SemanticAttributor:
        """Embed every document's passages (the embedder is imported here, never before)."""
        if not 0.0 <= margin <= 2.0:
            raise ValueError(f"the semantic margin must be between 0 and 2 (got {margin})")
        docs = list(documents)
        if encoder is None:
            from ragaudit.retrieval.embedder import Embedder

            encoder = Embedder()
        found = cls(docs, margin, min_cosine, encoder)
        texts: list[str] = []
        for row, document in enumerate(docs):
            pieces = passages(document)
            texts += pieces
            found._rows += [row] * len(pieces)
        found._matrix = encoder.encode(texts) if texts else None
        return found

    def settings(self) -> dict[str, Any]:
        return {"margin": self.margin, "min_cosine": self.min_cosine, "passage_words": PASSAGE_WORDS}

    def match(self, text: str) -> SemanticMatch | None:
        """The document ``text`` is given to, or ``None`` when none is near enough or another tenant's
        is as near (memoised)."""
        if text in self._memo:
            return self._memo[text]
        found = self._match(text)
        self._memo[text] = found
        return found

    def _match(self, text: str) -> SemanticMatch | None:
        import numpy as np

        if self._matrix is None or not text.strip():
            return None
        scores = self._matrix @ self.encoder.encode([text])[0]
        best: dict[int, float] = {}
        for position, row in enumerate(self._rows):
            score = float(scores[position])
            if score > best.get(row, -np.inf):
                best[row] = score
        nearest = max(sorted(best), key=lambda r: best[r])
        owner = self.documents[nearest].tenant_id
        others = [s for r, s in best.items() if self.documents[r].tenant_id != owner]
        lead = best[nearest] - max(others) if others else float("inf")
        if best[nearest] < self.min_cosine or lead < self.margin:
            return None
        return SemanticMatch(self.documents[nearest].doc_id, owner, best[nearest], lead)


@dataclass(frozen=True)
class SemanticOwner:
    """What exact attribution says of a returned chunk, completed by semantic attribution when exact
    attribution found its text in no document (:class:`ragaudit.runner.tenancy.ChunkOwner`)."""

    exact: Any
    placed: SemanticMatch | None

    @property
    def via(self) -> str:
        """How the owner was established, for the run's counts: ``corpus`` or ``semantic``."""
        return "semantic" if self.placed is not None else "corpus"

    @property
    def attributed(self) -> bool:
        return bool(self.exact.attributed) or self.placed is not None

    @property
    def text_unfound(self) -> bool:
        return bool(self.exact.text_unfound) and self.placed is None

    def foreign_owners(self, caller: str) -> frozenset[str]:
        found = frozenset(self.exact.foreign_owners(caller))
        if self.placed is not None and self.placed.tenant_id != caller:
            found |= {self.placed.tenant_id}
        return found


@dataclass
class SemanticOwnership:
    """An exact ownership index (:class:`ragaudit.security.ownership.OwnershipIndex`) whose unfound
    texts are placed by a :class:`SemanticAttributor` (``ragaudit eval --attribute semantic``)."""

    index: Any
    semantic: SemanticAttributor

    def attribute_item(self, item: Any) -> SemanticOwner:
        exact = self.index.attribute_item(item)
        placed = None
        if not exact.attributed and exact.text_unfound and item.content:
            placed = self.semantic.match(item.content)
        return SemanticOwner(exact, placed)
