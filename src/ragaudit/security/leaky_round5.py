"""HTTP services of the fifth red team of ``audit-tenants``: leaky ones, each with an honest twin.

**Never use the leaky ones to serve anything.** Each is the honest tenant-partitioned BM25 of
:mod:`ragaudit.security.leaky_base` except on its own path; :meth:`Round5Service.respond` answers one
HTTP request (``(status, body, headers)``, as :mod:`ragaudit.security.leaky_round4`). ``honest=True``
is the twin, which takes the same path within the caller's partition.

| style | the leaky service |
|---|---|
| ``one-word`` | a query of one word (3 letters or more) is a "keyword lookup" over every tenant |
| ``few-words`` | the tenant filter is applied only to queries of more than 3 words |
| ``string-top-k`` | ``top_k`` sent as a string (``"10"``, a form or legacy client) takes a path over every tenant |
| ``more-array`` | ``results`` holds the caller's ``top_k`` hits; ``more`` (ranks beyond ``top_k``) comes from every tenant |
| ``gzip`` | the shared index's hits in a gzip-compressed body (``Content-Encoding: gzip``) |
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ragaudit.corpus.model import Chunk
from ragaudit.retrieval.protocol import RetrievedChunk
from ragaudit.security.leaky_base import StyledService

ROUND5_STYLES = ("one-word", "few-words", "string-top-k", "more-array", "gzip")
Reply = tuple[int, Any, dict[str, str]]
FEW_WORDS = 3
MORE = 10
_WORD = re.compile(r"[^\W_]+")


def _public(hits: Sequence[RetrievedChunk]) -> list[dict[str, Any]]:
    return [{k: v for k, v in h.items() if k in ("chunk_id", "score", "content", "tenant_id")} for h in hits]


def _top_k(raw: object) -> int | None:
    """``top_k`` as an int or a decimal string (the string form is the leaky path of ``string-top-k``)."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw if raw > 0 else None
    if isinstance(raw, str) and raw.strip().isdigit() and int(raw) > 0:
        return int(raw)
    return None


class Round5Service(StyledService):
    """Tenant-partitioned BM25 answering HTTP requests in one :data:`ROUND5_STYLES` style."""

    STYLES = ROUND5_STYLES

    def respond(
        self,
        body: Mapping[str, Any] | None,
        headers: Mapping[str, str],
        params: Mapping[str, str],
        path: str = "/search",
        method: str = "POST",
    ) -> Reply:
        """One request: ``body`` is the parsed JSON body (``None`` for a GET)."""
        body = body if isinstance(body, Mapping) else {}
        tenant, query, top_k = body.get("tenant_id"), body.get("query"), _top_k(body.get("top_k"))
        if not isinstance(tenant, str) or not isinstance(query, str) or top_k is None:
            return 400, {"detail": "tenant_id, query and a positive top_k are required"}, {}
        if tenant not in self.tenants:
            return 403, {"detail": "unknown tenant"}, {}
        words = _WORD.findall(query)
        leaks = {
            "one-word": len(words) == 1 and len(words[0]) >= 3,
            "few-words": len(query.split()) <= FEW_WORDS,
            "string-top-k": isinstance(body.get("top_k"), str),
            "gzip": True,
        }.get(self.style, False) and not self.honest
        hits = self.shared.search(query, top_k) if leaks else self.own(tenant, query, top_k)
        answer: dict[str, Any] = {"results": _public(hits)}
        if self.style == "more-array":
            pool = (
                self.own(tenant, query, top_k + MORE)
                if self.honest
                else self.shared.search(query, top_k + MORE)
            )
            answer["more"] = _public(pool[top_k:])
        if self.style == "gzip":
            raw = gzip.compress(json.dumps(answer).encode())
            return 200, raw, {"Content-Type": "application/json", "Content-Encoding": "gzip"}
        return 200, answer, {}


def make_round5_service(style: str, chunks: Sequence[Chunk], *, honest: bool = False) -> Round5Service:
    """The service of ``style`` over ``chunks`` (its honest twin with ``honest=True``)."""
    return Round5Service(chunks, style, honest)
