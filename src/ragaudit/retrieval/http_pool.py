"""The connection pool of :class:`~ragaudit.retrieval.http.HttpRetriever`: httpx imported lazily (the
``http`` extra) and sharded into clients of a few connections each."""

from __future__ import annotations

import asyncio
import math
import ssl
from collections.abc import Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ragaudit.errors import MissingDependencyError

if TYPE_CHECKING:
    import httpx

_SHARD_CONNECTIONS = 8


def _import_httpx() -> ModuleType:
    try:
        import httpx
    except ImportError:
        raise MissingDependencyError("httpx", "http") from None
    return httpx


class _ShardedClients:
    """A connection pool of ``size`` connections made of httpx clients of at most 8 connections each.

    Each request goes to the least busy client. Why not one client: httpcore 1.0's pool bookkeeping
    walks every connection for every connection on each request (O(size²)); at 64 connections that
    costs more CPU than the request itself, and throughput stops growing with concurrency. Shards of
    8 keep it negligible. The clients share one TLS context, and belong to the event loop they were
    made in.
    """

    def __init__(
        self, lib: ModuleType, size: int, timeout_s: float, headers: Mapping[str, str], tls: ssl.SSLContext
    ) -> None:
        shards = max(1, math.ceil(size / _SHARD_CONNECTIONS))
        per_shard = math.ceil(size / shards)
        self.loop = asyncio.get_running_loop()
        self.lib = lib
        self.clients: list[httpx.AsyncClient] = [
            lib.AsyncClient(
                timeout=lib.Timeout(timeout_s),
                limits=lib.Limits(max_connections=per_shard, max_keepalive_connections=per_shard),
                headers=dict(headers),
                verify=tls,
                follow_redirects=False,
            )
            for _ in range(shards)
        ]
        self.busy = [0] * shards

    def usable(self) -> bool:
        return self.loop is asyncio.get_running_loop() and not self.loop.is_closed()

    async def post(
        self,
        url: str,
        body: Mapping[str, Any],
        headers: Mapping[str, str] | None,
        params: Mapping[str, str] | None = None,
        content: bytes | None = None,
    ) -> httpx.Response:
        shard = self.busy.index(min(self.busy))
        self.busy[shard] += 1
        try:
            # merged into the URL's own query string (httpx's params= would replace it)
            target = self.lib.URL(url).copy_merge_params(dict(params)) if params else url
            client = self.clients[shard]
            if content is not None:  # a body written by hand (a JSON object with a duplicate key)
                sent = {**(headers or {}), "Content-Type": "application/json"}
                response: httpx.Response = await client.post(target, content=content, headers=sent)
            else:
                response = await client.post(target, json=body, headers=headers)
            return response
        finally:
            self.busy[shard] -= 1

    async def aclose(self) -> None:
        for client in self.clients:
            await client.aclose()
