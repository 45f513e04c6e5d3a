"""Reading the TOML files users write (pipelines, gates, rewrite stages, synonym maps).

One reader for all of them: a UTF-8 byte-order mark is accepted, and every failure (missing file, not
UTF-8, invalid TOML) is an :class:`~ragaudit.errors.InputError` naming the file, the line when TOML
reports one, and the fix.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from ragaudit.errors import InputError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib


def read_toml(path: str | Path, *, what: str, fix: str) -> tuple[dict[str, Any], str]:
    """The parsed table and the text of the TOML file ``path``.

    ``what`` names the file in errors (``"pipeline config"``); ``fix`` says how to write it correctly.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputError(str(p), None, f"{what} not found", "check the path") from None
    except IsADirectoryError:
        raise InputError(
            str(p), None, f"{what} is a directory, expected a TOML file", "name the file"
        ) from None
    except UnicodeDecodeError:
        raise InputError(str(p), None, "not UTF-8 text", "re-save the file as UTF-8") from None
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"at line (\d+)", str(exc))
        line = int(found.group(1)) if found else None
        raise InputError(str(p), line, f"invalid TOML: {exc}", fix) from None


def parse_toml_text(text: str) -> dict[str, Any]:
    """Parse TOML held in memory (a bundled template); a syntax error there is a bug, so it raises."""
    return tomllib.loads(text)
