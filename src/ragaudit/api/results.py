"""The typed results of the Python API: each has ``to_dict()`` (the JSON report the command writes),
``to_pandas(table)`` (a DataFrame of one of its tables; pandas is optional and imported only here) and
``_repr_html_`` (a notebook shows the text the command prints: ``render_terminal`` of the report)."""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from ragaudit.errors import InputError, MissingDependencyError
from ragaudit.evaluation.result import EvalResult
from ragaudit.experiments.benchmark import BenchmarkResult
from ragaudit.gates.verdict import Verdict
from ragaudit.security.tenant_audit import TenantAudit


def data_frame(rows: Iterable[Mapping[str, Any]]) -> Any:
    """A pandas DataFrame of ``rows``; a ``[low, high]`` interval becomes two columns ``*_low``/``*_high``."""
    try:
        import pandas  # type: ignore[import-untyped,unused-ignore]
    except ImportError:
        raise MissingDependencyError("pandas (for to_pandas())", "pandas") from None
    flat = []
    for row in rows:
        out: dict[str, Any] = {}
        for key, value in row.items():
            if isinstance(value, (list, tuple)) and len(value) == 2 and key.endswith("ci"):
                out[f"{key}_low"], out[f"{key}_high"] = value
            else:
                out[key] = value
        flat.append(out)
    return pandas.DataFrame(flat)


class Tables:
    """What every API result shares: ``to_dict`` (subclasses), ``to_pandas`` over the tables
    :meth:`tables` names, and the notebook view."""

    def to_dict(self) -> dict[str, Any]:
        raise NotImplementedError

    def tables(self) -> dict[str, list[dict[str, Any]]]:
        """``{table name: rows}``; the first is the default of :meth:`to_pandas`."""
        raise NotImplementedError

    def to_pandas(self, table: str | None = None) -> Any:
        """One table as a pandas DataFrame (default: the first of :meth:`tables`)."""
        tables = self.tables()
        name = table or next(iter(tables))
        if name not in tables:
            raise InputError(
                "to_pandas",
                None,
                f"no table {name!r} in a {type(self).__name__}",
                f"use one of: {', '.join(tables)}",
            )
        return data_frame(tables[name])

    def terminal(self) -> str:
        """The text the command prints for this result."""
        from ragaudit.report.terminal import render_terminal

        return render_terminal(self.to_dict())

    def _repr_html_(self) -> str:
        return f'<pre class="ragaudit">{html.escape(self.terminal())}</pre>'


def tenant_rows(slices: Mapping[str, Any] | None, **extra: Any) -> list[dict[str, Any]]:
    """One row per tenant and metric of a ``tenant_slices`` section."""
    rows = []
    for tenant in (slices or {}).get("tenants", []):
        for metric, figures in tenant["metrics"].items():
            rows.append(
                {**extra, "tenant": tenant["tenant"], "metric": metric, **figures, "enough": tenant["enough"]}
            )
    return rows


