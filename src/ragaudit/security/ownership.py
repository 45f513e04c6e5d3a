"""Who owns a returned chunk, decided from the corpus, never from the label the retriever attaches.

A retriever's ``tenant_id`` on a chunk is a claim. A service that relabels another tenant's chunk as
the caller's would pass any check that trusts the claim, so the audit looks the chunk up itself:

1. **by id**: a document id of the corpus, a chunk id the pipeline made (``{doc_id}#{n}``), or any id
   registered with the index's chunks. The corpus loader guarantees ids are unique across tenants,
   so an id names exactly one owner.
2. **by content**, whenever the chunk carries text: the text is normalised (Unicode NFKC, case
   folded, every run of non-alphanumeric characters turned into one space) and cut into word
   shingles of :data:`SHINGLE_WORDS` words. A document *contains* the chunk when

       containment(chunk, doc) = |shingles(chunk) ∩ shingles(doc)| / |shingles(chunk)|

   (text shorter than a shingle must appear verbatim, as a normalised substring). The content owners
   are the tenants of the documents whose containment is at least :data:`MIN_CONTAINMENT` and within
   :data:`OWNER_MARGIN` of the best one: a chunk copied from one tenant's document belongs to that
   tenant even when another tenant's document, written from the same template, shares most of it.
   This catches a foreign chunk returned under an unknown or made-up id, and foreign text returned
   under one of the caller's own ids.
3. **by canary**: a planted secret (see :mod:`ragaudit.security.canaries`) found in the text names
   its tenant as an owner, whatever the id and the rest of the text say.

A chunk is **foreign** to a caller (a leak) when its id names another tenant, or its content is
contained only in other tenants' documents, or it holds another tenant's canary. Text that several
tenants share verbatim (boilerplate) is not a leak for any of them. A chunk neither id, content nor
canary attributes is **unattributed**: it cannot be shown to be a leak, and the audit lists it apart.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ragaudit.corpus.model import Chunk, Document
from ragaudit.security.canaries import Canary
from ragaudit.text.words import normalize_text, shingles

SHINGLE_WORDS = 5
"""Words per content shingle."""
MIN_CONTAINMENT = 0.5
"""Share of a chunk's shingles a document must hold to count as containing the chunk."""
OWNER_MARGIN = 0.1
"""Only documents within this much of the best containment name content owners."""


def base_document_id(chunk_id: str) -> str | None:
    """``D`` for a chunker's chunk id ``D#n`` (``n`` decimal), else ``None``."""
    base, sep, tail = chunk_id.rpartition("#")
    return base if sep and base and tail.isdigit() else None


@dataclass(frozen=True)
class Attribution:
    """What the corpus says about one returned chunk."""

    id_owner: str | None
    """The tenant whose document or chunk the id names; ``None`` for an id the corpus does not know."""
    content_owners: frozenset[str]
    """Tenants with a document containing the chunk's text (empty: no text, or no document holds it)."""
    doc_id: str | None
    """The document the id names, else the best-containing document."""
    containment: float | None
    """The best containment of the chunk's text in a document, when it was measured."""
    canaries: tuple[Canary, ...] = ()
    """Planted secrets found in the chunk's text."""

    @property
    def owners(self) -> frozenset[str]:
        """Every tenant the corpus links the chunk to (id, content or canary)."""
        found = set(self.content_owners) | {c.tenant_id for c in self.canaries}
        if self.id_owner is not None:
            found.add(self.id_owner)
        return frozenset(found)

    @property
    def attributed(self) -> bool:
        return bool(self.owners)

    @property
    def method(self) -> str:
        """How ownership was decided: ``id``, ``content``, ``id+content``, ``canary`` (combined) or ``none``."""
        parts = [name for name, hit in (("id", self.id_owner), ("content", self.content_owners)) if hit]
        if self.canaries:
            parts.append("canary")
        return "+".join(parts) or "none"

    def foreign_owners(self, caller: str | None) -> frozenset[str]:
        """The tenants other than ``caller`` that make this chunk a leak for ``caller`` (empty: no leak)."""
        found: set[str] = set()
        if self.id_owner is not None and self.id_owner != caller:
            found.add(self.id_owner)
        if self.content_owners and caller not in self.content_owners:
            found |= self.content_owners
        found |= {c.tenant_id for c in self.canaries if c.tenant_id != caller}
        return frozenset(found)

    def is_leak(self, caller: str | None) -> bool:
        return bool(self.foreign_owners(caller))


