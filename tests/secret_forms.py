"""The forms a careless service gives a credential, and the needles a test searches output for.

Written independently of :mod:`ragaudit.redaction` (the oracle must not share its code): ``echoes``
is what a service may send back, ``needles`` everything no artifact may contain.
"""

from __future__ import annotations

import base64
import json
import re
from urllib.parse import quote, quote_plus

TOKENS = (
    "Sk9/aB+Zq7Xy=Lm8Ow/tR4+uPvN1dE=",
    "tok+/Q3w=e9R/T2y+U5i=O0p/A1s+D4f",
)
"""Tokens with ``/``, ``+`` and ``=`` (the characters every encoding treats differently)."""


def _upper_hex(text: str) -> str:
    return re.sub(r"%[0-9a-f]{2}", lambda m: m.group().upper(), text)


def _lower_hex(text: str) -> str:
    return re.sub(r"%[0-9A-F]{2}", lambda m: m.group().lower(), text)


def _json_u(text: str, upper: bool, every: bool) -> str:
    spec = "04X" if upper else "04x"
    return "".join(f"\\u{ord(c):{spec}}" if every or not c.isalnum() else c for c in text)


def _escaped(text: str) -> set[str]:
    """``text`` raw, JSON-escaped (``\\/`` once or twice, ``\\uXXXX`` of the specials or of every
    character, either case), and URL-encoded (specials or every character, either case, ``+`` form)."""
    every = "".join(f"%{b:02X}" for b in text.encode())
    return {
        text,
        text.replace("/", "\\/"),
        _json_u(text, upper=True, every=False),
        _json_u(text, upper=False, every=False),
        _json_u(text, upper=True, every=True),
        _json_u(text, upper=False, every=True),
        text.replace("/", "\\\\/"),
        quote(text, safe=""),
        _lower_hex(quote(text, safe="")),
        quote_plus(text),
        every,
        every.lower(),
    }


def _base64_pieces(data: bytes) -> set[str]:
    """Base64 of ``data`` whole and its stable middle at byte offsets 0-2 of a larger blob."""
    out = {base64.b64encode(data).decode(), base64.urlsafe_b64encode(data).decode()}
    for offset in range(3):
        encoded = base64.b64encode(b"\x00" * offset + data).decode()
        middle = encoded[-(-8 * offset // 6) : 8 * (offset + len(data)) // 6]
        out |= {middle, middle.replace("+", "-").replace("/", "_")}
    return out


def _word_like(piece: str) -> bool:
    return re.fullmatch(r"[A-Z]?[a-z]+|[A-Z]+", piece) is not None


def needles(token: str) -> set[str]:
    """Every form of ``token`` and of each of its 8-character windows that must never be written."""
    data = token.encode()
    forms = {token, data.hex(), data.hex().upper(), *_base64_pieces(data)}
    windows = {f[i : i + 8] for f in forms for i in range(len(f) - 7)}
    raw = {w for w in windows | forms if not _word_like(w)}
    return {form for piece in raw for form in _escaped(piece)}


def echoes(token: str) -> dict[str, str]:
    """What a careless service echoes: the token whole, encoded, in base64 blobs, truncated."""
    data = token.encode()
    return {
        "raw": token,
        "bearer": f"Bearer {token}",
        "json_slash": token.replace("/", "\\/"),
        "json_u_upper": _json_u(token, upper=True, every=False),
        "json_u_lower_every": _json_u(token, upper=False, every=True),
        "json_twice": token.replace("/", "\\\\/"),
        "url": quote(token, safe=""),
        "url_lower": _lower_hex(quote(token, safe="")),
        "url_every": "".join(f"%{b:02x}" for b in data),
        "url_plus": quote_plus(f"Bearer {token}"),
        "base64": base64.b64encode(data).decode(),
        "basic": base64.b64encode(f"svc-user:{token}".encode()).decode(),
        "blob": base64.b64encode(json.dumps({"k": 1, "auth": token}).encode()).decode(),
        "urlsafe_blob": base64.urlsafe_b64encode(b"xy" + data + b"z").decode(),
        "hex": data.hex(),
        "trunc8": token[:8],
        "trunc10": token[5:15],
        "trunc12": token[-12:],
        "trunc_json": token[2:13].replace("/", "\\/"),
        "trunc_url": _upper_hex(quote(token[4:16], safe="")),
        "trunc_base64": base64.b64encode(data[:12]).decode(),
    }


def leaked(token: str, texts: dict[str, str]) -> list[str]:
    """``where: needle`` for each needle found in the named texts."""
    found = []
    for where, text in texts.items():
        found += [f"{where}: {n}" for n in sorted(needles(token)) if n in text]
    return found