def _comparison_rows(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [
        {k: v for k, v in r.items() if k not in ("most_improved", "most_regressed", "power")} for r in rows
    ]


@dataclass(frozen=True)
class Evaluation(EvalResult, Tables):
    """An :class:`~ragaudit.evaluation.result.EvalResult` (everything it has) with the API's tables:
    ``cases`` (one row per golden case: status, tenant, latency, judged share, each metric), ``metrics``
    and ``tenants`` (each metric per tenant: mean, 95% CI, n)."""

    @classmethod
    def of(cls, result: EvalResult) -> Evaluation:
        return (
            result
            if isinstance(result, Evaluation)
            else cls(**{f.name: getattr(result, f.name) for f in fields(result)})
        )

    def tables(self) -> dict[str, list[dict[str, Any]]]:
        cases = [
            {
                "id": c.id,
                "tenant_id": c.tenant_id,
                "query": c.query,
                "status": c.status,
                "error": c.error,
                "latency_ms": c.latency_ms,
                "judged": c.judged,
                "leaks": len(c.leaks),
                **c.metrics,
            }
            for c in self.per_case
        ]
        from ragaudit.evaluation.slices import tenant_slices

        slices = tenant_slices([c.to_json() for c in self.per_case], list(self.metrics))
        return {
            "cases": cases,
            "metrics": [{"metric": m, "mean": v} for m, v in self.metrics.items()],
            "tenants": tenant_rows(slices),
        }


@dataclass(frozen=True)
class ReportResult(Tables):
    """A result whose report is a dict already (``compare``): the report and its tables."""

    report: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return self.report


class CompareResult(ReportResult):
    """``ragaudit compare`` from Python: ``comparisons`` (one row per system and metric: delta, CI, p,
    Holm-corrected p, significant, W/T/L, n) and ``tenants`` (the same per tenant)."""

    def tables(self) -> dict[str, list[dict[str, Any]]]:
        return {
            "comparisons": _comparison_rows(self.report["comparisons"]),
            "tenants": _comparison_rows(self.report.get("tenant_comparisons", {}).get("rows", [])),
        }


@dataclass(frozen=True)
class BenchResult(Tables):
    """``ragaudit bench`` from Python: ``pipelines`` (means, latency, build time, leaks), ``comparisons``
    (against the baseline), ``tenants`` (each pipeline's metrics per tenant), ``tenant_comparisons``;
    ``result`` is the :class:`~ragaudit.experiments.benchmark.BenchmarkResult` and ``evaluations`` each
    pipeline's :class:`Evaluation` (its per-case table)."""

    result: BenchmarkResult

    def to_dict(self) -> dict[str, Any]:
        return self.result.to_dict()

    @property
    def evaluations(self) -> dict[str, Evaluation]:
        return {o.name: Evaluation.of(o.result) for o in self.result.outcomes}

    def tables(self) -> dict[str, list[dict[str, Any]]]:
        report = self.to_dict()
        pipelines = [
            {
                "pipeline": p["name"],
                **p["metrics"],
                "latency_p50_ms": (p.get("latency_ms") or {}).get("p50"),
                "latency_p95_ms": (p.get("latency_ms") or {}).get("p95"),
                "index_build_seconds": p.get("index_build_seconds"),
                "context_tokens": p.get("context_tokens"),
                "leaks": p.get("leaks"),
            }
            for p in report["pipelines"]
        ]
        tenants = [
            r for p in report["pipelines"] for r in tenant_rows(p.get("tenant_slices"), pipeline=p["name"])
        ]
        return {
            "pipelines": pipelines,
            "comparisons": _comparison_rows(report.get("comparisons", [])),
            "tenants": tenants,
            "tenant_comparisons": _comparison_rows(report.get("tenant_comparisons", {}).get("rows", [])),
        }


@dataclass(frozen=True)
class AuditResult(Tables):
    """``ragaudit audit-tenants`` from Python: ``verdict`` (``clean``, ``leak``, ...), ``passed``, and the
    ``leaks`` table (one row per cross-tenant chunk); ``audit`` is the
    :class:`~ragaudit.security.tenant_audit.TenantAudit`."""

    audit: TenantAudit
    max_error_rate: float = 0.0

    @property
    def verdict(self) -> str:
        return str(self.audit.verdict(self.max_error_rate))

    @property
    def passed(self) -> bool:
        return self.verdict == "clean"

    def to_dict(self) -> dict[str, Any]:
        return self.audit.to_dict(self.max_error_rate)

    def tables(self) -> dict[str, list[dict[str, Any]]]:
        leaks = self.to_dict().get("leaks", {})
        records = leaks.get("records", []) if isinstance(leaks, Mapping) else []
        return {"leaks": [dict(r) for r in records if isinstance(r, Mapping)]}


@dataclass(frozen=True)
class GateVerdict(Tables):
    """``ragaudit gate`` from Python: ``state`` (``pass``, ``fail``, ``not_verified``), ``passed``,
    ``exit_code`` (the command's), and the ``gates`` table; ``verdict`` is the
    :class:`~ragaudit.gates.verdict.Verdict`."""

    verdict: Verdict

    @property
    def state(self) -> str:
        return self.verdict.state

    @property
    def passed(self) -> bool:
        return self.verdict.passed

    @property
    def exit_code(self) -> int:
        return self.verdict.exit_code

    def to_dict(self) -> dict[str, Any]:
        return self.verdict.to_dict()

    def tables(self) -> dict[str, list[dict[str, Any]]]:
        return {
            "gates": [
                {
                    "gate": g.gate,
                    "status": g.status,
                    "passed": g.passed,
                    "summary": g.summary,
                    "findings": "\n".join(g.findings),
                    "notes": "\n".join(g.notes),
                }
                for g in self.verdict.gates
            ]
        }
