"""Deliberately leaky retrievers whose leak is in *what* they return, not in which chunk ids: the
attribution half of the audit (:mod:`ragaudit.security.ownership`) exists to catch them.

**Never use these to serve anything.** Like :mod:`ragaudit.security.leaky` (which lists them in
:data:`~ragaudit.security.leaky.LEAKY`), each is built from real bm25s indexes and is otherwise the
honest tenant-partitioned retriever:

- :class:`FieldLeakRetriever`: ids and content are the caller's own, but the enrichment step (title,
  snippet, highlight, related documents in ``metadata``, source id) is joined by rank against the
  *unfiltered* ranking, so another tenant's title or text rides along beside the caller's chunk;
- :class:`TemplateDedupRetriever`: index-time near-duplicate collapse across tenants: documents every
  tenant has in a templated form (same template, other names and numbers) are stored once, so the
  caller gets the first tenant's variant under its own chunk id and label;
- :class:`EntityRoutingRetriever`: a router sends a question that names an entity (a capitalised
  name or a code) used by one tenant only to that tenant's partition, whoever asks;
- :class:`OpaqueOutputRetriever`: the shared index unfiltered, answered with opaque ids and each hit's
  term vector (its lower-cased, stop-word-free, stemmed terms in alphabetical order): nothing can
  attribute it, so an audit that counted only what it could attribute would call it clean.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from ragaudit.corpus.model import Chunk
from ragaudit.retrieval.protocol import RetrievedChunk
from ragaudit.security.leaky_base import Partitioned as _Partitioned
from ragaudit.text.stopwords import STOPWORDS
from ragaudit.text.words import lemma, normalize_text, shingles

LEAKY_FIELDS = ("title", "snippet", "highlight", "metadata", "source_id")
"""The fields :class:`FieldLeakRetriever` can leak through."""
_ENTITY = re.compile(r"\b(?:[A-Z][A-Za-z]+|[A-Z0-9]+-[A-Z0-9-]+)\b")


def _title(hit: RetrievedChunk) -> str:
    title = (hit.get("metadata") or {}).get("title")
    return title if isinstance(title, str) else ""


def _highlight(query: str, text: str) -> list[str]:
    """Fragments of ``text`` around the query's words, each word of the query wrapped in ``<em>``."""
    wanted = set(normalize_text(query).split()) - STOPWORDS
    words = text.split()
    fragments = []
    for i, word in enumerate(words):
        if normalize_text(word) in wanted:
            window = words[max(0, i - 4) : i + 6]
            fragments.append(" ".join(f"<em>{w}</em>" if normalize_text(w) in wanted else w for w in window))
        if len(fragments) == 3:
            break
    return fragments or [" ".join(words[:12])]


