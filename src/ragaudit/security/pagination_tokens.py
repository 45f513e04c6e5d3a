"""The next page a service offers in its own response: a cursor, a page token, a ``next`` link.

Many services page with a token they hand out (``next_cursor``, ``nextPageToken``, ``links.next``,
``pageInfo.endCursor``, ``scroll_id``) rather than an ``offset`` the client picks, and the later-page
path is where a tenant filter gets forgotten. The audit cannot guess an opaque token; it can read it
from the first page and send it back, as a client would (:data:`~ragaudit.security.request_mutations`,
the ``next page (the service's own token)`` mutation):

- a token under a key of :data:`TOKEN_KEYS`, at the top level or inside one of :data:`CONTAINERS`
  (``links``, ``pagination``, ``meta``, ``paging``, ``page_info``, ``pageInfo``), is sent back under
  the request name of :func:`request_name` (``next_cursor`` -> ``cursor``, ``nextPageToken`` ->
  ``pageToken``, ``endCursor`` -> ``after``), both as a JSON body field and a query-string parameter;
- a ``next`` value that is a link (``/search?page_token=XYZ``, a full URL) sends the link's
  query-string parameters, as parameters and as body fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from ragaudit.retrieval.request_extras import RequestExtras

TOKEN_KEYS: Mapping[str, str] = {
    "next_cursor": "cursor",
    "nextcursor": "cursor",
    "cursor": "cursor",
    "next": "cursor",
    "next_page": "page",
    "nextpage": "page",
    "next_page_token": "page_token",
    "nextpagetoken": "pageToken",
    "page_token": "page_token",
    "pagetoken": "pageToken",
    "next_token": "token",
    "nexttoken": "token",
    "continuation": "continuation",
    "continuation_token": "continuation_token",
    "continuationtoken": "continuationToken",
    "scroll_id": "scroll_id",
    "_scroll_id": "scroll_id",
    "scrollid": "scrollId",
    "search_after": "search_after",
    "endcursor": "after",
    "after": "after",
}
"""A response key (lower-cased) holding the next page's token, and the request name it goes back under
(a camelCase key keeps its case: ``nextPageToken`` -> ``pageToken``)."""
CONTAINERS = ("links", "pagination", "meta", "paging", "page_info", "pageInfo", "_links")


def request_name(key: str) -> str:
    """The request field a response key's token is sent back under (``nextPageToken`` -> ``pageToken``)."""
    name = TOKEN_KEYS[key.lower()]
    if key[:4] == "next" and key[4:5].isupper():  # camelCase: nextPageToken -> pageToken
        return key[4].lower() + key[5:]
    return name


def _link_params(value: str) -> dict[str, str]:
    """The query-string parameters of a link (``/search?page_token=X``, ``https://h/p?cursor=Y``)."""
    if "?" not in value or any(ch.isspace() for ch in value):
        return {}
    return dict(parse_qsl(urlsplit(value).query, keep_blank_values=False))


def _token(key: str, value: Any) -> RequestExtras | None:
    if isinstance(value, Mapping) and "href" in value:  # HAL: "next": {"href": "/search?page=2"}
        value = value["href"]
    if isinstance(value, str) and value.strip():
        params = _link_params(value)
        if params:
            return RequestExtras(params=params, body=dict(params))
        name = request_name(key)
        return RequestExtras(params={name: value}, body={name: value})
    if isinstance(value, (int, list)) and not isinstance(value, bool) and value not in (0, []):
        name = request_name(key)
        return RequestExtras(params={name: str(value)}, body={name: value})
    return None


def next_page_extras(body: Any) -> RequestExtras | None:
    """How to ask the next page a response offers (``None``: it offers none)."""
    if not isinstance(body, Mapping):
        return None
    places = [body, *(body[c] for c in CONTAINERS if isinstance(body.get(c), Mapping))]
    for place in places:
        for key, value in place.items():
            if isinstance(key, str) and key.lower() in TOKEN_KEYS:
                found = _token(key, value)
                if found is not None:
                    return found
    return None
