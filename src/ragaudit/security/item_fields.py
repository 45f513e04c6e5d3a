"""Every field of a returned chunk that can carry another tenant's data, as ids and texts to attribute.

A leak is not only in ``chunk_id`` and ``content``: a service can serve a foreign document's title,
snippet or highlight, a ``metadata`` value (at any depth, in lists too) or a source / document id
beside the caller's own chunk. The ownership index (:mod:`ragaudit.security.ownership`) attributes
each field this module lists:

- **ids**: ``source_id``, and every string (or list of strings) under a key that names an id or a
  source: ``doc_id``, ``docId``, ``source_ids``, ``parent_id``, ``document``, ``sources``,
  ``citations``, ... (:func:`is_id_key`). Other short strings (``"status": "active"``) are not taken
  as ids: a numeric page number must not match a document called ``"2"``;
- **texts**: every other string of ``metadata`` and of the fields the retriever returned beyond the
  protocol's (``title``, ``snippet``, ``highlight``, ``highlights``, ...; :attr:`RankedItem.extra`),
  lists and nested objects included. Markup a highlighter adds (``<em>``, ``<b>``, ...) is removed.
  A value under a key that quotes document text (``highlight``, ``snippet``, ``passage``,
  ``excerpt``, ``text``, ...) is *quoted*: even a fragment of 2 to 4 words is matched verbatim.

``content`` and ``chunk_id`` are attributed by the index itself (they always were).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ragaudit.data.run import RankedItem

MAX_DEPTH = 8
"""Nested values deeper than this are not inspected (a chunk's fields are shallow in practice)."""
MAX_FIELDS = 64
"""At most this many fields of one chunk are attributed (the first ones in the response's order)."""
_ID_SUFFIX = re.compile(r"(?:^|[_\-.\s])(?:[iI][dD][sS]?)$|[a-z](?:Id|ID)s?$")
_ID_WORDS = frozenset(
    {
        "doc",
        "docs",
        "document",
        "documents",
        "source",
        "sources",
        "parent",
        "citation",
        "citations",
        "reference",
        "references",
        "refs",
    }
)
_TEXT_WORDS = frozenset(
    [
        "highlight",
        "highlights",
        "snippet",
        "snippets",
        "excerpt",
        "excerpts",
        "passage",
        "passages",
        "fragment",
        "fragments",
        "text",
        "texts",
        "content",
        "contents",
        "summary",
        "body",
        "context",
        "quote",
        "quotes",
        "answer",
        "chunk",
        "chunks",
    ]
)
_KEY_PARTS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9]*(?:\s[^<>]{0,200})?/?>")


def is_id_key(key: str) -> bool:
    """Whether a field name names an id or a source (``doc_id``, ``docId``, ``source_ids``, ``sources``)."""
    return bool(_ID_SUFFIX.search(key)) or key.casefold() in _ID_WORDS


def is_text_key(key: str) -> bool:
    """Whether a field name holds text taken from documents: its last word is ``highlight``, ``snippet``,
    ``passages``, ``text``, ... (``matchedText`` is, ``content_type`` is not)."""
    parts = _KEY_PARTS.findall(key)
    return bool(parts) and parts[-1].casefold() in _TEXT_WORDS


def strip_markup(text: str) -> str:
    """``text`` without HTML-like tags (a highlighter's ``<em>``), each replaced by a space."""
    return _TAG.sub(" ", text) if "<" in text else text


@dataclass(frozen=True)
class ItemField:
    """One value of a returned chunk to attribute: where it is, whether it is an id or a text."""

    path: str
    """Where it was: ``source_id``, ``title``, ``metadata.related[0].doc_id``."""
    kind: Literal["id", "text"]
    value: str
    quoted: bool = False
    """The value sits under a key that holds text taken from documents (:func:`is_text_key`): a short
    fragment of it (a highlight) is matched verbatim, not only as a whole title."""


def _walk(value: Any, path: str, id_context: bool, quoted: bool, depth: int) -> Iterator[ItemField]:
    if depth > MAX_DEPTH:
        return
    if isinstance(value, str):
        if value.strip() and id_context:
            yield ItemField(path, "id", value)
        elif value.strip():
            yield ItemField(path, "text", strip_markup(value), quoted)
    elif isinstance(value, Mapping):
        for key, inner in value.items():
            name = str(key)
            where = f"{path}.{name}" if path else name
            yield from _walk(inner, where, is_id_key(name), is_text_key(name), depth + 1)
    elif isinstance(value, (list, tuple)):
        for position, inner in enumerate(value):
            yield from _walk(inner, f"{path}[{position}]", id_context, quoted, depth + 1)


def item_fields(item: RankedItem) -> tuple[ItemField, ...]:
    """The fields of ``item`` beyond ``chunk_id`` and ``content`` (see the module docstring), in order."""
    found: list[ItemField] = []
    if item.source_id:
        found.append(ItemField("source_id", "id", item.source_id))
    for name, value in ((None, item.extra), ("metadata", item.metadata)):
        if not value:
            continue
        for got in _walk(value, name or "", False, False, 0):
            found.append(got)
            if len(found) >= MAX_FIELDS:
                return tuple(found)
    return tuple(found)
