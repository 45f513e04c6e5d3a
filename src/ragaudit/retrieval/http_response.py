"""The response side of :class:`~ragaudit.retrieval.http.HttpRetriever`: where the chunk list and each
chunk field are in a service's JSON (:class:`ResponseShape`), JSON / NDJSON bodies, the headers and
bodies kept for the tenant checks, and the short body excerpt quoted in error messages."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from ragaudit.errors import InputError, PermanentRetrievalError
from ragaudit.retrieval.protocol import RetrievedChunk, RetrievedList

CHUNK_FIELDS = ("chunk_id", "score", "content", "source_id", "tenant_id", "metadata")
_EXCERPT_CHARS = 200


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def _path(text: str, what: str) -> tuple[str, ...]:
    parts = tuple(text.split("."))
    if not text or any(not part for part in parts):
        raise InputError(
            "http retriever",
            None,
            f"{what} {text!r} is not a field name or dotted path",
            "e.g. 'id' or 'meta.tenant'",
        )
    return parts


def _lookup(obj: Any, path: tuple[str, ...]) -> tuple[bool, Any]:
    for key in path:
        if not isinstance(obj, dict) or key not in obj:
            return False, None
        obj = obj[key]
    return True, obj


@dataclass(frozen=True)
class ResponseShape:
    """Where the chunk list is in a response and where each chunk field is in a chunk object."""

    results_path: tuple[str, ...] | None
    fields: Mapping[str, tuple[str, ...]]

    @classmethod
    def build(cls, field_map: Mapping[str, str] | None, results_path: str | None) -> ResponseShape:
        given = dict(field_map or {})
        unknown = sorted(set(given) - set(CHUNK_FIELDS))
        if unknown:
            raise InputError(
                "http retriever",
                None,
                f"unknown field_map key(s): {', '.join(unknown)}",
                f"map only these chunk fields: {', '.join(CHUNK_FIELDS)}",
            )
        fields = {name: _path(given.get(name, name), f"field_map[{name!r}]") for name in CHUNK_FIELDS}
        return cls(_path(results_path, "results_path") if results_path is not None else None, fields)

    def chunk_list(self, data: Any) -> list[Any]:
        if self.results_path is not None:
            found, value = _lookup(data, self.results_path)
            where = ".".join(self.results_path)
            if not found:
                keys = ", ".join(sorted(data)) if isinstance(data, dict) else _json_type(data)
                raise PermanentRetrievalError(
                    f"response has no {where!r} (it has: {keys}); check results_path"
                )
            if not isinstance(value, list):
                raise PermanentRetrievalError(
                    f"response field {where!r} must be an array of chunks, got {_json_type(value)}"
                )
            return value
        if isinstance(data, list):
            return data
        if isinstance(data, dict) and isinstance(data.get("results"), list):
            return cast(list[Any], data["results"])
        keys = (
            f"an object with keys {', '.join(sorted(data))}" if isinstance(data, dict) else _json_type(data)
        )
        raise PermanentRetrievalError(
            f"response must be an array of chunks or an object with a 'results' array, got {keys}; set results_path"
        )

    def _name(self, field: str) -> str:
        service = ".".join(self.fields[field])
        return repr(service) if service == field else f"{service!r} (mapped to {field})"

    def chunk(self, position: int, raw: Any) -> RetrievedChunk:
        """One chunk in the protocol's shape, or a :class:`PermanentRetrievalError` naming the bad field."""
        if not isinstance(raw, dict):
            raise PermanentRetrievalError(f"result #{position} must be an object, got {_json_type(raw)}")
        out: dict[str, Any] = {}
        found, chunk_id = _lookup(raw, self.fields["chunk_id"])
        if not found:
            raise PermanentRetrievalError(
                f"result #{position} has no field {self._name('chunk_id')} (its fields: {', '.join(sorted(raw))}); "
                "set field_map['chunk_id']"
            )
        if isinstance(chunk_id, int) and not isinstance(chunk_id, bool):
            chunk_id = str(chunk_id)
        if not isinstance(chunk_id, str) or not chunk_id:
            raise PermanentRetrievalError(
                f"result #{position}: field {self._name('chunk_id')} must be a non-empty string, got {_json_type(chunk_id)}"
            )
        out["chunk_id"] = chunk_id
        for field in CHUNK_FIELDS[1:]:
            found, value = _lookup(raw, self.fields[field])
            if not found or value is None:
                continue
            if field == "score":
                ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
                expected = "a finite number"
                value = float(value) if ok else value
            elif field == "metadata":
                ok, expected = isinstance(value, dict), "an object"
            else:
                ok, expected = isinstance(value, str), "a string"
            if not ok:
                raise PermanentRetrievalError(
                    f"result #{position} ({chunk_id!r}): field {self._name(field)} must be {expected}, got {_json_type(value)}"
                )
            out[field] = value
        extra = _unmapped(raw, tuple(self.fields.values()))
        if extra:
            out["extra"] = extra
        return cast(RetrievedChunk, out)

    def parse(self, body: bytes, content_type: str = "") -> RetrievedList:
        """The chunks in a response body, in ranking order: a JSON document, newline-delimited JSON
        (NDJSON, JSON Lines: one chunk object per line, as a streaming service sends them; so read
        whenever the content type says so or the body holds several JSON values), or server-sent events
        (``text/event-stream``: each event's ``data`` one JSON chunk object or list of them)."""
        try:
            data = _sse_rows(body) if _is_event_stream(content_type, body) else None
            if data is None:
                data = _load_json(body, lines=_is_json_lines(content_type))
        except RecursionError:
            raise PermanentRetrievalError(
                f"response JSON is nested too deeply to read; it starts with {_excerpt(body)!r}"
            ) from None
        except (ValueError, UnicodeDecodeError) as exc:
            detail = (
                f"{exc.msg} at line {exc.lineno} column {exc.colno}"
                if isinstance(exc, json.JSONDecodeError)
                else str(exc)
            )
            raise PermanentRetrievalError(
                f"response is not valid JSON ({detail}); it starts with {_excerpt(body)!r}"
            ) from None
        chunks = [self.chunk(position, raw) for position, raw in enumerate(self.chunk_list(data), start=1)]
        return RetrievedList(chunks, data, self.items_path(data))

    def items_path(self, data: Any) -> str:
        """The JSON path of the chunk list in a response: ``$.data.hits``, ``$.results`` or ``$``."""
        if self.results_path is not None:
            return "$." + ".".join(self.results_path)
        return "$" if isinstance(data, list) else "$.results"


