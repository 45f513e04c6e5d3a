"""Deliberately leaky retrievers: the isolation bugs real systems ship, to prove the audit catches them.

**Never use these to serve anything.** They exist for the tests, the docs and demonstrations; each one
is built from real components (bm25s indexes over a chunked corpus) and leaks in one specific way:

- :class:`PostFilterBackfillRetriever`: one index over every tenant; takes the cross-tenant top-k,
  filters it to the caller's tenant *afterwards*, then pads the list back to ``k`` with the
  filtered-out hits "so the UI always shows k results";
- :class:`RewritePathLeakRetriever`: tenant-partitioned search, except when the query rewriter
  changed the query: the rewritten query goes to the shared index without the tenant filter;
- :class:`RerankPathLeakRetriever`: tenant-partitioned first stage; when it finds fewer than
  ``top_n`` candidates, the rerank stage widens its pool from the shared index, ignoring the tenant;
- :class:`PrefixTenantRetriever`: the tenant filter is ``owner.startswith(caller)`` (a ``LIKE
  'acme%'``): a truncated id, an empty id or a tenant named as another's prefix reads other data;
- :class:`CaseInsensitiveTenantRetriever`: the filter compares case-folded, stripped ids, so
  ``ACME`` and `` acme`` read ``acme``'s data;
- :class:`RelabelingRetriever`: wraps any retriever and stamps the caller's tenant on every chunk
  (optionally replacing the ids with opaque ones), so a check that trusts labels sees nothing wrong.

Leaks that only show under some conditions (the tenant audit's rounds, ``top_k`` values, concurrency
levels and hostile ids exist to find them; :mod:`ragaudit.security.request_plan`). Each is otherwise
the honest tenant-partitioned BM25, and its leak path is the shared index, unfiltered:

- :class:`TopKPathLeakRetriever`: pages larger than ``above`` results come from the shared index;
- :class:`ConcurrencyLeakRetriever`: a request that finds ``pool`` requests already in flight goes to
  an overflow path that forgets the tenant;
- :class:`WarmPathLeakRetriever`: after ``after`` calls a warm path takes over, and it forgets the tenant;
- :class:`RareRaceLeakRetriever`: one call in ``one_in`` (a seeded draw) loses the race and is unfiltered;
- :class:`TenantlessCacheRetriever`: a result cache keyed by query and ``top_k`` but not the tenant,
  filled with confident answers (the owner's), then served to whoever asks the same text;
- :class:`TenantSyntaxRetriever`: reads structure into the tenant id: ``a,b`` as a list of tenants
  (``list``), ``a:admin`` as tenant ``a`` with the admin role that reads every tenant (``role``).

Leaks in *what* is returned (:mod:`ragaudit.security.leaky_output`, listed here too): another tenant's
title, snippet, highlight, ``metadata`` value or source id beside the caller's own chunk
(``field-title`` ... ``field-source-id``); another tenant's variant of a templated document under the
caller's own id (``templated-variant``); a question naming another tenant's entity routed to that
tenant (``entity-routing``); unattributable output (opaque ids, term vectors: ``opaque-output``, which
the audit must report as *not verified*, never clean).

Leaks *beside* the result list (:mod:`ragaudit.security.leaky_response`, listed here as
``response-<style>``, each with an honest twin there): another tenant's snippets, titles, names, ids
or encoded text in top-level ``debug``, ``suggest``, ``facets``, ``aggregations``, ``related`` fields, in
``see_also`` id lists, a base64 cursor, a percent-encoded link, HTML character references or a JSON
string.

Leaks *inside* what looks like the caller's own result (:mod:`ragaudit.security.leaky_context`, listed
here as ``context-<style>``, each with an honest twin there): an explanation quoting another tenant's
text, another tenant's neighbouring chunk appended, a merged context block, ids extending another
tenant's document id with the text withheld, a source link to another tenant's document. Leaks in how
an HTTP answer travels (:mod:`ragaudit.security.leaky_transport`, :data:`TRANSPORT_LEAKS`): a page
reached through the service's own cursor or ``next`` link, a debug header, a refusal's body, an NDJSON
stream, a 200 that carries an error. The third red team's (:mod:`ragaudit.security.leaky_round3`,
:data:`ROUND3_LEAKS`): unverified JWT claims, tenant lists, prefix matching, a global search history,
server-sent events, a count over every tenant, a rare leak, a sticky cookie, nested encodings. The
fourth red team's (:mod:`ragaudit.security.leaky_round4`, :data:`ROUND4_LEAKS`): a non-Latin script
query, trailing separators in tenant ids, a page-size path, a cold start, two JSON documents in a body.
The fifth's (:mod:`ragaudit.security.leaky_round5`, :data:`ROUND5_LEAKS`): a one-word query, ``top_k``
as a string, a filter applied only to longer queries, a ``more`` array, a gzip body.

Leaks that need an unusual *request* (:mod:`ragaudit.security.leaky_requests`, listed in
:data:`REQUEST_LEAKS`, each with an honest twin: :func:`request_leak`): an empty or short query, a long,
quoted, boolean, fielded or wildcard query, ``top_k`` above 64, a later page (``offset``, ``?page=``),
the tenant given a second time in a header or the query string, tenant ids folded by accents, NFKC or
confusable letters.

Those whose leak does not depend on the event loop have a synchronous ``answer(tenant_id, query, top_k)``
too, so a test can serve them over real HTTP.

Zero-argument factories over the demo knowledge base (``demo_backfill`` and friends) make them
usable from the command line: ``ragaudit audit-tenants --corpus <kb>/corpus.jsonl --retriever
ragaudit.security.leaky:demo_backfill``.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ragaudit.corpus.model import Chunk
from ragaudit.retrieval.bm25 import BM25Retriever
from ragaudit.retrieval.protocol import RetrievedChunk, Retriever
from ragaudit.retrieval.rewriters import SynonymRewriter
from ragaudit.security.leaky_base import Partitioned as _Partitioned
from ragaudit.security.leaky_base import SharedIndex as _SharedIndex
from ragaudit.security.leaky_context import CONTEXT_STYLES
from ragaudit.security.leaky_requests import STYLES as REQUEST_STYLES
from ragaudit.security.leaky_requests import make_request_service
from ragaudit.security.leaky_response import RESPONSE_STYLES
from ragaudit.security.leaky_round3 import ROUND3_STYLES
from ragaudit.security.leaky_round4 import LEAK_STYLES as ROUND4_STYLES
from ragaudit.security.leaky_round5 import ROUND5_STYLES
from ragaudit.security.leaky_transport import TRANSPORT_STYLES
from ragaudit.text.words import normalize_text

DEFAULT_SYNONYMS: Mapping[str, str] = {
    "plan": "tier",
    "agreement": "contract",
    "policy": "terms",
    "price": "cost",
    "confidential": "private",
}


class PostFilterBackfillRetriever:
    """Cross-tenant top-k, filtered afterwards, padded back to k with other tenants' hits."""

    def __init__(self, chunks: Sequence[Chunk]) -> None:
        self.shared = _SharedIndex(chunks)

    async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        hits = self.shared.search(query, top_k)
        own = [h for h in hits if h.get("tenant_id") == tenant_id]
        return own + [h for h in hits if h.get("tenant_id") != tenant_id][: top_k - len(own)]


