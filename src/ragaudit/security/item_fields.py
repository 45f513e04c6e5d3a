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

Values are found in mappings, lists, sets, dataclass instances and objects' public attributes, and
**decoded** (:mod:`ragaudit.security.decoding`): a base64, percent-encoded or HTML-entity string is
listed again decoded (path ``...|base64``), and JSON held in a string is walked (``...|json.key``). A
string in a list of strings carries its ``siblings``: a list whose strings are all corpus ids is a
list of ids whatever its key (``see_also``), which the ownership index decides.
:func:`value_fields` walks any value (a whole response, with JSON paths from ``$``).

``content`` and ``chunk_id`` are attributed by the index itself (they always were).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from types import ModuleType
from typing import Any, Literal

from ragaudit.data.run import RankedItem
from ragaudit.security.decoding import MAX_DECODINGS, decoded_forms, embedded_json

MAX_DEPTH = 12
"""Nested values deeper than this are not inspected (a decoding counts as a level)."""
MAX_FIELDS = 256
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
_PLAIN_KEY = re.compile(r"[A-Za-z_$@][A-Za-z0-9_$@]*")
"""A key that names a field (``doc_id``, ``seeAlso``); any other key may itself be data."""
_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9]*(?:\s[^<>]{0,200})?/?>")


@lru_cache(maxsize=4096)
def is_id_key(key: str) -> bool:
    """Whether a field name names an id or a source (``doc_id``, ``docId``, ``source_ids``, ``sources``)."""
    return bool(_ID_SUFFIX.search(key)) or key.casefold() in _ID_WORDS


@lru_cache(maxsize=4096)
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
    """One value of a returned chunk (or of a whole response) to attribute: where it is, whether it is
    an id or a text."""

    path: str
    """Where it was: ``source_id``, ``title``, ``metadata.related[0].doc_id``, ``$.facets.customer[3]``;
    a decoded value adds its encoding: ``$.debug.trace|base64|json.hits[0].text``."""
    kind: Literal["id", "text"]
    value: str
    quoted: bool = False
    """The value sits under a key that holds text taken from documents (:func:`is_text_key`): a short
    fragment of it (a highlight) is matched verbatim, not only as a whole title."""
    siblings: tuple[str, ...] = ()
    """For a string in a list of strings only: every string of that list. A list whose strings are all
    corpus ids is a list of ids, whatever its key is called (``see_also``, ``related``)."""


class _Walk:
    """One walk over a value: where to stop, what to skip, what was found so far."""

    def __init__(self, max_depth: int, max_fields: int, skip: frozenset[str]) -> None:
        self.max_depth = max_depth
        self.max_fields = max_fields
        self.skip = skip
        self.found: list[ItemField] = []

    def full(self) -> bool:
        return len(self.found) >= self.max_fields

    def value(
        self,
        value: Any,
        path: str,
        id_context: bool,
        quoted: bool,
        depth: int,
        decodings: int,
        siblings: tuple[str, ...] = (),
    ) -> None:
        if _holds_no_text(value):
            return
        if depth > self.max_depth or self.full() or (self.skip and path in self.skip):
            return
        if isinstance(value, bytes):
            value = value.decode("utf-8", "replace")
        if isinstance(value, str):
            self.string(value, path, id_context, quoted, depth, decodings, siblings)
        elif isinstance(value, (list, tuple, set, frozenset)):
            inner = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
            strings = tuple(inner) if inner and all(isinstance(v, str) for v in inner) else ()
            for position, each in enumerate(inner):
                if not _holds_no_text(each):
                    self.value(each, f"{path}[{position}]", id_context, quoted, depth + 1, decodings, strings)
        else:
            for name, each in (_members(value) or {}).items():
                if _PLAIN_KEY.fullmatch(name):
                    if _holds_no_text(each):  # a number, a flag, null: nothing to attribute
                        continue
                    where = f"{path}.{name}" if path else name
                else:  # a key that is data (a facet value, a document id): attributed as a value too
                    where = f"{path}[{json.dumps(name, ensure_ascii=False)}]"
                    self.string(name, f"{where}(key)", False, False, depth + 1, decodings, ())
                self.value(each, where, is_id_key(name), is_text_key(name), depth + 1, decodings)

    def string(
        self,
        value: str,
        path: str,
        id_context: bool,
        quoted: bool,
        depth: int,
        decodings: int,
        siblings: tuple[str, ...],
    ) -> None:
        if not value.strip() or self.full():
            return
        parsed = embedded_json(value) if decodings else None
        if parsed is not None:  # JSON serialised into a string: its values, each with its own key
            self.value(parsed, f"{path}|json", False, quoted, depth + 1, decodings - 1)
            return
        if id_context:
            self.found.append(ItemField(path, "id", value))
        else:
            self.found.append(ItemField(path, "text", strip_markup(value), quoted, siblings))
        if decodings:
            for encoding, plain in decoded_forms(value):
                self.string(plain, f"{path}|{encoding}", id_context, quoted, depth + 1, decodings - 1, ())


