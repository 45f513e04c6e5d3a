"""Hostile tenant ids: callers that are *not* tenants but that a sloppy tenant filter might read as one.

The tenant audit asks a few probes as each of these ids. A hostile caller is entitled to nothing:
a request with such an id must be refused or answered with nothing any tenant owns, and every chunk
the corpus attributes to a real tenant is a leak. For tenants ``t`` and ``u`` (``u`` the next tenant
in sorted order, wrapping round), the ids are:

- **fixed**: none (``None``), ``""``, ``" "``, ``*``, ``%``, ``.*``, ``_``, an unknown id;
- **near misses** of ``t``: case and whitespace variants, a truncated prefix, a one-character
  prefix, extensions (``acme`` → ``ACME``, ``Acme``, `` acme``, ``acme ``, ``acme\\n``, ``acm``, ``a``,
  ``acme_``, ``acme-eu``);
- **lists**: ``t,u``, ``t, u``, ``t;u``, ``t|u``, ``t u`` (a service that splits ids serves both);
- **roles**: ``t:admin``, ``t/admin``, ``t@admin``, ``t:*`` (a service that reads a role suffix);
- **wildcards**: ``t*``, ``t%``, ``t?`` (a ``LIKE`` or glob filter);
- **encodings**: ``t`` percent-encoded character by character, ``t%2Cu`` (URL-encoded list),
  ``t%20`` (URL-encoded space), fullwidth ``ｔ`` (NFKC folds it to ``t``), ``t`` with a zero-width space,
  and a Cyrillic look-alike of ``t`` (``аcme``, when ``t`` holds a letter that has one);
- **JSON arrays**: ``["t","u"]`` and ``["t"]``;
- **path segments**: ``t/../u``, ``../u``, ``./t``.

Ids equal to a real tenant are skipped. Each id records the tenants it names (``t``, and ``u`` for the
ids built from both), so the audit asks it those tenants' probes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import quote

FIXED_HOSTILE: tuple[tuple[str | None, str], ...] = (
    (None, "no tenant (null)"),
    ("", "empty string"),
    (" ", "whitespace only"),
    ("*", "wildcard *"),
    ("%", "SQL wildcard %"),
    (".*", "regex .*"),
    ("_", "SQL single-character wildcard _"),
    ("ragaudit-unknown-tenant", "unknown tenant"),
)
LOOKALIKES = {"a": "а", "c": "с", "e": "е", "i": "і", "o": "о", "p": "р", "x": "х", "y": "у"}
"""Latin letters and the Cyrillic letters that look the same."""


@dataclass(frozen=True)
class HostileCaller:
    """A tenant id that is not a tenant, what it is, and the real tenants it names."""

    caller: str | None
    description: str
    names: tuple[str, ...] = ()
    """The real tenants the id is built from (their probes are asked as it); empty for fixed ids."""


def tenant_variants(tenant: str, real: Iterable[str]) -> list[tuple[str, str]]:
    """Ids that are *not* ``tenant`` but that a sloppy filter might treat as it: ``(id, description)``."""
    candidates = [
        (tenant.upper(), "upper case"),
        (tenant.lower(), "lower case"),
        (tenant.capitalize(), "capitalised"),
        (f" {tenant}", "leading space"),
        (f"{tenant} ", "trailing space"),
        (f"{tenant}\n", "trailing newline"),
        (tenant[:-1], "truncated prefix"),
        (tenant[:1], "one-character prefix"),
        (f"{tenant}_", "extended with _"),
        (f"{tenant}-eu", "extended with -eu"),
    ]
    return _unique(candidates, tenant, real)


def _lookalike(tenant: str) -> str | None:
    for position, char in enumerate(tenant):
        if char in LOOKALIKES:
            return tenant[:position] + LOOKALIKES[char] + tenant[position + 1 :]
    return None


def _fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def syntax_variants(tenant: str, other: str, real: Iterable[str]) -> list[tuple[str, str]]:
    """Lists, roles, wildcards, encodings, JSON arrays and path segments built from ``tenant`` (and
    ``other``, a second real tenant): ``(id, description)``, real tenants and repeats left out."""
    lookalike = _lookalike(tenant)
    candidates = [
        (f"{tenant},{other}", "list a,b"),
        (f"{tenant}, {other}", "list a, b"),
        (f"{tenant};{other}", "list a;b"),
        (f"{tenant}|{other}", "list a|b"),
        (f"{tenant} {other}", "list a b"),
        (f"{tenant}:admin", "role a:admin"),
        (f"{tenant}/admin", "role a/admin"),
        (f"{tenant}@admin", "role a@admin"),
        (f"{tenant}:*", "role a:*"),
        (f"{tenant}*", "wildcard a*"),
        (f"{tenant}%", "wildcard a%"),
        (f"{tenant}?", "wildcard a?"),
        ("".join(f"%{b:02X}" for b in tenant.encode()), "percent-encoded a"),
        (quote(f"{tenant},{other}", safe=""), "URL-encoded list a%2Cb"),
        (quote(f"{tenant} ", safe=""), "URL-encoded trailing space a%20"),
        (_fullwidth(tenant), "fullwidth a (NFKC folds it)"),
        (f"{tenant}\u200b", "a with a zero-width space"),
        *([(lookalike, "Cyrillic look-alike of a")] if lookalike else []),
        (json.dumps([tenant, other]), 'JSON array ["a","b"]'),
        (json.dumps([tenant]), 'JSON array ["a"]'),
        (f"{tenant}/../{other}", "path a/../b"),
        (f"../{other}", "path ../b"),
        (f"./{tenant}", "path ./a"),
    ]
    named = [(value, f"{what} (a={tenant!r}, b={other!r})") for value, what in candidates]
    return _unique(named, tenant, real)


def _unique(candidates: Sequence[tuple[str, str]], tenant: str, real: Iterable[str]) -> list[tuple[str, str]]:
    skip = set(real) | {tenant}
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for value, what in candidates:
        if value.strip() and value not in skip and value not in seen:
            seen.add(value)
            out.append((value, what if "(a=" in what else f"{what} of {tenant!r}"))
    return out


def hostile_callers(tenants: Sequence[str]) -> list[HostileCaller]:
    """Every hostile caller for ``tenants`` (see the module docstring), in a fixed order."""
    ordered = sorted(tenants)
    out = [HostileCaller(caller, what) for caller, what in FIXED_HOSTILE]
    seen: set[str | None] = {h.caller for h in out}
    for position, tenant in enumerate(ordered):
        other = ordered[(position + 1) % len(ordered)]
        for caller, what in tenant_variants(tenant, ordered):
            if caller not in seen:
                seen.add(caller)
                out.append(HostileCaller(caller, what, (tenant,)))
        if other == tenant:
            continue
        for caller, what in syntax_variants(tenant, other, ordered):
            if caller not in seen:
                seen.add(caller)
                out.append(HostileCaller(caller, what, (tenant, other)))
    return out
