"""What a request can carry beside ``tenant_id``, ``query`` and ``top_k``: extra headers, query-string
parameters and body fields.

The :class:`~ragaudit.retrieval.protocol.Retriever` protocol stays ``search(*, tenant_id, query, top_k)``.
A retriever that can put more on the wire says so with a ``request_channels`` attribute (a set of
:data:`CHANNELS`) and accepts ``extras=RequestExtras(...)`` as a further keyword of ``search``; the
HTTP adapter does (headers, the URL's query string, the JSON body). The tenant audit uses it to send
its request mutations (a pagination parameter, the tenant a second time in a header); on a retriever
without the channel those mutations are reported as not applicable (:func:`channels_of`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Channel = Literal["header", "param", "body"]
CHANNELS: tuple[Channel, ...] = ("header", "param", "body")


@dataclass(frozen=True)
class RequestExtras:
    """Extra headers, query-string parameters and JSON body fields for one request."""

    headers: Mapping[str, str] = field(default_factory=dict)
    params: Mapping[str, str] = field(default_factory=dict)
    body: Mapping[str, Any] = field(default_factory=dict)

    def channels(self) -> frozenset[Channel]:
        """The channels this request needs."""
        wanted: list[Channel] = []
        if self.headers:
            wanted.append("header")
        if self.params:
            wanted.append("param")
        if self.body:
            wanted.append("body")
        return frozenset(wanted)


def channels_of(retriever: object) -> frozenset[Channel]:
    """The channels ``retriever`` declares in ``request_channels`` (none for a plain retriever)."""
    declared = getattr(retriever, "request_channels", None)
    if not declared:
        return frozenset()
    return frozenset(c for c in CHANNELS if c in declared)