def _holds_no_text(value: Any) -> bool:
    """``None``, a bool or a number: what :meth:`_Walk.value` skips at once (so no path is built for it)."""
    return value is None or isinstance(value, (bool, int, float))


def _members(value: Any) -> Mapping[str, Any] | None:
    """The named members of a mapping, a dataclass instance or a plain object (public attributes)."""
    if isinstance(value, Mapping):
        return value if all(isinstance(k, str) for k in value) else {str(k): v for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name, None) for f in dataclasses.fields(value)}
    if isinstance(value, (type, ModuleType)) or callable(value):
        return None
    found = getattr(value, "__dict__", None)
    if isinstance(found, dict):
        return {str(k): v for k, v in found.items() if not str(k).startswith("_")}
    return None


def value_fields(
    value: Any,
    root: str = "",
    *,
    max_fields: int = MAX_FIELDS,
    max_depth: int = MAX_DEPTH,
    skip: frozenset[str] = frozenset(),
) -> list[ItemField]:
    """Every string of ``value`` (mappings, lists, dataclasses and objects' public attributes, at any
    depth up to ``max_depth``; the decoded forms of encoded strings and the values of JSON held in
    strings too), as ids or texts (see the module docstring), at most ``max_fields``; paths in
    ``skip`` (``$.results``) are left out."""
    walk = _Walk(max_depth, max_fields, skip)
    walk.value(value, root, False, False, 0, MAX_DECODINGS)
    return walk.found


def _json_key(value: Any) -> str | None:
    """``value`` as JSON text when it is plain JSON data (its walk depends on nothing else), else ``None``;
    ``""`` for an empty value, which adds no field (the common case, with no encoding)."""
    if not value:
        return ""
    try:
        return json.dumps(value, ensure_ascii=False, check_circular=False)
    except (TypeError, ValueError, RecursionError):
        return None


_SEEN: dict[tuple[str | None, str, str], tuple[ItemField, ...]] = {}
_MAX_SEEN = 50_000


def item_fields(item: RankedItem) -> tuple[ItemField, ...]:
    """The fields of ``item`` beyond ``chunk_id`` and ``content`` (see the module docstring), in order.
    Memoised for plain JSON data: an audit sees the same chunks with the same fields thousands of times."""
    extra, metadata = _json_key(item.extra), _json_key(item.metadata)
    key = (item.source_id, extra, metadata) if extra is not None and metadata is not None else None
    if key is not None:
        cached = _SEEN.get(key)
        if cached is not None:
            return cached
    found: list[ItemField] = []
    if item.source_id:
        found.append(ItemField("source_id", "id", item.source_id))
    for name, value in ((None, item.extra), ("metadata", item.metadata)):
        if value:
            found += value_fields(value, name or "", max_fields=MAX_FIELDS - len(found))
        if len(found) >= MAX_FIELDS:
            break
    fields = tuple(found)
    if key is not None:
        if len(_SEEN) >= _MAX_SEEN:
            _SEEN.clear()
        _SEEN[key] = fields
    return fields
