"""Retrieval services that return **rewritten** text (summaries), one honest and one leaky: the proofs
of semantic attribution (:mod:`ragaudit.security.semantic_attribution`, ``--attribute semantic``).

**Never use these to serve anything.** Both summarise what they return (the content words of the
document, stop words dropped, in short runs: no 5-word shingle of the source survives, so exact
attribution finds the text in no document) under opaque ids, labelled with the caller's tenant:

- :class:`SummarisingRetriever` ``(foreign=False)``: the caller's own documents (tenant-partitioned
  BM25), summarised: honest. Exact attribution alone says *not verified*; semantic attribution places
  every summary at the caller's own document, so the audit can pass;
- :class:`SummarisingRetriever` ``(foreign=True)``: the shared index, unfiltered, summarised: other
  tenants' documents in other words. Exact attribution alone says *not verified* (never clean);
  semantic attribution catches it as a leak (``attributed_by: semantic``).

On the demo knowledge base the summary of each of the 90 documents is nearest to its own document,
with a cosine lead over the nearest document of another tenant of at least 0.070 (median 0.335).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from ragaudit.corpus.model import Chunk
from ragaudit.retrieval.protocol import RetrievedChunk
from ragaudit.security.leaky_base import Partitioned as _Partitioned
from ragaudit.text.stopwords import STOPWORDS

SUMMARY_WORDS = 48
"""Content words a summary keeps."""
_WORD = re.compile(r"[A-Za-z0-9$%.-]+")


def summarise(text: str, words: int = SUMMARY_WORDS) -> str:
    """A keyword summary of ``text``: its first ``words`` content words, in runs of 4 (deterministic)."""
    kept = [w for w in _WORD.findall(text) if w.lower() not in STOPWORDS][:words]
    return "Summary: " + "; ".join(" ".join(kept[i : i + 4]) for i in range(0, len(kept), 4))


class SummarisingRetriever(_Partitioned):
    """Summaries of the caller's own documents (``foreign=False``), or of whatever the unfiltered
    shared index ranks (``foreign=True``: the leak), under opaque ids, labelled as the caller's."""

    def __init__(self, chunks: Sequence[Chunk], foreign: bool = False) -> None:
        super().__init__(chunks)
        self.foreign = foreign

    def answer(self, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        hits = self.shared.search(query, top_k) if self.foreign else self.own(tenant_id, query, top_k)
        return [
            {
                "chunk_id": "sum-" + hashlib.sha256(hit["chunk_id"].encode()).hexdigest()[:12],
                "score": float(hit.get("score", 0.0)),
                "tenant_id": tenant_id,
                "content": summarise(hit.get("content", "")),
                "source_id": "",
            }
            for hit in hits
        ]