class FieldLeakRetriever(_Partitioned):
    """The caller's own chunks, enriched by rank from the unfiltered ranking through ``field``:
    ``title``, ``snippet``, ``highlight``, ``metadata`` (``related`` documents) or ``source_id``."""

    def __init__(self, chunks: Sequence[Chunk], field: str = "title") -> None:
        if field not in LEAKY_FIELDS:
            raise ValueError(f"unknown field {field!r}; one of: {', '.join(LEAKY_FIELDS)}")
        super().__init__(chunks)
        self.field = field

    def answer(self, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        own = self.own(tenant_id, query, top_k)
        everyone = self.shared.search(query, top_k)  # the bug: enrichment reads the unfiltered ranking
        out: list[RetrievedChunk] = []
        for hit, other in zip(own, everyone, strict=False):
            enriched: dict[str, Any] = dict(hit)
            metadata = dict(hit.get("metadata") or {})
            metadata.pop("title", None)
            enriched["metadata"] = metadata
            if self.field == "title":
                enriched["title"] = _title(other)
            elif self.field == "snippet":
                enriched["snippet"] = " ".join(other.get("content", "").split()[:30])
            elif self.field == "highlight":
                enriched["highlight"] = _highlight(query, other.get("content", ""))
            elif self.field == "metadata":
                related = {"doc_id": (other.get("metadata") or {}).get("doc_id"), "title": _title(other)}
                metadata["related"] = [related]
            else:
                enriched["source_id"] = (other.get("metadata") or {}).get("source_id") or other["source_id"]
            out.append(enriched)  # type: ignore[arg-type]
        return out


def _near_duplicates(chunks: Sequence[Chunk], threshold: float) -> dict[str, Chunk]:
    """Each chunk's canonical copy: the first chunk (corpus order) of another tenant whose 5-word
    shingles overlap it by at least ``threshold`` (Jaccard), else itself."""
    sets = [shingles(normalize_text(c.text).split(), 5) for c in chunks]
    by_shingle: dict[tuple[str, ...], list[int]] = defaultdict(list)
    for position, found in enumerate(sets):
        for shingle in found:
            by_shingle[shingle].append(position)
    canonical: dict[str, Chunk] = {}
    for position, chunk in enumerate(chunks):
        shared: dict[int, int] = defaultdict(int)
        for shingle in sets[position]:
            for other in by_shingle[shingle]:
                shared[other] += 1
        first = chunk
        for other in sorted(shared):
            union = len(sets[position]) + len(sets[other]) - shared[other]
            if other < position and union and shared[other] / union >= threshold:
                first = chunks[other]
                break
        canonical[chunk.chunk_id] = first
    return canonical


class TemplateDedupRetriever(_Partitioned):
    """Tenant-partitioned BM25 whose stored text was deduplicated across tenants at index time: a
    templated document is stored once (its first tenant's variant) and served to every tenant under
    the tenant's own chunk id and label."""

    def __init__(self, chunks: Sequence[Chunk], threshold: float = 0.6) -> None:
        super().__init__(chunks)
        self.canonical = _near_duplicates(chunks, threshold)

    def answer(self, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        out: list[RetrievedChunk] = []
        for hit in self.own(tenant_id, query, top_k):
            stored = self.canonical[hit["chunk_id"]]
            out.append({**hit, "content": stored.text})  # the bug: one stored copy for every tenant
        return out


class EntityRoutingRetriever(_Partitioned):
    """A question naming an entity (a capitalised name or a code) that only one tenant's chunks use is
    routed to that tenant's partition, whoever asks."""

    def __init__(self, chunks: Sequence[Chunk]) -> None:
        super().__init__(chunks)
        users: dict[str, set[str]] = defaultdict(set)
        for chunk in chunks:
            for name in _ENTITY.findall(f"{chunk.title}\n{chunk.text}"):
                users[name].add(chunk.tenant_id)
        self.entities = {name: next(iter(t)) for name, t in users.items() if len(t) == 1}

    def answer(self, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        named = sorted({self.entities[n] for n in _ENTITY.findall(query) if n in self.entities})
        if len(named) == 1:  # the bug: the router trusts the entity over the caller's tenant
            return self.own(named[0], query, top_k)
        return self.own(tenant_id, query, top_k)


def analysed(text: str) -> str:
    """What a search engine's analyser keeps of ``text``: lower-cased stems, stop words dropped."""
    return " ".join(lemma(w) for w in normalize_text(text).split() if w not in STOPWORDS)


def term_vector(text: str) -> str:
    """The distinct analysed terms of ``text`` in alphabetical order, as a term-vector API returns them:
    no run of the document's words survives, so nothing in it can be attributed."""
    return " ".join(sorted(set(analysed(text).split())))


class OpaqueOutputRetriever(_Partitioned):
    """The shared index, unfiltered, answered with opaque ids and each hit's term vector (nothing
    attributable: analysed text that kept runs of a document's words would be attributed by them)."""

    def answer(self, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        out: list[RetrievedChunk] = []
        for hit in self.shared.search(query, top_k):
            digest = hashlib.sha256(hit["chunk_id"].encode()).hexdigest()[:16]
            out.append(
                {
                    "chunk_id": f"vec-{digest}",
                    "score": hit["score"],
                    "content": term_vector(hit.get("content", "")),
                    "source_id": f"src-{digest[:8]}",
                    "tenant_id": tenant_id,
                }
            )
        return out
