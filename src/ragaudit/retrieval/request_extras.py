"""What a request can carry beside ``tenant_id``, ``query`` and ``top_k``: extra headers, query-string
parameters and body fields.

The :class:`~ragaudit.retrieval.protocol.Retriever` protocol stays ``search(*, tenant_id, query, top_k)``.
A retriever that can put more on the wire says so with a ``request_channels`` attribute (a set of
:data:`CHANNELS`) and accepts ``extras=RequestExtras(...)`` as a further keyword of ``search``; the
HTTP adapter does (headers, the URL's query string, the JSON body). The tenant audit uses it to send
its request mutations (a pagination parameter, the tenant a second time in a header, one tenant's
credential with another tenant's id); on a retriever
without the channel those mutations are reported as not applicable (:func:`channels_of`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Channel = Literal["header", "param", "body", "credential", "forged-token"]
CHANNELS: tuple[Channel, ...] = ("header", "param", "body")
"""What goes on the wire beside the three request fields."""
ALL_CHANNELS: tuple[Channel, ...] = (*CHANNELS, "credential", "forged-token")
"""Plus ``credential``: the retriever can send one tenant's credential with another tenant's id
(:attr:`RequestExtras.credential_of`; the HTTP adapter with per-tenant keys), and ``forged-token``:
the caller's key is a JWT naming its tenant, which can be re-issued for another tenant without the
signing key (:attr:`RequestExtras.forge`, :mod:`ragaudit.retrieval.forged_tokens`)."""


@dataclass(frozen=True)
class RequestExtras:
    """Extra headers, query-string parameters and JSON body fields for one request."""

    headers: Mapping[str, str] = field(default_factory=dict)
    params: Mapping[str, str] = field(default_factory=dict)
    body: Mapping[str, Any] = field(default_factory=dict)
    credential_of: str | None = None
    """Send this tenant's credential instead of the credential of the ``tenant_id`` searched for."""
    tenant_value: Any = None
    """Send this JSON value (a list, an object) as the tenant field instead of the tenant id string: a
    store that passes the field into its query (``{"$ne": null}``, ``["a", "b"]``) must refuse it."""
    repeat_tenant: str | None = None
    """Send the body's tenant field a second time, with this value, after the first: a JSON object with a
    duplicate key (a gateway and a backend that read different occurrences disagree on the tenant)."""
    forge: str | None = None
    """Send that credential (a JWT) forged for the ``tenant_id`` searched for: ``claim-swap`` (claims
    changed, signature kept) or ``alg-none`` (:mod:`ragaudit.retrieval.forged_tokens`)."""
    top_k_as_string: bool = False
    """Send ``top_k`` as a JSON string (``"10"``) instead of a number: a service whose lenient path for
    string parameters (a form or legacy client) forgets the tenant must refuse it or stay partitioned."""

    def channels(self) -> frozenset[Channel]:
        """The channels this request needs."""
        wanted: list[Channel] = []
        if self.headers:
            wanted.append("header")
        if self.params:
            wanted.append("param")
        if (
            self.body
            or self.repeat_tenant is not None
            or self.tenant_value is not None
            or self.top_k_as_string
        ):
            wanted.append("body")
        if self.credential_of is not None:
            wanted.append("credential")
        if self.forge is not None:
            wanted.append("forged-token")
        return frozenset(wanted)


def channels_of(retriever: object) -> frozenset[Channel]:
    """The channels ``retriever`` declares in ``request_channels`` (none for a plain retriever)."""
    declared = getattr(retriever, "request_channels", None)
    if not declared:
        return frozenset()
    return frozenset(c for c in ALL_CHANNELS if c in declared)