class RewritePathLeakRetriever:
    """Tenant-partitioned BM25, but a rewritten query is searched in the shared index, unfiltered."""

    def __init__(self, chunks: Sequence[Chunk], synonyms: Mapping[str, str] = DEFAULT_SYNONYMS) -> None:
        self.base = BM25Retriever.from_chunks(chunks)
        self.shared = _SharedIndex(chunks)
        self.rewriter = SynonymRewriter(dict(synonyms))

    async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        rewritten = await self.rewriter.rewrite(query, tenant_id=tenant_id)
        if rewritten != query:
            return self.shared.search(rewritten, top_k)  # the bug: this path forgot the tenant
        return await self.base.search(tenant_id=tenant_id, query=query, top_k=top_k)


def _overlap(query: str, text: str) -> float:
    """Share of the query's distinct words found in ``text`` (a cheap lexical reranker)."""
    wanted = set(normalize_text(query).split())
    return len(wanted & set(normalize_text(text).split())) / len(wanted) if wanted else 0.0


class RerankPathLeakRetriever:
    """Tenant-partitioned first stage; a thin candidate pool is topped up from the shared index."""

    def __init__(self, chunks: Sequence[Chunk], top_n: int = 20) -> None:
        self.base = BM25Retriever.from_chunks(chunks)
        self.shared = _SharedIndex(chunks)
        self.top_n = top_n

    async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        pool = await self.base.search(tenant_id=tenant_id, query=query, top_k=self.top_n)
        if len(pool) < self.top_n:  # the bug: widening the pool ignores the tenant
            have = {h["chunk_id"] for h in pool}
            pool += [h for h in self.shared.search(query, self.top_n) if h["chunk_id"] not in have]
        pool.sort(key=lambda h: -_overlap(query, h.get("content", "")))
        return pool[:top_k]


