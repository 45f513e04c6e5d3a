"""The query a caller sent, echoed back by the service, is no evidence of a leak.

Services echo the query: beside the results (``debug.query``, a ``did_you_mean``, a parsed or rewritten
query) and on each hit (``matched_query``, an ``explanation`` quoting it). The audit's probes quote
tenants' documents, so an echoed probe would read as its owner's text. For every text value of a
returned chunk (besides its content) and of the rest of the response:

- a value the query contains (normalised) is no evidence;
- a **near echo** is no evidence: at most :data:`NEAR_ECHO_EXTRA_WORDS` words longer than the query,
  with at least :data:`NEAR_ECHO_SHARE` of its words taken from the query (a spelling suggestion that
  changed one word, the query with ``+`` / ``OR`` added, a few synonyms appended);
- in a longer value, the query (2+ words) is cut out and the pieces around it are attributed.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

from ragaudit.security.item_fields import ItemField
from ragaudit.text.words import normalize_text

NEAR_ECHO_SHARE = 0.75
"""Share of a value's words that must come from the query for it to be a near echo."""
NEAR_ECHO_EXTRA_WORDS = 3
"""A near echo is at most this many words longer than the query."""


@lru_cache(maxsize=4096)
def _normalized(value: str) -> str:
    """``normalize_text`` of a field value (an audit gets the same values back thousands of times)."""
    return normalize_text(value)


def is_near_echo(value: str, asked: str) -> bool:
    """Whether the normalised ``value`` is the normalised query ``asked`` with a few words changed or added."""
    words, query = value.split(), asked.split()
    if len(words) < 2 or len(words) > len(query) + NEAR_ECHO_EXTRA_WORDS:
        return False
    known = set(query)
    return sum(w in known for w in words) >= NEAR_ECHO_SHARE * len(words)


def outside_query(field: ItemField, asked: str) -> list[ItemField]:
    """``field`` with the echoed query cut out (``asked`` normalised): nothing when the query contains it
    or it is a near echo, the pieces around it when it contains the query (2+ words), else ``field``."""
    if field.kind != "text" or not asked:
        return [field]
    value = _normalized(field.value)
    if not value or f" {value} " in f" {asked} " or is_near_echo(value, asked):
        return []
    if len(asked.split()) < 2 or f" {asked} " not in f" {value} ":
        return [field]
    pieces = (p.strip() for p in f" {value} ".split(f" {asked} "))
    return [replace(field, value=p, siblings=()) for p in pieces if p]
