"""Text normalisation shared by ownership, canaries and probes."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)


def normalize_text(text: str) -> str:
    """NFKC, case folded, every run of non-alphanumeric characters as one space, trimmed."""
    return _NON_WORD.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def contains_phrase(haystack: str, phrase: str) -> bool:
    """Whether normalised ``phrase`` occurs in normalised ``haystack`` on word boundaries."""
    needle = normalize_text(phrase)
    return bool(needle) and f" {needle} " in f" {normalize_text(haystack)} "


def shingles(words: Sequence[str], size: int) -> set[tuple[str, ...]]:
    """The set of ``size``-word windows of ``words`` (empty when there are fewer words)."""
    return {tuple(words[i : i + size]) for i in range(len(words) - size + 1)}
