"""The JSON text of reports, in one pass: orjson when it is installed, the standard library otherwise.

Two forms, both strict JSON (an undefined value, NaN or an infinity, is written ``null``; non-ASCII is
kept as is):

* :func:`report_bytes`: a report file, indented by 2, ending with a newline;
* :func:`canonical_bytes`: keys sorted, no spaces; what the run history hashes to recognise a report
  it already holds.

orjson (a core dependency, see ``docs/benchmarks.md``) writes a 100,000-case eval report about 20
times faster than ``json`` plus a finite-number pass. It writes NaN and infinities as ``null``
itself, so no second walk over the data is needed. Anything orjson refuses (a key that is not a
string, an integer over 64 bits, an object it would serialise differently from ``json``, such as a
dataclass or a ``str`` subclass) goes through the standard library path instead, so the text is
always what ``json`` accepts. The two encoders differ only in how they spell a few floats
(``1e-05`` against ``0.00001``): the same number either way.
"""

from __future__ import annotations

import json
from typing import Any

from ragaudit.artifacts.escape import finite_or_none

try:
    import orjson
except ImportError:  # pragma: no cover - orjson is a dependency; this keeps a --no-deps install working
    orjson = None  # type: ignore[assignment]

_STRICT = (
    0
    if orjson is None
    else orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_SUBCLASS
)


def _refuse(value: Any) -> Any:
    raise TypeError(f"not handled by the fast encoder: {type(value).__name__}")


def report_bytes(data: Any) -> bytes:
    """``data`` as the bytes of a report file: strict JSON indented by 2, then a newline."""
    if orjson is not None:
        try:
            return orjson.dumps(
                data, default=_refuse, option=_STRICT | orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE
            )
        except TypeError:
            pass
    text = json.dumps(finite_or_none(data), indent=2, ensure_ascii=False, allow_nan=False)
    return (text + "\n").encode("utf-8")


def canonical_bytes(data: Any) -> bytes:
    """``data`` as compact strict JSON with sorted keys (the same data gives the same bytes); an object
    JSON has no form for is written as its ``str``."""
    if orjson is not None:
        try:
            return orjson.dumps(data, default=_refuse, option=_STRICT | orjson.OPT_SORT_KEYS)
        except TypeError:
            pass
    text = json.dumps(
        finite_or_none(data),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
        default=str,
    )
    return text.encode("utf-8")
