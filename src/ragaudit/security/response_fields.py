"""Every value of a whole response, attributed: what a service returns *beside* its result list.

A leak is not only in the chunks: a top-level ``debug``, ``suggest``, ``facets``, ``aggregations`` or
``related`` field can carry other tenants' ids, titles, customer names or text. The response reaches
the audit as:

- an HTTP service's parsed body (:class:`~ragaudit.retrieval.protocol.RetrievedList` from
  :class:`~ragaudit.retrieval.http.HttpRetriever`), whose chunk list (``items_path``) is left out here
  because each chunk is attributed on its own;
- a Python retriever's returned list, when it carries attributes (a ``list`` subclass with
  ``.facets``, ``.debug``, ...), or a :class:`~ragaudit.retrieval.protocol.RetrievedList` it built.

Every string at any depth is attributed (:meth:`OwnershipIndex.field_evidence`): ids (id-named keys,
lists of corpus ids under any key, distinctive ids alone), text by content, whole titles, tenant-exclusive
terms, canaries, and the same after decoding base64, percent-encoding, HTML entities and JSON held in
strings. Paths are JSON paths: ``$.facets.customer[3]``, ``$.debug.trace|base64|json.hits[0].text``.

**Query echo.** Services echo the query (``debug.query``, a "did you mean"), and the caller wrote it:
a value the query contains is no evidence, and the query's words inside a longer value are cut out
before the rest is attributed (the audit's probes quote tenants' documents, so an echoed probe would
otherwise read as the owner's text).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ragaudit.retrieval.protocol import RetrievedList
from ragaudit.security.item_fields import ItemField, value_fields
from ragaudit.security.ownership import FieldEvidence, OwnershipIndex
from ragaudit.text.words import normalize_text

MAX_RESPONSE_FIELDS = 4096
"""At most this many values of one response (beside its chunks) are attributed."""
MAX_RESPONSE_DEPTH = 16


@dataclass(frozen=True)
class ResponseEnvelope:
    """The whole response a ranking came in, and where the chunk list sits in it."""

    body: Any
    items_path: str = "$"
    """The JSON path of the chunk list (``$.results``); ``$`` when the body is the list itself."""
    holds_items: bool = True
    """Whether ``body`` contains the chunk list (at ``items_path``), which is then not walked again."""

    def item_path(self, position: int) -> str:
        """The JSON path of the chunk at 0-based ``position``: ``$.results[2]``."""
        return f"{self.items_path}[{position}]"


def envelope_of(returned: Any) -> ResponseEnvelope | None:
    """The whole response a retriever returned: a :class:`RetrievedList`'s ``response``, else the public
    attributes of a list subclass (``None`` for a plain list: there is nothing beside the chunks)."""
    if isinstance(returned, RetrievedList) and returned.response is not None:
        return ResponseEnvelope(returned.response, returned.items_path)
    if type(returned) is list or not isinstance(returned, list):
        return None
    members = {
        k: v
        for k, v in getattr(returned, "__dict__", {}).items()
        if not str(k).startswith("_") and k not in ("response", "items_path")
    }
    return ResponseEnvelope(members, "$", holds_items=False) if members else None


def _outside_query(field: ItemField, asked: str) -> list[ItemField]:
    """``field`` with the echoed query cut out: nothing when the query contains it, the pieces around
    it when it contains the query (2+ words), else ``field`` itself."""
    if field.kind != "text" or not asked:
        return [field]
    value = normalize_text(field.value)
    if not value or f" {value} " in f" {asked} ":
        return []
    if len(asked.split()) < 2 or f" {asked} " not in f" {value} ":
        return [field]
    pieces = (p.strip() for p in f" {value} ".split(f" {asked} "))
    return [replace(field, value=p, siblings=()) for p in pieces if p]


def response_evidence(
    ownership: OwnershipIndex, envelope: ResponseEnvelope, query: str | None = None
) -> tuple[FieldEvidence, ...]:
    """What the corpus says of every value of the response outside its chunk list (see the module
    docstring); ``query`` is the text the caller sent."""
    asked = normalize_text(query) if query else ""
    skip = frozenset({envelope.items_path}) if envelope.holds_items else frozenset()
    values = value_fields(
        envelope.body, "$", max_fields=MAX_RESPONSE_FIELDS, max_depth=MAX_RESPONSE_DEPTH, skip=skip
    )
    return tuple(
        evidence
        for value in values
        for piece in _outside_query(value, asked)
        for evidence in ownership.field_evidence(piece, asked or None)
    )
