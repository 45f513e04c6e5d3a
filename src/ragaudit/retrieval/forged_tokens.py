"""Forged bearer tokens: one tenant's JWT re-issued for another tenant without the signing key.

A service that reads the tenant from a JWT's claims must check the token's signature and refuse
``alg: none``. The tenant audit tests that it does (:mod:`ragaudit.security.request_mutations`, the
``credential-conflict`` axis): with per-tenant keys that are JWTs whose claims name their tenant
(``--endpoint-keys``), it takes the caller's own token and sends

- ``claim-swap``: the payload's claims naming the caller changed to name another tenant, the header
  and the **signature kept** (no longer valid for the payload);
- ``alg-none``: the same payload under the header ``{"alg": "none", "typ": "JWT"}`` and an empty
  signature.

A service that verifies the token refuses both (401); one that serves the other tenant's data to them
trusts unverified claims. Nothing here signs anything: no key is guessed or needed.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any, Literal

Forgery = Literal["claim-swap", "alg-none"]
FORGERIES: tuple[Forgery, ...] = ("claim-swap", "alg-none")


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _segment(text: str) -> Any:
    try:
        return json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
    except (ValueError, binascii.Error):
        return None


def _jwt(token: str) -> tuple[dict[str, Any], dict[str, Any], str] | None:
    """A compact JWT's header, claims and signature, or ``None`` when ``token`` is no JWT."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    header, claims = _segment(parts[0]), _segment(parts[1])
    if not isinstance(header, dict) or "alg" not in header or not isinstance(claims, dict):
        return None
    return header, claims, parts[2]


def _swapped(value: Any, old: str, new: str) -> tuple[Any, bool]:
    """``value`` with every string equal to ``old`` (in objects and lists at any depth) set to ``new``."""
    if value == old:
        return new, True
    if isinstance(value, dict):
        pairs = [(k, _swapped(v, old, new)) for k, v in value.items()]
        return {k: v for k, (v, _) in pairs}, any(hit for _, (_, hit) in pairs)
    if isinstance(value, list):
        items = [_swapped(v, old, new) for v in value]
        return [v for v, _ in items], any(hit for _, hit in items)
    return value, False


def names_tenant(token: str, tenant: str) -> bool:
    """Whether ``token`` is a JWT one of whose claims is exactly ``tenant`` (what can be forged)."""
    parsed = _jwt(token)
    return parsed is not None and _swapped(parsed[1], tenant, tenant)[1]


def forge(token: str, caller: str, owner: str, how: Forgery) -> str | None:
    """``token`` (the caller's JWT) with its claims naming ``caller`` set to ``owner``, forged ``how``;
    ``None`` when the token is no JWT or no claim names the caller."""
    parsed = _jwt(token)
    if parsed is None:
        return None
    _, claims, signature = parsed
    swapped, hit = _swapped(claims, caller, owner)
    if not hit:
        return None
    payload = _b64url(json.dumps(swapped, separators=(",", ":")).encode())
    if how == "alg-none":
        return f"{_b64url(json.dumps({'alg': 'none', 'typ': 'JWT'}).encode())}.{payload}."
    return f"{token.split('.')[0]}.{payload}.{signature}"