class PrefixTenantRetriever:
    """The tenant filter is ``owner.startswith(caller)``."""

    def __init__(self, chunks: Sequence[Chunk]) -> None:
        self.shared = _SharedIndex(chunks)

    async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        return self.shared.filtered(query, top_k, lambda owner: owner.startswith(tenant_id))


class CaseInsensitiveTenantRetriever:
    """The tenant filter compares case-folded, stripped ids."""

    def __init__(self, chunks: Sequence[Chunk]) -> None:
        self.shared = _SharedIndex(chunks)

    async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        wanted = tenant_id.strip().casefold()
        return self.shared.filtered(query, top_k, lambda owner: owner.casefold() == wanted)


class RelabelingRetriever:
    """Wraps ``inner`` and labels every chunk with the caller's tenant; ``hide_ids`` makes ids opaque."""

    def __init__(self, inner: Retriever, *, hide_ids: bool = False) -> None:
        self.inner = inner
        self.hide_ids = hide_ids

    async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        out: list[RetrievedChunk] = []
        for hit in await self.inner.search(tenant_id=tenant_id, query=query, top_k=top_k):
            relabelled: RetrievedChunk = hit.copy()
            relabelled["tenant_id"] = tenant_id
            relabelled.pop("metadata", None)
            if self.hide_ids:
                digest = hashlib.sha256(hit.get("content", hit["chunk_id"]).encode()).hexdigest()[:12]
                relabelled["chunk_id"] = f"hit-{digest}"
            out.append(relabelled)
        return out


