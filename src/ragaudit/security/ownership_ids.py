"""Reading ids the way the ownership index (:mod:`ragaudit.security.ownership`) does: a chunker's
``D#n``, the characters that may end a document id inside a longer one, and which values are
distinctive enough to name a document at all."""

from __future__ import annotations

import re


def base_document_id(chunk_id: str) -> str | None:
    """``D`` for a chunker's chunk id ``D#n`` (``n`` decimal), else ``None``."""
    base, sep, tail = chunk_id.rpartition("#")
    return base if sep and base and tail.isdigit() else None


ID_SEPARATORS = frozenset(":/#|@._-")
"""Characters that may end a document id inside a longer id (``D:c0``, ``D/3``, ``D#2``)."""
_ID_TOKEN = re.compile(r"[^\s/?&=,;()\[\]{}<>\"'`]+")
"""A run of characters an id can hold, cut at whitespace and URL or prose punctuation."""


def is_distinctive_id(value: str) -> bool:
    """An id that cannot be an ordinary word or number: 6+ characters, a letter, and a digit or a
    separator (``acme-refund-policy-v2``, never ``"2"`` or ``"pricing"``)."""
    return (
        len(value) >= 6
        and any(ch.isalpha() for ch in value)
        and any(ch.isdigit() or ch in "-_:#/." for ch in value)
    )