def _unmapped(raw: Mapping[str, Any], paths: tuple[tuple[str, ...], ...]) -> dict[str, Any]:
    """``raw`` without the values the mapped ``paths`` took (objects left empty go too): what ``extra`` keeps."""
    out: dict[str, Any] = {}
    for key, value in raw.items():
        inner = tuple(path[1:] for path in paths if path[0] == key)
        if not inner:
            out[key] = value
        elif all(inner) and isinstance(value, dict):
            rest = _unmapped(value, inner)
            if rest:
                out[key] = rest
    return out


def _is_json_lines(content_type: str) -> bool:
    """Whether a content type names newline-delimited JSON (``application/x-ndjson``, ``jsonl``, ``json-seq``)."""
    kind = content_type.split(";")[0].strip().lower()
    return any(name in kind for name in ("ndjson", "jsonl", "json-seq", "jsonlines"))


def _is_event_stream(content_type: str, body: bytes) -> bool:
    """Whether a body is server-sent events: the content type says so, or it starts with a ``data:`` /
    ``event:`` field."""
    if "text/event-stream" in content_type.lower():
        return True
    return body.lstrip().startswith((b"data:", b"event:"))


_SSE_END = frozenset({"[DONE]", "[done]", ""})
"""``data`` values that end a stream rather than carry a row (OpenAI-style ``[DONE]``)."""


def _sse_rows(body: bytes) -> list[Any]:
    """The rows of a server-sent event stream: each event's ``data`` lines joined and read as JSON (a list
    adds its elements, an object with a ``results`` list those); comments, ``event:`` / ``id:`` /
    ``retry:`` fields and a final ``[DONE]`` are no rows."""
    rows: list[Any] = []
    for event in body.decode("utf-8").replace("\r\n", "\n").split("\n\n"):
        data = "\n".join(line[5:].removeprefix(" ") for line in event.split("\n") if line.startswith("data:"))
        if data.strip() in _SSE_END:
            continue
        value = json.loads(data, parse_constant=_reject_constant, object_pairs_hook=keep_repeated_keys)
        if isinstance(value, dict) and isinstance(value.get("results"), list):
            value = value["results"]
        rows.extend(value if isinstance(value, list) else [value])
    return rows


