"""Mask every form of a secret (an auth token, an API key) in text: one place, used at the source.

:func:`redactor` gives a :class:`Redactor` for one secret; ``redactor(secret).text(s)`` returns ``s``
with each occurrence of the secret, in any of these forms, replaced by :data:`MARKER`:

- **raw**, and **encoded** character by character, mixed freely within one occurrence: JSON escapes
  (``\\/``, ``\\"``, ``\\uXXXX`` of any character, hex digits in either case, the backslash itself
  escaped again as in ``\\\\u002B``), URL percent-encoding (``%2F`` / ``%2f`` of any character, ``%252F``
  when encoded twice, ``+`` for a space) and HTML character references (``&#47;``, ``&#x2F;``);
- **base64** (standard and URL-safe alphabets) of the secret at each of the three byte alignments, so
  the secret is found inside a larger base64 blob that carries it, e.g. an HTTP Basic credential
  ``base64(user:token)``; the 0-2 characters at each edge of such a piece also carry bits of the
  neighbouring bytes and are not masked (they hold at most 4 bits of the secret each);
- **hexadecimal** of its UTF-8 bytes (either case);
- **pieces**: any run of 8 or more consecutive characters of the secret, or of its base64/hex forms
  (a service that truncates the token it echoes), in any of the encodings above. Such a piece is
  masked as a whole, however long.

False positives are kept out in two ways. A secret shorter than 8 characters is masked only whole
and only when it is not part of a longer word (no letter or digit right before or after it). An
8-character piece that looks like an ordinary word (all lower case, all capitals, or one capital
then lower case, e.g. ``password`` inside ``mypassword1``) is not masked on its own, so prose that
happens to contain it stays intact; the secret as a whole is always masked. A random token has such
a piece with probability below 0.1 %.

Speed: the patterns are built once per secret (:func:`redactor` caches them). A text is scanned
once by a regular expression for runs of characters that can make up an encoded piece; only runs
of 8 or more such characters are looked at, and a run that is an ordinary word is skipped at once.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

MARKER = "[redacted]"
"""What every masked occurrence becomes."""
MIN_PIECE = 8
"""Shortest piece of a secret that is masked (shorter secrets are masked only whole)."""

_ESCAPE_CHARS = "\\%&"
_UNIT_CHARS = "\\\\u0-9a-fA-F/\"'%&#;xX"
"""Every character that can occur in an encoded character (the escape forms below)."""
_UNIT_CLASS = re.compile(f"[{_UNIT_CHARS}]")
_UNIT = re.compile(
    r"\\+u([0-9a-fA-F]{4})"  # JSON \uXXXX, possibly escaped again
    r"|\\+([/\"'])"  # JSON \/ and escaped quotes
    r"|%(?:25)*([0-9a-fA-F]{2})"  # percent-encoding, possibly twice or more
    r"|&#([0-9]{1,7});"  # HTML decimal reference
    r"|&#[xX]([0-9a-fA-F]{1,6});"  # HTML hex reference
    r"|(.)",
    re.DOTALL,
)
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+")
_NOTHING = "\0"
"""Stands for a character that cannot be part of a secret (never in a piece)."""


def _base64_forms(data: bytes) -> list[str]:
    """Base64 of ``data`` whole (padded) and at byte offsets 0, 1, 2 inside a larger blob.

    At offset ``o`` the first ``ceil(8o/6)`` characters mix in the preceding bytes and the characters
    from ``floor(8(o+n)/6)`` on mix in the following ones; the piece between depends on ``data`` only.
    """
    forms = [base64.b64encode(data).decode("ascii")]
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + data).decode("ascii")
        forms.append(encoded[-(-8 * offset // 6) : 8 * (offset + len(data)) // 6])
    urlsafe = [f.replace("+", "-").replace("/", "_") for f in forms]
    return [f for f in dict.fromkeys(forms + urlsafe) if f]


def _word_like(piece: str) -> bool:
    return _WORD.fullmatch(piece) is not None


_COMMONNESS = ' etaoinsrhldcumfpgwyb,."v:k01-\n2TSAICx5MPN3ODEBR9WF4L6H78GUjq/_YKVJzXQZ+='
"""Characters from frequent to rare in English prose and JSON (a rough order; unlisted ones are rarest)."""


def _char_rarity(char: str) -> int:
    return _COMMONNESS.find(char) if char in _COMMONNESS else len(_COMMONNESS)


def _rarity(pair: str) -> tuple[int, int]:
    """Rank of a two-character string: the rarer its rarer character, then its other one."""
    first, second = _char_rarity(pair[0]), _char_rarity(pair[1])
    return max(first, second), min(first, second)


def _hex_either_case(code: str) -> str:
    return "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else c for c in code)


def _escape_patterns(alphabet: set[str]) -> list[tuple[str, re.Pattern[str]]]:
    """Escapes (JSON, percent, HTML) that decode to a character of ``alphabet`` (ASCII), each with
    the literal it starts with (searched for first: ``re`` finds a literal prefix fast)."""
    codes = "|".join(_hex_either_case(f"{ord(c):02x}") for c in sorted(alphabet))
    decimal = "|".join(str(ord(c)) for c in sorted(alphabet))
    found = [
        ("\\u00", rf"\\u00(?:{codes})"),
        ("%", rf"%(?:25)*(?:{codes})"),
        ("&#", rf"&#(?:[xX]0*(?:{codes})|0*(?:{decimal}));"),
    ]
    if "/" in alphabet:
        found.append(("\\/", r"\\/"))
    return [(literal, re.compile(pattern)) for literal, pattern in found]


def _sentinel_pattern(pieces: frozenset[str]) -> re.Pattern[str] | None:
    """The sentinels: the rarest pair of neighbouring characters of each piece (:func:`_rarity`), so
    every piece holds one. A match starts at the rarer character of its pair, the other one checked
    by a lookahead or lookbehind, so ``re`` only stops at the (rare) characters that start a branch.
    """
    after: dict[str, set[str]] = {}
    before: dict[str, set[str]] = {}
    for piece in pieces:
        pair = max((piece[i : i + 2] for i in range(len(piece) - 1)), key=_rarity)
        if _char_rarity(pair[0]) >= _char_rarity(pair[1]):
            after.setdefault(pair[0], set()).add(pair[1])
        else:
            before.setdefault(pair[1], set()).add(pair[0])

    def chars(group: set[str]) -> str:
        return "[" + "".join(re.escape(c) for c in sorted(group)) + "]"

    branches = []
    for char in sorted(after.keys() | before.keys()):
        checks = [f"(?={chars(after[char])})"] if char in after else []
        checks += [f"(?<={chars(before[char])}{re.escape(char)})"] if char in before else []
        branches.append(re.escape(char) + (checks[0] if len(checks) == 1 else f"(?:{'|'.join(checks)})"))
    return re.compile("|".join(branches)) if branches else None


def _masked(text: str, spans: Iterable[tuple[int, int]], marker: str) -> str:
    out: list[str] = []
    last = 0
    for start, end in _merge(spans):
        out += [text[last:start], marker]
        last = end
    out.append(text[last:])
    return "".join(out)


def _merge(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


class Redactor:
    """Masks one secret in every form listed in the module docstring (build with :func:`redactor`)."""

    def __init__(self, secret: str, marker: str = MARKER) -> None:
        self.marker = marker
        self._short = len(secret) < MIN_PIECE
        data = secret.encode("utf-8")
        if self._short:
            forms = [secret, base64.b64encode(data).decode("ascii")] if secret else []
        else:
            forms = [secret, *_base64_forms(data), data.hex(), data.hex().upper()]
        self._whole = [f for f in dict.fromkeys(forms) if f]
        self._pieces: frozenset[str] = frozenset()
        if not self._short:
            self._pieces = frozenset(
                f[i : i + MIN_PIECE]
                for f in self._whole
                for i in range(len(f) - MIN_PIECE + 1)
                if not _word_like(f[i : i + MIN_PIECE])
            )
        # Whole forms that the pieces do not cover (short secrets; a form with a word-like piece).
        self._exact = [
            f
            for f in self._whole
            if self._short or any(_word_like(f[i : i + MIN_PIECE]) for i in range(len(f) - MIN_PIECE + 1))
        ]
        self._skip_words = not any(_word_like(f) for f in self._exact)
        alphabet = set("".join(self._whole))
        self._plus_space = " " in alphabet
        if self._plus_space:
            alphabet.add("+")
        self._raw_escapes = any(c in alphabet for c in _ESCAPE_CHARS)
        shortest = min((len(f) for f in self._whole), default=1)
        width = shortest if self._short else MIN_PIECE
        extra = "".join(re.escape(c) for c in sorted(alphabet) if not _UNIT_CLASS.match(c))
        chars = _UNIT_CHARS + extra
        self._run = re.compile(f"[{chars}]{{{width},}}") if self._whole else None
        # The quick path (no decoding) serves ASCII secrets without a space, backslash, % or &.
        self._quick = secret.isascii() and not (alphabet & set(_ESCAPE_CHARS + "\"' "))
        self._escapes = _escape_patterns(alphabet)
        self._sentinel = _sentinel_pattern(self._pieces)

    # -- matching ------------------------------------------------------------------------------------
    def _decodings(self, run: str) -> list[tuple[str, list[int]]]:
        """``run`` decoded one character per unit, with the run offset where each unit starts."""
        if not any(c in run for c in _ESCAPE_CHARS):
            out = [(run, list(range(len(run) + 1)))]
        else:
            chars: list[str] = []
            starts: list[int] = []
            for unit in _UNIT.finditer(run):
                starts.append(unit.start())
                code = unit.group(1) or unit.group(3) or unit.group(4) or unit.group(5)
                if code is not None:
                    base = 10 if unit.group(4) else 16
                    number = int(code, base)
                    chars.append(chr(number) if number <= 0x10FFFF else _NOTHING)
                else:
                    chars.append(unit.group(2) or unit.group(6))
            starts.append(len(run))
            out = [("".join(chars), starts)]
            if self._raw_escapes:  # the secret holds \ % or &: also read the run as it is
                out.append((run, list(range(len(run) + 1))))
        if self._plus_space:
            out += [(text.replace("+", " "), starts) for text, starts in out if "+" in text]
        return out

    def _bounded(self, text: str, begin: int, end: int) -> bool:
        """A short secret only counts when no letter or digit touches it."""
        return not (begin > 0 and text[begin - 1].isalnum()) and not (end < len(text) and text[end].isalnum())

    def _spans(self, run: str, text: str, offset: int) -> list[tuple[int, int]]:
        spans: list[tuple[int, int]] = []
        for decoded, starts in self._decodings(run):
            if self._pieces:
                hits = [
                    i
                    for i in range(len(decoded) - MIN_PIECE + 1)
                    if decoded[i : i + MIN_PIECE] in self._pieces
                ]
                spans += [(starts[i], starts[i + MIN_PIECE]) for i in hits]
            for form in self._exact:
                at = decoded.find(form)
                while at >= 0:
                    begin, end = offset + starts[at], offset + starts[at + len(form)]
                    if not self._short or self._bounded(text, begin, end):
                        spans.append((starts[at], starts[at + len(form)]))
                    at = decoded.find(form, at + 1)
        return spans

    # -- public --------------------------------------------------------------------------------------
    def text(self, text: str) -> str:
        """``text`` with every occurrence of the secret, in any form, replaced by the marker."""
        if self._run is None or not text:
            return text
        spans = self._quick_spans(text) if self._quick else None
        if spans is None:
            spans = self._run_spans(text)
        return _masked(text, spans, self.marker) if spans else text

    def _quick_spans(self, text: str) -> list[tuple[int, int]] | None:
        """Spans found without decoding, or ``None`` when the text holds an escape that may encode the
        secret (then every run is decoded, :meth:`_run_spans`).

        Every piece contains its sentinel (its rarest pair of characters, see
        :func:`_sentinel_pattern`), so only the eight windows around each sentinel found need a look.
        """
        if any(literal in text and escape.search(text) for literal, escape in self._escapes):
            return None
        spans: list[tuple[int, int]] = []
        checked = -1
        last = len(text) - MIN_PIECE
        pieces = self._pieces
        found = self._sentinel.search(text) if self._sentinel is not None else None
        while found is not None:
            at = found.start()
            first = at - MIN_PIECE + 1
            for i in range(first if first > checked else checked + 1, (at if at < last else last) + 1):
                if text[i : i + MIN_PIECE] in pieces:
                    spans.append((i, i + MIN_PIECE))
            checked = at if at < last else last
            found = found.re.search(text, at + 1)  # sentinels may overlap
        for form in self._exact:
            at = text.find(form)
            while at >= 0:
                if not self._short or self._bounded(text, at, at + len(form)):
                    spans.append((at, at + len(form)))
                at = text.find(form, at + 1)
        return spans

    def _run_spans(self, text: str) -> list[tuple[int, int]]:
        """Spans found by decoding every run of characters that may encode a piece."""
        spans: list[tuple[int, int]] = []
        for match in self._run.finditer(text) if self._run is not None else ():
            run = match.group()
            if self._skip_words and run.isalpha() and _word_like(run):
                continue
            spans += [
                (match.start() + a, match.start() + b) for a, b in self._spans(run, text, match.start())
            ]
        return spans

    def __call__(self, text: str) -> str:
        return self.text(text)

    def value(self, value: Any) -> Any:
        """A JSON-like value with every string in it (dict keys too) redacted; other values as they are."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.value(k): self.value(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(self.value(v) for v in value)
        return value

    def body(self, body: bytes) -> bytes:
        """A response body with the secret masked. Read as JSON reads bytes (UTF-8, or UTF-16/32 by
        :func:`json.detect_encoding`); bytes that do not decode are kept as they are; a body that
        changed, or was not UTF-8, comes back in UTF-8."""
        if self._run is None or not body:
            return body
        encoding = json.detect_encoding(body)
        try:
            text = body.decode(encoding, "strict" if encoding != "utf-8" else "surrogateescape")
        except UnicodeDecodeError:
            encoding, text = "utf-8", body.decode("utf-8", "surrogateescape")
        redacted = self.text(text)
        if redacted is text and encoding == "utf-8":
            return body
        return redacted.encode("utf-8", "surrogateescape")


_NONE = Redactor("")


@lru_cache(maxsize=16)
def _cached(secret: str) -> Redactor:
    return Redactor(secret)


def redactor(secret: str | None) -> Redactor:
    """The :class:`Redactor` for ``secret`` (built once per secret); ``None`` or ``""`` masks nothing."""
    return _cached(secret) if secret else _NONE


def redact(text: str, secret: str | None) -> str:
    """``text`` with every form of ``secret`` masked (shorthand for ``redactor(secret).text(text)``)."""
    return redactor(secret).text(text)