class TopKPathLeakRetriever(_Partitioned):
    """Pages of more than ``above`` results are served from the shared (export) index, unfiltered."""

    def __init__(self, chunks: Sequence[Chunk], above: int = 20) -> None:
        super().__init__(chunks)
        self.above = above

    def answer(self, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        if top_k > self.above:  # the bug: the large-page path forgot the tenant
            return self.shared.search(query, top_k)
        return self.own(tenant_id, query, top_k)


class ConcurrencyLeakRetriever(_Partitioned):
    """A request that finds ``pool`` requests in flight goes to an overflow path without the tenant filter."""

    def __init__(self, chunks: Sequence[Chunk], pool: int = 8, hold_s: float = 0.0005) -> None:
        super().__init__(chunks)
        self.pool = pool
        self.hold_s = hold_s
        self.in_flight = 0

    async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        overflow = self.in_flight >= self.pool
        self.in_flight += 1
        try:
            await asyncio.sleep(self.hold_s)  # the time a request holds its connection
            if overflow:  # the bug: the overflow replica is queried without the tenant
                return self.shared.search(query, top_k)
            return self.own(tenant_id, query, top_k)
        finally:
            self.in_flight -= 1


class WarmPathLeakRetriever(_Partitioned):
    """After ``after`` calls a warm path serves every request, and it forgets the tenant."""

    def __init__(self, chunks: Sequence[Chunk], after: int = 2000) -> None:
        super().__init__(chunks)
        self.after = after
        self.calls = 0

    def answer(self, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        self.calls += 1
        if self.calls > self.after:
            return self.shared.search(query, top_k)
        return self.own(tenant_id, query, top_k)


class RareRaceLeakRetriever(_Partitioned):
    """One call in ``one_in`` (a draw from ``random.Random(seed)``) loses a race and is served unfiltered."""

    def __init__(self, chunks: Sequence[Chunk], one_in: int = 1000, seed: int = 3) -> None:
        super().__init__(chunks)
        self.one_in = one_in
        self.draws = random.Random(seed)
        self.calls = 0
        self.raced: list[int] = []
        """The call numbers that lost the race."""

    def answer(self, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        self.calls += 1
        if self.draws.random() < 1.0 / self.one_in:
            self.raced.append(self.calls)
            return self.shared.search(query, top_k)
        return self.own(tenant_id, query, top_k)


class TenantlessCacheRetriever(_Partitioned):
    """A result cache keyed by (normalised query, ``top_k``) but not the tenant. Only confident answers
    are cached: the top hit holds at least ``min_overlap`` of the query's words (the owner's answer to
    its own question, typically); whoever asks the same text next gets the cached answer."""

    def __init__(self, chunks: Sequence[Chunk], min_overlap: float = 1.0) -> None:
        super().__init__(chunks)
        self.min_overlap = min_overlap
        self.cache: dict[tuple[str, int], list[RetrievedChunk]] = {}

    def answer(self, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        key = (normalize_text(query), top_k)  # the bug: the tenant is not part of the key
        if key in self.cache:
            return self.cache[key]
        hits = self.own(tenant_id, query, top_k)
        if hits and _overlap(query, hits[0].get("content", "")) >= self.min_overlap:
            self.cache[key] = hits
        return hits


def _list_syntax(tenant_id: str) -> list[str]:
    return [part for part in tenant_id.split(",") if part]


def _role_syntax(tenant_id: str) -> list[str] | None:
    tenant, _, role = tenant_id.partition(":")
    return None if role == "admin" else [tenant]


TENANT_SYNTAX: Mapping[str, Callable[[str], list[str] | None]] = {"list": _list_syntax, "role": _role_syntax}
"""How :class:`TenantSyntaxRetriever` reads a tenant id: the tenants it names (``None``: every tenant)."""


class TenantSyntaxRetriever(_Partitioned):
    """Reads structure into the tenant id (:data:`TENANT_SYNTAX`): ``list`` serves every tenant named in
    ``a,b``; ``role`` serves tenant ``a`` for ``a:reader`` and every tenant for ``a:admin``."""

    def __init__(self, chunks: Sequence[Chunk], syntax: str = "list") -> None:
        super().__init__(chunks)
        self.parse = TENANT_SYNTAX[syntax]

    def answer(self, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        named = self.parse(tenant_id)
        if named is None:
            return self.shared.search(query, top_k)
        merged = [hit for tenant in named for hit in self.own(tenant, query, top_k)]
        return sorted(merged, key=lambda h: -float(h.get("score", 0.0)))[:top_k]


def _output_leak(kind: str) -> Callable[[Sequence[Chunk]], Retriever]:
    """A factory of one of :mod:`ragaudit.security.leaky_output`'s retrievers (imported when called)."""

    def make(chunks: Sequence[Chunk]) -> Retriever:
        from ragaudit.security import leaky_output as out

        if kind.startswith("field-"):
            return out.FieldLeakRetriever(chunks, kind.removeprefix("field-").replace("-", "_"))
        made: dict[str, Callable[[Sequence[Chunk]], Retriever]] = {
            "templated-variant": out.TemplateDedupRetriever,
            "entity-routing": out.EntityRoutingRetriever,
            "opaque-output": out.OpaqueOutputRetriever,
        }
        return made[kind](chunks)

    return make


OUTPUT_LEAKS = (
    "field-title",
    "field-snippet",
    "field-highlight",
    "field-metadata",
    "field-source-id",
    "templated-variant",
    "entity-routing",
    "opaque-output",
)
"""The kinds whose leak is in what is returned (:mod:`ragaudit.security.leaky_output`). ``templated-variant``
leaks only on a corpus with templated documents (not the demo knowledge base); ``opaque-output`` is
caught as *not verified* (nothing it returns can be attributed), not as a leak."""


def _response_leak(style: str) -> Callable[[Sequence[Chunk]], Retriever]:
    """A factory of :class:`~ragaudit.security.leaky_response.ResponseLeakRetriever` (imported when called)."""

    def make(chunks: Sequence[Chunk]) -> Retriever:
        from ragaudit.security.leaky_response import ResponseLeakRetriever

        return ResponseLeakRetriever(chunks, style)

    return make


def _context_leak(style: str) -> Callable[[Sequence[Chunk]], Retriever]:
    """A factory of :class:`~ragaudit.security.leaky_context.ContextService` (imported when called)."""

    def make(chunks: Sequence[Chunk]) -> Retriever:
        from ragaudit.security.leaky_context import make_context_service

        return make_context_service(style, chunks)

    return make


CONTEXT_LEAKS = tuple(f"context-{style}" for style in CONTEXT_STYLES)
"""The kinds whose leak hides inside what looks like the caller's own result
(:mod:`ragaudit.security.leaky_context`; each has an honest twin there): an explanation quoting another
tenant's text, a neighbouring chunk of another tenant appended, a merged context block, ids that extend
another tenant's document id with the text withheld, a source link to another tenant's document."""
TRANSPORT_LEAKS = TRANSPORT_STYLES
"""The HTTP services whose leak is in how the answer travels (:mod:`ragaudit.security.leaky_transport`,
each with an honest twin; served over HTTP, not Python retrievers): a page reached through the
service's own cursor or ``next`` link, a debug header, a refusal's body, an NDJSON stream, a 200 that
carries an error."""
ROUND3_LEAKS = ROUND3_STYLES
"""The HTTP services of the third red team (:mod:`ragaudit.security.leaky_round3`, each with an honest
twin): unverified JWT claims, tenant lists in the body, prefix-matched tenants, a global search
history, server-sent events, a ``total`` over every tenant, a leak on one request in 5,000, a sticky
session cookie, a snippet encoded two levels deep."""
ROUND4_LEAKS = ROUND4_STYLES
"""The leaky HTTP services of the fourth red team (:mod:`ragaudit.security.leaky_round4`, each with an
honest twin; the module also holds honest services in styles the audit might wrongly accuse): a
non-Latin script query path, tenant ids trimmed of a trailing ``/`` or ``.``, a page-size path, a cold
start, ids rewritten as the caller's, two JSON documents in one body, a ``Link:`` header, a GET path and
a ``/suggest`` endpoint (the last two beyond a black-box audit of one endpoint)."""
ROUND5_LEAKS = ROUND5_STYLES
"""The leaky HTTP services of the fifth red team (:mod:`ragaudit.security.leaky_round5`, each with an
honest twin taking the same path within the caller's partition): a one-word query, ``top_k`` sent as a
string, a filter applied only to longer queries, a ``more`` array beyond ``top_k``, a gzip body."""

RESPONSE_LEAKS = tuple(f"response-{style}" for style in RESPONSE_STYLES)
"""The kinds whose leak is beside the result list (:mod:`ragaudit.security.leaky_response`, whose
``RESPONSE_STYLES`` they are; each has an honest twin there): top-level debug, suggest, facets,
aggregations and related fields, id lists under keys that do not say "id", and encoded text."""

LEAKY: Mapping[str, Callable[[Sequence[Chunk]], Retriever]] = {
    "post-filter-backfill": PostFilterBackfillRetriever,
    "rewrite-path": RewritePathLeakRetriever,
    "rerank-path": RerankPathLeakRetriever,
    "prefix-tenant": PrefixTenantRetriever,
    "case-insensitive-tenant": CaseInsensitiveTenantRetriever,
    "relabeling": lambda chunks: RelabelingRetriever(PostFilterBackfillRetriever(chunks), hide_ids=True),
    "top-k-path": TopKPathLeakRetriever,
    "concurrency-overflow": ConcurrencyLeakRetriever,
    "warm-path": WarmPathLeakRetriever,
    "rare-race": RareRaceLeakRetriever,
    "tenantless-cache": TenantlessCacheRetriever,
    "list-syntax": lambda chunks: TenantSyntaxRetriever(chunks, "list"),
    "role-syntax": lambda chunks: TenantSyntaxRetriever(chunks, "role"),
    **{kind: _output_leak(kind) for kind in OUTPUT_LEAKS},
    **{kind: _response_leak(kind.removeprefix("response-")) for kind in RESPONSE_LEAKS},
    "foreign-summaries": lambda chunks: _rewritten(chunks, foreign=True),
    **{kind: _context_leak(kind.removeprefix("context-")) for kind in CONTEXT_LEAKS},
}
"""Every leaky retriever by name, each built from a chunk list."""
REWRITTEN_LEAKS = ("foreign-summaries",)
"""The kinds whose returned text is rewritten (:mod:`ragaudit.security.leaky_rewritten`): *not verified*
by exact attribution alone, a leak with ``--attribute semantic``."""
CONDITIONAL = (
    "top-k-path",
    "concurrency-overflow",
    "warm-path",
    "rare-race",
    "tenantless-cache",
    "list-syntax",
    "role-syntax",
)
"""The kinds whose leak shows only under some ``top_k``, concurrency, call count, order or tenant-id syntax."""


REQUEST_LEAKS = REQUEST_STYLES
"""The request-side leak styles (:mod:`ragaudit.security.leaky_requests`); each has an honest twin."""


def request_leak(style: str, chunks: Sequence[Chunk], *, honest: bool = False) -> Any:
    """The leaky service of a :data:`REQUEST_LEAKS` style (its honest twin with ``honest=True``): a
    Python retriever, and ``handle(body, headers, params)`` to serve it over HTTP."""
    return make_request_service(style, chunks, honest=honest)


def _rewritten(chunks: Sequence[Chunk], foreign: bool) -> Retriever:
    from ragaudit.security.leaky_rewritten import SummarisingRetriever

    return SummarisingRetriever(chunks, foreign=foreign)


def make_leaky(kind: str, chunks: Sequence[Chunk]) -> Retriever:
    """One of :data:`LEAKY` over ``chunks``."""
    if kind not in LEAKY:
        raise ValueError(f"unknown leaky retriever {kind!r}; one of: {', '.join(LEAKY)}")
    return LEAKY[kind](chunks)


def _demo_chunks() -> list[Chunk]:
    from importlib.resources import files

    from ragaudit.corpus.chunkers import chunk_corpus, make_chunker
    from ragaudit.corpus.loading import load_corpus

    corpus = load_corpus(str(files("ragaudit") / "demo_data" / "kb" / "corpus.jsonl"))
    return chunk_corpus(corpus, make_chunker("whole"))


def demo_backfill() -> Any:
    """:class:`PostFilterBackfillRetriever` over the demo knowledge base."""
    return make_leaky("post-filter-backfill", _demo_chunks())


def demo_rewrite_path() -> Any:
    """:class:`RewritePathLeakRetriever` over the demo knowledge base."""
    return make_leaky("rewrite-path", _demo_chunks())


def demo_relabeling() -> Any:
    """:class:`RelabelingRetriever` (ids hidden) over the demo knowledge base."""
    return make_leaky("relabeling", _demo_chunks())


def demo_opaque_output() -> Any:
    """:class:`~ragaudit.security.leaky_output.OpaqueOutputRetriever` over the demo knowledge base."""
    return make_leaky("opaque-output", _demo_chunks())


def demo_response_leak() -> Any:
    """:class:`~ragaudit.security.leaky_response.ResponseLeakRetriever` (facets) over the demo knowledge base."""
    return make_leaky("response-facets", _demo_chunks())


def demo_response_honest() -> Any:
    """The honest twin of :func:`demo_response_leak` (facets from the caller's own hits) over the demo KB."""
    from ragaudit.security.leaky_response import ResponseLeakRetriever

    return ResponseLeakRetriever(_demo_chunks(), "facets", honest=True)


def demo_foreign_summaries() -> Any:
    """:class:`~ragaudit.security.leaky_rewritten.SummarisingRetriever` (foreign summaries) over the demo
    knowledge base."""
    return make_leaky("foreign-summaries", _demo_chunks())


def demo_own_summaries() -> Any:
    """The honest twin: summaries of the caller's own documents, over the demo knowledge base."""
    return _rewritten(_demo_chunks(), foreign=False)


def demo_field_leak() -> Any:
    """:class:`~ragaudit.security.leaky_output.FieldLeakRetriever` (titles) over the demo knowledge base."""
    return make_leaky("field-title", _demo_chunks())