def _json_rows(body: bytes) -> list[Any]:
    """Every line of ``body`` that is not blank, as JSON (a JSON text sequence's RS characters dropped)."""
    lines = [line.strip(b"\x1e \t\r") for line in body.splitlines()]
    return [
        json.loads(line, parse_constant=_reject_constant, object_pairs_hook=keep_repeated_keys)
        for line in lines
        if line
    ]


FURTHER_DOCUMENT = "#{n} (a further JSON document in the body)"
"""Where a JSON document that follows the answer in the same body is kept (see :func:`_load_json`)."""


def _json_documents(body: bytes) -> list[Any]:
    """The JSON values of ``body`` one after another (``{...}{...}``, or one per line), with whitespace and
    JSON text sequence RS characters between them."""
    text, at = body.decode("utf-8"), 0
    values: list[Any] = []
    decoder = json.JSONDecoder(parse_constant=_reject_constant, object_pairs_hook=keep_repeated_keys)
    while True:
        while at < len(text) and text[at] in " \t\r\n\x1e":
            at += 1
        if at == len(text):
            return values
        value, at = decoder.raw_decode(text, at)
        values.append(value)


def _load_json(body: bytes, *, lines: bool = False) -> Any:
    """``body`` as JSON; newline-delimited JSON (``lines``, or a body of several JSON objects) as the list
    of its rows. Several JSON documents of which the first is an answer (an object with a ``results``
    list), written back to back (``{"results": [...]}{"debug": ...}``) or one per line, are that answer
    with every later document kept beside it under :data:`FURTHER_DOCUMENT`: a client reads the first,
    but the rest went over the wire too, so the tenant checks read them."""
    if lines:
        return _json_rows(body)
    try:
        return json.loads(body, parse_constant=_reject_constant, object_pairs_hook=keep_repeated_keys)
    except json.JSONDecodeError as exc:
        if exc.msg != "Extra data":
            raise
        try:
            values = _json_documents(body)
        except (ValueError, UnicodeDecodeError):
            raise exc from None
        first = values[0]
        if isinstance(first, dict) and isinstance(first.get("results"), list):
            later = {FURTHER_DOCUMENT.format(n=n): v for n, v in enumerate(values[1:], start=2)}
            return {**first, **later}
        if not all(isinstance(row, dict) for row in values):
            raise
        return values


_PLAIN_HEADERS = frozenset(
    {
        "content-length",
        "content-type",
        "content-encoding",
        "transfer-encoding",
        "connection",
        "keep-alive",
        "date",
    }
)
"""Response headers that carry no data of the service's (the rest are kept for the tenant checks)."""


def response_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The headers of a response that may carry data (a debug or trace header), lower-cased names."""
    return {k.lower(): v for k, v in headers.items() if k.lower() not in _PLAIN_HEADERS}


def answered_body(content: bytes) -> Any:
    """What a service answered, to read for other tenants' data even when it is no ranking (an error's
    body, a 200 of the wrong shape): parsed JSON, else the text (at most 64 KiB)."""
    try:
        return _load_json(content[:65536])
    except (ValueError, RecursionError, UnicodeDecodeError):
        return content[:65536].decode("utf-8", "replace")


REPEATED_KEY = "{key}#{n} (an earlier value of a repeated key)"
"""Where an earlier value of a key repeated in one JSON object is kept (see :func:`keep_repeated_keys`)."""


def keep_repeated_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object as clients read it (a repeated key keeps its last value), with every earlier value of
    a repeated key kept too, under :data:`REPEATED_KEY`: it went over the wire, so the tenant checks
    read it (a service that sends another tenant's results first and the caller's second has leaked
    them, whatever a client keeps)."""
    out = dict(pairs)
    if len(out) == len(pairs):
        return out
    out, seen = {}, dict.fromkeys((k for k, _ in pairs), 0)
    for key, value in pairs:
        if key in out:
            seen[key] += 1
            out[REPEATED_KEY.format(key=key, n=seen[key])] = out[key]
        out[key] = value
    return out


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _excerpt(body: bytes) -> str:
    text = " ".join(body[: _EXCERPT_CHARS * 4].decode("utf-8", "replace").split())
    return text[:_EXCERPT_CHARS] + ("..." if len(text) > _EXCERPT_CHARS else "")
