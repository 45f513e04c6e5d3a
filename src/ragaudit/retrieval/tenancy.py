"""Request checks every built-in retriever runs before it touches an index.

Tenant rules (the same for BM25, dense, hybrid and every later built-in pipeline):

- a request without a usable tenant (``None``, not a string, empty or whitespace-only) is refused
  with :class:`~ragaudit.errors.TenantError`; it is never served from any tenant's data;
- tenant ids match **exactly**: no case folding, no stripping. ``ACME`` and ``acme `` are different,
  unknown tenants when the corpus holds ``acme``;
- an unknown tenant gets an empty result, never another tenant's data and never a fallback index.
"""

from __future__ import annotations

from ragaudit.errors import TenantError


def require_tenant(tenant_id: object) -> str:
    """Return ``tenant_id`` unchanged when it is a usable tenant; otherwise refuse the request.

    The id is returned as given (no normalisation), so the caller looks it up exactly.
    """
    if tenant_id is None:
        raise TenantError(
            "retrieval request refused: no tenant_id was given; every search must name the tenant "
            "whose data it may read"
        )
    if not isinstance(tenant_id, str):
        raise TenantError(
            f"retrieval request refused: tenant_id must be a string, got {type(tenant_id).__name__}"
        )
    if not tenant_id.strip():
        raise TenantError(
            f"retrieval request refused: tenant_id {tenant_id!r} is empty or whitespace-only; "
            "name a real tenant"
        )
    return tenant_id


def require_top_k(top_k: object) -> int:
    """Return ``top_k`` when it is a positive integer; raise ``ValueError`` otherwise."""
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
        raise ValueError(f"top_k must be a positive integer (got {top_k!r})")
    return top_k
