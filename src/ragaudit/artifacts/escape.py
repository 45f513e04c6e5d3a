"""Escaping of corpus and user content for the Markdown and HTML reports.

Everything that comes from a user (query text, chunk ids, tenant names, error messages, run names,
notes) goes through one of these before it reaches a report, so a document holding ``<script>`` is
shown as text, never run. The HTML report's JavaScript additionally builds its rows with
``textContent`` only, never ``innerHTML``.
"""

from __future__ import annotations

import html
import json
import math
import re
from typing import Any

_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~])")
_WHITESPACE = re.compile(r"\s+")
_MENTION = re.compile(r"(?<!\w)@")
"""An ``@`` that would start a GitHub mention (not the one inside ``nDCG@10``)."""


def escape_html(value: object) -> str:
    """Text for HTML content or a quoted attribute: ``& < > " '`` become entities."""
    return html.escape(str(value), quote=True)


def escape_md(value: object, limit: int | None = None) -> str:
    """Text safe inside Markdown, including a table cell (GitHub-flavoured).

    Newlines collapse to spaces (a cell is one line), ``& < >`` become HTML entities (GitHub renders
    raw HTML otherwise) and the inline Markdown punctuation ``\\ ` * _ [ ] | ~`` is backslash-escaped
    (the text is never placed at the start of a line, so block markers need no escaping). An ``@``
    that would notify someone in a pull-request comment (``@alice``) becomes ``&#64;``. ``limit``
    cuts long text (an ellipsis marks the cut).
    """
    text = _WHITESPACE.sub(" ", str(value)).strip()
    if limit is not None and len(text) > limit:
        text = text[: max(limit - 1, 0)].rstrip() + "…"
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MENTION.sub("&#64;", _MD_SPECIAL.sub(r"\\\1", text))


def finite_or_none(value: Any) -> Any:
    """``value`` with every non-finite float (NaN, ±inf) replaced by ``None``, recursively.

    JSON has no NaN; a browser's ``JSON.parse`` rejects it.
    """
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): finite_or_none(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_or_none(v) for v in value]
    return value


def script_json(value: Any) -> str:
    """JSON to embed in ``<script type="application/json">``: strict JSON (no NaN) with ``<``, ``>``,
    ``&`` and the JavaScript line separators escaped as ``\\uXXXX``, so no string can close the tag."""
    text = json.dumps(finite_or_none(value), ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    for char, code in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(char, code)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
