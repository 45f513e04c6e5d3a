"""The encoded forms a leak can hide in, decoded so the attribution sees the text underneath.

A service can carry another tenant's text inside a string that does not read as text: base64 (a
cursor, a trace blob), percent-encoding (a "more results" link), HTML entities (a preview rendered for
a browser) or JSON serialised into a string (an ``explain`` field). :func:`decoded_forms` gives what each
decoding yields when it changes the string and yields text; :func:`embedded_json` parses a string that
holds a JSON object or array. The walker of returned values (:mod:`ragaudit.security.item_fields`)
applies both recursively, a bounded number of times (:data:`MAX_DECODINGS`).

Nothing here guesses: base64 counts only when the whole string is base64 of at least
:data:`MIN_BASE64_CHARS` characters and decodes to UTF-8 text that is nearly all printable with some
letters; percent-encoding and entities only when the string holds an escape that changes it.
"""

from __future__ import annotations

import base64
import binascii
import html
import json
import re
from functools import lru_cache
from typing import Any
from urllib.parse import unquote, unquote_plus

MAX_DECODINGS = 4
"""Decodings applied one inside another at most (``base64`` of ``json`` of a percent-encoded URL is 3)."""
MIN_BASE64_CHARS = 16
MAX_DECODED_CHARS = 200_000
"""Longer strings are not decoded (nor parsed as JSON)."""
_BASE64 = re.compile(r"[A-Za-z0-9+/_-]+={0,2}")
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")


def _text_of(raw: bytes) -> str | None:
    """``raw`` as UTF-8 text when it is readable text: nearly all printable, with letters."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    printable = sum(1 for ch in text if ch.isprintable() or ch in "\n\r\t")
    letters = sum(1 for ch in text if ch.isalpha())
    return text if printable >= 0.97 * len(text) and letters >= 4 else None


def _base64_text(value: str) -> str | None:
    if len(value) < MIN_BASE64_CHARS or not _BASE64.fullmatch(value):
        return None
    padded = value + "=" * (-len(value) % 4)
    altchars = b"-_" if ("-" in value or "_" in value) else None
    try:
        raw = base64.b64decode(padded, altchars=altchars, validate=True)
    except (binascii.Error, ValueError):
        return None
    return _text_of(raw)


@lru_cache(maxsize=1 << 16)
def decoded_forms(value: str) -> tuple[tuple[str, str], ...]:
    """``(encoding, decoded text)`` for each of ``url``, ``html`` and ``base64`` that changes ``value``
    into text (empty for plain text: the common case costs three cheap checks; memoised, responses
    repeat their values)."""
    text = value.strip()
    if not text or len(text) > MAX_DECODED_CHARS:
        return ()
    out: list[tuple[str, str]] = []
    if "%" in text and _PERCENT.search(text):
        plain = unquote(text) if " " in text else unquote_plus(text)
        if plain != text:
            out.append(("url", plain))
    if "&" in text and _ENTITY.search(text):
        plain = html.unescape(text)
        if plain != text:
            out.append(("html", plain))
    if " " not in text:
        found = _base64_text(text)
        if found is not None:
            out.append(("base64", found))
    return tuple(out)


def embedded_json(value: str) -> Any | None:
    """The JSON object or array ``value`` holds (``None`` when it holds none)."""
    text = value.strip()
    if len(text) < 2 or len(text) > MAX_DECODED_CHARS or (text[0], text[-1]) not in (("{", "}"), ("[", "]")):
        return None
    try:
        found = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return found if isinstance(found, (dict, list)) else None
