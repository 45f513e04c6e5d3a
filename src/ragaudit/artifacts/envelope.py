"""The audit artifact: its envelope, writing it as strict JSON, reading it back, and its JSON Schema.

Every report ragaudit writes (``eval``, ``compare``, ``benchmark`` and the experiment kinds) starts with
the envelope :func:`envelope` builds, ``{schema_version, kind, ragaudit_version, created_at,
provenance}``, and is written by :func:`write_artifact` (strict JSON: an undefined value, NaN or an
infinity, is ``null``). The schema shipped in ``artifacts/schema/ragaudit-report.schema.json`` (JSON Schema
draft 2020-12) describes all of them.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from datetime import datetime, timezone
from importlib.resources import files
from pathlib import Path
from typing import Any

from ragaudit.artifacts.json_text import report_bytes
from ragaudit.artifacts.provenance import collect_provenance
from ragaudit.errors import InputError, MissingDependencyError
from ragaudit.version import __version__

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


def utc_timestamp() -> str:
    """Now, in UTC, as ISO 8601 to the second (``2026-01-31T12:00:00+00:00``): a report's ``created_at``."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def envelope(
    kind: str,
    *,
    created_at: str | None = None,
    dataset: Mapping[str, Any] | None = None,
    policy: Mapping[str, Any] | None = None,
    context: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The keys every report starts with: ``schema_version``, ``kind``, ``ragaudit_version``,
    ``created_at`` (default: now) and ``provenance``.

    ``provenance`` is :func:`ragaudit.artifacts.provenance.collect_provenance` of ``dataset`` (its
    ``sha256``), ``context`` (``pipeline``, ``corpus``, ``retrieval`` sections) and ``policy`` (its
    ``version``); what is not given is ``null`` there. A report adds its own keys after these.
    """
    if kind not in REPORT_KINDS:
        raise ValueError(f"unknown report kind {kind!r}; expected one of {', '.join(REPORT_KINDS)}")
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": kind,
        "ragaudit_version": __version__,
        "created_at": created_at or utc_timestamp(),
        "provenance": collect_provenance(dataset or {}, context or {}, policy or {}),
    }


def artifact_json(data: Mapping[str, Any]) -> str:
    """``data`` as the text of a report file: strict JSON (NaN and ±inf written as ``null``), indented
    by 2, non-ASCII kept as is, ending with a newline (:func:`ragaudit.artifacts.json_text.report_bytes`)."""
    return report_bytes(dict(data)).decode("utf-8")


def write_artifact(data: Mapping[str, Any], path: str | Path) -> None:
    """Write a report to ``path`` (:func:`artifact_json`), creating its folder."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(report_bytes(dict(data)))


def report_schema() -> dict[str, Any]:
    """The JSON Schema of reports, as shipped with the package."""
    text = files("ragaudit.artifacts").joinpath("schema", SCHEMA_FILE).read_text(encoding="utf-8")
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


def read_report(path: str | Path, kinds: Collection[str] = REPORT_KINDS) -> dict[str, Any]:
    """Load a report of any kind, refusing files that are not ragaudit reports (with the fix).

    ``kinds``: the kinds accepted (the renderer passes every registered kind, plug-ins included)."""
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
    if data["kind"] not in kinds:
        raise InputError(
            str(p),
            None,
            f"unknown report kind {data['kind']!r}",
            f"expected one of {', '.join(kinds)}",
        )
    return data
