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
- **path segments**: ``t/../u``, ``../u``, ``./t``;
- **Unicode** (:func:`unicode_variants`): ``t`` with an accent on its last vowel, precomposed (``acmé``)
  and decomposed (``acme`` + U+0301, an NFD form), the NFC / NFD / NFKC / NFKD forms of ``t`` when they
  differ from it, mathematical bold letters (NFKC folds them), every letter that has one replaced by its
  Cyrillic look-alike, the first by its Greek look-alike, and case-folding tricks (``ſ`` for ``s``,
  the Kelvin sign for ``k``, dotless ``ı`` for ``i``, ``ß`` for ``ss``): a filter that folds accents,
  normalises compatibility forms or maps confusables reads ``t``'s data with them;
- **patterns that match ``t`` exactly** (:func:`pattern_variants`): ``t`` with a tab, a no-break space,
  a NUL byte or a line separator appended, ``t`` with its last character as a ``LIKE`` ``_``, a regex
  ``.`` and a glob ``?``, and ``t``'s first letter followed by ``*`` and ``%``.

Ids equal to a real tenant are skipped. Each id records the tenants it names (``t``, and ``u`` for the
ids built from both), so the audit asks it those tenants' probes.
"""

from __future__ import annotations

import json
import unicodedata
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
GREEK_LOOKALIKES = {
    "a": "α", "i": "ι", "k": "κ", "o": "ο", "p": "ρ", "u": "υ", "v": "ν",
    "A": "Α", "B": "Β", "E": "Ε", "H": "Η", "I": "Ι", "K": "Κ", "M": "Μ", "N": "Ν", "O": "Ο", "P": "Ρ",
    "T": "Τ", "X": "Χ", "Y": "Υ", "Z": "Ζ",
}  # fmt: skip
"""Latin letters and the Greek letters that look the same (UTS #39 confusables)."""
CASEFOLD_TRICKS = (("ss", "ß"), ("s", "ſ"), ("k", "\u212a"), ("K", "\u212a"), ("i", "ı"))
"""``(Latin text, a character that case-folds or case-maps to it)``: ``"ſ".casefold() == "s"``, the
Kelvin sign folds to ``k``, ``"ı".upper() == "I"``, ``"ß".casefold() == "ss"``."""
_ACUTE = "\u0301"
_VOWELS = "aeiouyAEIOUY"


@dataclass(frozen=True)
class HostileCaller:
    """A tenant id that is not a tenant, what it is, and the real tenants it names."""

    caller: str | None
    description: str
    names: tuple[str, ...] = ()
    """The real tenants the id is built from (their probes are asked as it); empty for fixed ids."""
    family: str = "fixed"
    """``fixed``, ``near-miss``, ``syntax``, ``unicode`` or ``pattern`` (the report counts outcomes by family)."""


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
    return _first_swap(tenant, LOOKALIKES)


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
        (f"{tenant}/", "trailing slash a/"),
        (f"{tenant}.", "trailing dot a."),
    ]
    named = [(value, f"{what} (a={tenant!r}, b={other!r})") for value, what in candidates]
    return _unique(named, tenant, real)


def _bold(text: str) -> str:
    """``text`` in mathematical bold letters and digits (NFKC folds them back)."""
    out = []
    for c in text:
        if "a" <= c <= "z":
            out.append(chr(0x1D41A + ord(c) - ord("a")))
        elif "A" <= c <= "Z":
            out.append(chr(0x1D400 + ord(c) - ord("A")))
        elif "0" <= c <= "9":
            out.append(chr(0x1D7CE + ord(c) - ord("0")))
        else:
            out.append(c)
    return "".join(out)


def _accented(tenant: str, decomposed: bool) -> str | None:
    """``tenant`` with an acute accent on its last vowel (``acmé``), precomposed or as a combining mark."""
    for position in range(len(tenant) - 1, -1, -1):
        if tenant[position] in _VOWELS:
            mark = tenant[position] + _ACUTE
            mark = mark if decomposed else unicodedata.normalize("NFC", mark)
            return tenant[:position] + mark + tenant[position + 1 :]
    return None


def unicode_variants(tenant: str, real: Iterable[str]) -> list[tuple[str, str]]:
    """Ids that differ from ``tenant`` by accents, Unicode normalisation, compatibility forms, confusable
    letters or case-folding tricks: ``(id, description)``, real tenants and repeats left out."""
    candidates: list[tuple[str | None, str]] = [
        (_accented(tenant, decomposed=False), "accented (precomposed, NFC)"),
        (_accented(tenant, decomposed=True), "accented (combining mark, NFD)"),
        *((unicodedata.normalize(form, tenant), f"{form} form") for form in ("NFC", "NFD", "NFKC", "NFKD")),
        (_bold(tenant), "mathematical bold (NFKC folds it)"),
        ("".join(LOOKALIKES.get(c, c) for c in tenant), "Cyrillic look-alikes for every letter"),
        (_first_swap(tenant, GREEK_LOOKALIKES), "Greek look-alike"),
        *((_trick(tenant, latin, other), f"{other!r} for {latin!r} (case folding)") for latin, other in CASEFOLD_TRICKS),
    ]  # fmt: skip
    return _unique([(v, w) for v, w in candidates if v is not None and v != tenant], tenant, real)


def pattern_variants(tenant: str, real: Iterable[str]) -> list[tuple[str, str]]:
    """Ids a pattern match, a trimming or a C string would read as ``tenant``: ``(id, description)``."""
    candidates = [
        (f"{tenant}\t", "trailing tab"),
        (f"{tenant}\u00a0", "trailing no-break space"),
        (f"{tenant}\x00", "trailing NUL byte"),
        (f"{tenant}\u2028", "trailing line separator"),
        (f"{tenant[:-1]}_", "LIKE pattern (last character as _)"),
        (f"{tenant[:-1]}.", "regex (last character as .)"),
        (f"{tenant[:-1]}?", "glob (last character as ?)"),
        (f"{tenant[:1]}*", "glob first letter *"),
        (f"{tenant[:1]}%", "LIKE first letter %"),
    ]
    return _unique(candidates, tenant, real) if len(tenant) > 1 else []


def _first_swap(tenant: str, table: dict[str, str]) -> str | None:
    for position, char in enumerate(tenant):
        if char in table:
            return tenant[:position] + table[char] + tenant[position + 1 :]
    return None


def _trick(tenant: str, latin: str, other: str) -> str | None:
    return tenant.replace(latin, other, 1) if latin in tenant else None


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
        for family, variants in (
            ("near-miss", tenant_variants(tenant, ordered)),
            ("unicode", unicode_variants(tenant, ordered)),
            ("pattern", pattern_variants(tenant, ordered)),
        ):
            for caller, what in variants:
                if caller not in seen:
                    seen.add(caller)
                    out.append(HostileCaller(caller, what, (tenant,), family))
        if other == tenant:
            continue
        for caller, what in syntax_variants(tenant, other, ordered):
            if caller not in seen:
                seen.add(caller)
                out.append(HostileCaller(caller, what, (tenant, other), "syntax"))
    return out