@dataclass
class OwnershipIndex:
    """Chunk ownership over a corpus (see the module docstring). Build with :meth:`build`."""

    documents: Mapping[str, Document]
    chunk_docs: Mapping[str, str]
    canaries: tuple[Canary, ...] = ()
    min_containment: float = MIN_CONTAINMENT
    _words: dict[str, list[str]] = field(default_factory=dict, repr=False)
    _texts: dict[str, str] = field(default_factory=dict, repr=False)
    _by_shingle: dict[tuple[str, ...], list[str]] = field(default_factory=dict, repr=False)
    _by_word: dict[str, set[str]] = field(default_factory=dict, repr=False)
    _memo: dict[tuple[str, str | None], Attribution] = field(default_factory=dict, repr=False)

    @classmethod
    def build(
        cls,
        documents: Iterable[Document],
        chunks: Iterable[Chunk] = (),
        canaries: Iterable[Canary] = (),
        min_containment: float = MIN_CONTAINMENT,
    ) -> OwnershipIndex:
        """Index ``documents`` (title and text), the ids of ``chunks`` made from them, and ``canaries``."""
        docs = {d.doc_id: d for d in documents}
        index = cls(docs, {c.chunk_id: c.doc_id for c in chunks}, tuple(canaries), min_containment)
        by_shingle: dict[tuple[str, ...], list[str]] = defaultdict(list)
        by_word: dict[str, set[str]] = defaultdict(set)
        for doc in docs.values():
            text = normalize_text(f"{doc.title}\n{doc.text}")
            words = text.split()
            index._texts[doc.doc_id] = text
            index._words[doc.doc_id] = words
            for shingle in shingles(words, SHINGLE_WORDS):
                by_shingle[shingle].append(doc.doc_id)
            for word in words:
                by_word[word].add(doc.doc_id)
        index._by_shingle = dict(by_shingle)
        index._by_word = dict(by_word)
        return index

    @property
    def tenants(self) -> tuple[str, ...]:
        return tuple(sorted({d.tenant_id for d in self.documents.values()}))

    def document_of(self, chunk_id: str) -> Document | None:
        """The document an id names: a document id, a registered chunk id, or ``D#n`` of document ``D``."""
        doc_id = self.chunk_docs.get(chunk_id, chunk_id)
        doc = self.documents.get(doc_id)
        if doc is None:
            base = base_document_id(chunk_id)
            doc = self.documents.get(base) if base is not None else None
        return doc

    def content_match(self, content: str) -> tuple[frozenset[str], str | None, float | None]:
        """``(content owners, best document, best containment)`` of a text; ``(∅, None, None)`` for no text."""
        words = normalize_text(content).split()
        if not words:
            return frozenset(), None, None
        scores: dict[str, float] = {}
        if len(words) < SHINGLE_WORDS:
            candidates = set.intersection(*(self._by_word.get(w, set()) for w in set(words)))
            phrase = " ".join(words)
            scores = {d: 1.0 for d in candidates if f" {phrase} " in f" {self._texts[d]} "}
        else:
            own = shingles(words, SHINGLE_WORDS)
            counts: dict[str, int] = defaultdict(int)
            for shingle in own:
                for doc_id in set(self._by_shingle.get(shingle, ())):
                    counts[doc_id] += 1
            scores = {d: n / len(own) for d, n in counts.items()}
        if not scores:
            return frozenset(), None, 0.0
        best = max(sorted(scores), key=lambda d: scores[d])
        floor = max(self.min_containment, scores[best] - OWNER_MARGIN)
        owners = frozenset(self.documents[d].tenant_id for d, s in scores.items() if s >= floor)
        return owners, best, scores[best]

    def canaries_in(self, content: str) -> tuple[Canary, ...]:
        text = f" {normalize_text(content)} "
        return tuple(c for c in self.canaries if f" {normalize_text(c.secret)} " in text)

    def attribute(self, chunk_id: str, content: str | None = None) -> Attribution:
        """Decide who owns a returned chunk from its id and, when given, its text (memoised)."""
        key = (chunk_id, content)
        found = self._memo.get(key)
        if found is not None:
            return found
        doc = self.document_of(chunk_id)
        owners: frozenset[str] = frozenset()
        best: str | None = None
        containment: float | None = None
        canaries: tuple[Canary, ...] = ()
        if content:
            owners, best, containment = self.content_match(content)
            canaries = self.canaries_in(content)
        found = Attribution(
            doc.tenant_id if doc is not None else None,
            owners,
            doc.doc_id if doc is not None else best,
            containment,
            canaries,
        )
        self._memo[key] = found
        return found
