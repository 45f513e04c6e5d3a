"""Line-by-line reading of text inputs that names file:line on every failure.

Handles a UTF-8 byte-order mark, CRLF line ends and invalid UTF-8 (reported with its line, never a
traceback), and streams: memory is bounded by :data:`MAX_LINE_BYTES` (a longer line is skipped in
blocks and reported, never read whole).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeGuard

from ragaudit.errors import InputError, Problem

MAX_LINE_BYTES = 64 * 1024 * 1024


def iter_lines(path: str | Path) -> Iterator[tuple[int, str | InputError]]:
    """Yield ``(line_number, text)`` for each non-blank line; an undecodable line yields an error instead."""
    p = Path(path)
    try:
        handle = p.open("rb")
    except FileNotFoundError:
        raise InputError(str(p), None, "file not found", "check the path") from None
    except IsADirectoryError:
        raise InputError(str(p), None, "is a directory, expected a file", "name the file inside it") from None
    with handle:
        number = 0
        while raw := handle.readline(MAX_LINE_BYTES + 1):
            number += 1
            if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            if len(raw) > MAX_LINE_BYTES:
                size = len(raw)
                while not raw.endswith(b"\n") and (raw := handle.readline(1 << 20)):
                    size += len(raw)  # skip the rest of the line in blocks: memory stays bounded
                yield (
                    number,
                    InputError(
                        str(p),
                        number,
                        f"line is {size:,} bytes, over the {MAX_LINE_BYTES:,}-byte limit",
                        "split the record or check the file is the right format",
                    ),
                )
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                yield (
                    number,
                    InputError(
                        str(p),
                        number,
                        f"invalid UTF-8 at byte {exc.start} of the line",
                        "re-save the file as UTF-8",
                    ),
                )
                continue
            text = text.rstrip("\r\n")
            if text.strip():
                yield number, text


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def parse_json_line(path: str, number: int, text: str) -> Any:
    """Parse one JSON line strictly (no NaN/Infinity); raise :class:`InputError` naming file:line."""
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise InputError(
            path, number, "JSON nested too deeply to read", "flatten the record (a few levels of nesting)"
        ) from None
    except (json.JSONDecodeError, ValueError) as exc:
        detail = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        col = f" at column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
        raise InputError(
            path, number, f"malformed JSON{col}: {detail}", "write one JSON object per line"
        ) from None


def iter_json_records(path: str | Path, problems: list[Problem]) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, parsed JSON value)`` for each non-blank line of a JSONL file.

    An undecodable or malformed line is appended to ``problems`` (with file:line and the fix) and
    skipped, so a reader reports every bad line in one pass.
    """
    for number, text in iter_lines(path):
        if isinstance(text, InputError):
            problems.append(text.problem)
            continue
        try:
            yield number, parse_json_line(str(path), number, text)
        except InputError as exc:
            problems.append(exc.problem)


def is_finite_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
