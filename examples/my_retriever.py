"""A Python retriever of your own, for ``ragaudit eval --retriever examples.my_retriever:make_retriever``
(run from the project folder: modules in the current folder are found without PYTHONPATH).

Anything with ``async search(*, tenant_id, query, top_k)`` returning a ranked list of chunks works; this
one counts shared words between the query and each document of the bundled demo knowledge base, and
never looks outside the caller's tenant.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

CORPUS = Path(__file__).resolve().parent / "data" / "kb" / "corpus.jsonl"


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


class WordOverlapRetriever:
    def __init__(self, corpus: Path = CORPUS) -> None:
        lines = corpus.read_text(encoding="utf-8").splitlines()
        self.documents = [json.loads(line) for line in lines if line.strip()]

    async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[dict[str, object]]:
        asked = _words(query)
        scored = [
            (len(asked & _words(f"{d['title']} {d['text']}")), d["doc_id"], d)
            for d in self.documents
            if d["tenant_id"] == tenant_id  # the tenant filter, before ranking
        ]
        scored.sort(key=lambda item: (-item[0], item[1]))
        return [
            {"chunk_id": doc_id, "score": float(score), "content": d["text"], "tenant_id": tenant_id}
            for score, doc_id, d in scored[:top_k]
        ]


def make_retriever() -> WordOverlapRetriever:
    return WordOverlapRetriever()
