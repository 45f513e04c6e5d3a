"""Words: the two word patterns, the light singular and lemma, content words, the NFKC normaliser."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from ragaudit.text.stopwords import STOPWORDS

WORD = re.compile(r"\w+")
"""A run of word characters (answers and context: ``50,000 API calls`` -> ``50``, ``000``, ``API``, ``calls``)."""
QUERY_WORD = re.compile(r"[^\W_](?:[\w&+’'-]*[^\W_])?\+*")
"""A query word, keeping inner hyphens, apostrophes, ``&`` and trailing ``+`` (``GPT-4``, ``C++``, ``AT&T``)."""
_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)


def singular(word: str) -> str:
    """A light plural strip: ``calls`` -> ``call``, ``days`` -> ``day``; ``access``/``status`` stay."""
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def lemma(word: str) -> str:
    """A crude singular for query words: lower-case, trailing ``'s`` / ``s`` dropped (not ``ss``, not short words)."""
    w = word.lower().replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    return w


def content_words(text: str) -> set[str]:
    """Lower-cased, singularised words of ``text`` that are not stop words."""
    return {singular(w) for w in (m.group(0).lower() for m in WORD.finditer(text)) if w not in STOPWORDS}


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
