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
an echo, or a near echo, is no evidence, and the query inside a longer value is cut out before the
rest is attributed (:mod:`ragaudit.security.query_echo`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ragaudit.retrieval.protocol import RetrievedList
from ragaudit.security.item_fields import value_fields
from ragaudit.security.ownership import FieldEvidence, OwnershipIndex
from ragaudit.security.query_echo import outside_query
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
    headers: Mapping[str, str] = field(default_factory=dict)
    """The response headers that may carry data (walked as ``$headers["x-debug"]``)."""
    root: str = "$"
    """The body's JSON path root: ``$``, or ``$error`` for the body of a refusal or a failed request."""

    def item_path(self, position: int) -> str:
        """The JSON path of the chunk at 0-based ``position``: ``$.results[2]``."""
        return f"{self.items_path}[{position}]"


def error_envelope(error: BaseException) -> ResponseEnvelope | None:
    """The body (and headers) a failed request was answered with, when the retriever kept it
    (:class:`~ragaudit.errors.RetrievalError`'s ``response``): a refusal that names another tenant's
    documents is a leak, not a fine answer."""
    body, headers = getattr(error, "response", None), getattr(error, "headers", None)
    if body is None and not headers:
        return None
    kept = {str(k): str(v) for k, v in headers.items()} if isinstance(headers, Mapping) else {}
    return ResponseEnvelope(body, "$", holds_items=False, headers=kept, root="$error")


def envelope_of(returned: Any) -> ResponseEnvelope | None:
    """The whole response a retriever returned: a :class:`RetrievedList`'s ``response``, else the public
    attributes of a list subclass (``None`` for a plain list: there is nothing beside the chunks)."""
    if isinstance(returned, RetrievedList) and (returned.response is not None or returned.headers):
        return ResponseEnvelope(returned.response, returned.items_path, headers=returned.headers)
    if type(returned) is list or not isinstance(returned, list):
        return None
    members = {
        k: v
        for k, v in getattr(returned, "__dict__", {}).items()
        if not str(k).startswith("_") and k not in ("response", "items_path", "headers")
    }
    return ResponseEnvelope(members, "$", holds_items=False) if members else None


def response_evidence(
    ownership: OwnershipIndex,
    envelope: ResponseEnvelope,
    query: str | None = None,
    earlier: frozenset[str] | set[str] = frozenset(),
) -> tuple[FieldEvidence, ...]:
    """What the corpus says of every value of the response outside its chunk list (see the module
    docstring); ``query`` is the text the caller sent, ``earlier`` the (normalised) queries it sent
    before: a value that is exactly one of them is an echo (a "recent searches" list), no evidence."""
    asked = normalize_text(query) if query else ""
    skip = frozenset({envelope.items_path}) if envelope.holds_items else frozenset()
    values = value_fields(
        envelope.body, envelope.root, max_fields=MAX_RESPONSE_FIELDS, max_depth=MAX_RESPONSE_DEPTH, skip=skip
    )
    if envelope.headers:
        values += value_fields(dict(envelope.headers), "$headers", max_fields=MAX_RESPONSE_FIELDS)
    if earlier:
        values = [v for v in values if v.kind != "text" or normalize_text(v.value) not in earlier]
    return tuple(
        evidence
        for value in values
        for piece in outside_query(value, asked)
        for evidence in ownership.field_evidence(piece, asked or None)
    )
