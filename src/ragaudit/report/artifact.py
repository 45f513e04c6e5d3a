"""The audit artifact: reading any ragaudit report, and its JSON Schema.

Every report ragaudit writes (``eval``, ``compare``, ``benchmark`` and the experiment kinds) shares an
envelope ``{schema_version, kind, ragaudit_version, created_at, provenance?}``; the schema shipped in
``report/schema/ragaudit-report.schema.json`` (JSON Schema draft 2020-12) describes all of them.
"""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path
from typing import Any

from ragaudit.errors import InputError, MissingDependencyError

SCHEMA_VERSION = 1
SCHEMA_FILE = "ragaudit-report.schema.json"
REPORT_KINDS = (
    "eval",
    "compare",
    "benchmark",
    "ablation",
    "reranker-eval",
    "k-sweep",
    "chunking-sweep",
    "rewrite-eval",
    "tenant-audit",
    "stale-audit",
    "check-answers",
    "context",
    "gate",
)


def report_schema() -> dict[str, Any]:
    """The JSON Schema of reports, as shipped with the package."""
    text = files("ragaudit.report").joinpath("schema", SCHEMA_FILE).read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def schema_errors(report: Any) -> list[str]:
    """Every way ``report`` breaks the schema, as ``path: message`` lines (empty when it conforms).

    Needs the ``jsonschema`` package (a development dependency).
    """
    try:
        from jsonschema import Draft202012Validator  # type: ignore[import-untyped,unused-ignore]
    except ImportError:
        raise MissingDependencyError("jsonschema", "dev") from None
    validator = Draft202012Validator(report_schema())
    errors = sorted(validator.iter_errors(report), key=lambda e: list(map(str, e.absolute_path)))
    return [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in errors]


def read_report(path: str | Path) -> dict[str, Any]:
    """Load a report of any kind, refusing files that are not ragaudit reports (with the fix)."""
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(str(p), None, "report not found", "check the path") from None
    except UnicodeDecodeError:
        raise InputError(
            str(p), None, "not a UTF-8 text file", "pass a JSON report written by ragaudit"
        ) from None
    except json.JSONDecodeError as exc:
        raise InputError(
            str(p), exc.lineno, f"not valid JSON: {exc.msg}", "pass a report written by ragaudit --out"
        ) from None
    if not isinstance(data, dict) or "kind" not in data or "schema_version" not in data:
        raise InputError(
            str(p),
            None,
            "not a ragaudit report (no kind / schema_version)",
            "pass a JSON report written by 'ragaudit eval --out', 'ragaudit compare --out' or 'ragaudit bench'",
        )
    if data["schema_version"] != SCHEMA_VERSION:
        raise InputError(
            str(p),
            None,
            f"report schema_version {data['schema_version']!r} is not {SCHEMA_VERSION}",
            "render it with the ragaudit version that wrote it, or re-run the evaluation",
        )
    if data["kind"] not in REPORT_KINDS:
        raise InputError(
            str(p),
            None,
            f"unknown report kind {data['kind']!r}",
            f"expected one of {', '.join(REPORT_KINDS)}",
        )
    return data
