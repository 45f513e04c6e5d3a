"""What the Markdown and HTML reports show, computed once from a report and an optional baseline.

* per metric: the mean, a percentile-bootstrap CI of the mean over the per-case values
  (:func:`ragaudit.stats.bootstrap.bootstrap_mean_ci`), and against a baseline the paired comparison
  of :mod:`ragaudit.evaluation.compare` (delta, CI of the delta, Holm-corrected p, win/tie/loss);
* per case: the query, what was retrieved (grades, tenants), leaks, and against the baseline what
  changed (metric deltas, chunks that entered or left the list, rank moves of judged-relevant chunks).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ragaudit.errors import InputError
from ragaudit.evaluation.compare import LoadedReport, compare_reports
from ragaudit.evaluation.slices import tenant_comparisons
from ragaudit.report.kinds import ReportKind, report_kind
from ragaudit.report.kinds.fields import Counts, Fields, Leak, MetricSummary, Paired, Problems
from ragaudit.report.sections import provenance_rows
from ragaudit.stats.bootstrap import bootstrap_mean_ci
from ragaudit.verdict import CheckVerdict, isolation_of


@dataclass(frozen=True)
class ReportView:
    """A report ready to render."""

    report: Mapping[str, Any]
    title: str
    metrics: list[MetricSummary] = field(default_factory=list)
    cases: list[dict[str, Any]] = field(default_factory=list)
    """Eval reports: one plain dict per case (JSON-ready; embedded as is in the HTML report)."""
    comparison: Mapping[str, Any] | None = None
    """``compare_reports`` output of this report against the baseline."""
    baseline_label: str | None = None
    confidence: float = 0.95
    alpha: float = 0.05
    tenant_comparisons: Mapping[str, Any] | None = None
    """Against a baseline: the paired test per tenant (:func:`ragaudit.evaluation.slices.tenant_comparisons`)."""
    typed: Any = None
    """The report's typed view (:meth:`ragaudit.report.kinds.ReportKind.from_json`; None for an unregistered kind)."""

    @property
    def kind(self) -> str:
        return str(self.report.get("kind", ""))

    def report_kind(self) -> ReportKind | None:
        """The registered kind of this report (None for an unregistered one)."""
        return report_kind(self.kind)

    @property
    def primary_metric(self) -> str | None:
        return self.metrics[0].name if self.metrics else None

    def k_sweep(self) -> dict[str, Any] | None:
        """The metrics by k any report may carry (its ``k_sweep`` section, ``{k, series}``)."""
        sweep = self.report.get("k_sweep")
        return dict(sweep) if isinstance(sweep, Mapping) and sweep.get("k") else None

    def chunking(self) -> dict[str, Any] | None:
        """The metrics by chunking any report may carry (its ``chunking`` section, ``{rows}``)."""
        chunking = self.report.get("chunking")
        return dict(chunking) if isinstance(chunking, Mapping) and chunking.get("rows") else None

    def provenance(self) -> list[tuple[str, str]]:
        """``(label, text)`` rows of where the report comes from."""
        kind = self.report_kind()
        if kind is None or self.typed is None:
            return provenance_rows(self.report)
        return provenance_rows(self.report, kind.chunking_text(self.typed), kind.pipeline(self.report))

    def gate(self) -> Mapping[str, Any] | None:
        """The gate verdict the report shows (a gate report's own, else its ``gate`` section)."""
        kind = self.report_kind()
        if kind is not None:
            return kind.gate(self.report)
        gate = self.report.get("gate")
        return gate if isinstance(gate, Mapping) else None

    def leaks(self) -> list[Leak]:
        """The cross-tenant leaks the report records."""
        return Leak.all_in(Fields(self.report, self.kind))

    def counts(self) -> Counts | None:
        """The report's case counts (None without them)."""
        return Counts.read(Fields(self.report, self.kind))

    def problems(self) -> Problems:
        """Missing cases, errors and notes of the report (no notes when the kind's document shows them)."""
        problems = Problems.read(Fields(self.report, self.kind))
        kind = self.report_kind()
        return replace(problems, notes=[]) if kind is not None and kind.shows_notes else problems

    def isolation(self) -> CheckVerdict | None:
        """The report's tenant-isolation verdict, printed as is (:func:`ragaudit.report.sections.isolation_of`)."""
        return isolation_of(self.report)

    def latencies(self) -> list[float]:
        return [float(c["latency_ms"]) for c in self.cases if isinstance(c.get("latency_ms"), (int, float))]


def system_label(report: Mapping[str, Any]) -> str:
    """The system a report is about: its run name, else its kind."""
    run = report.get("run")
    name = run.get("name") if isinstance(run, Mapping) else None
    return str(name or report.get("kind", "report"))


def report_title(report: Mapping[str, Any]) -> str:
    """``hybrid on golden.jsonl``, ``dense, hybrid vs bm25 on golden.jsonl``, ``bm25, dense``; the
    experiments name what they vary (``components of hybrid-rerank on golden.jsonl``)."""
    kind = report_kind(str(report.get("kind", "")))
    label = (kind.title(report) if kind else None) or system_label(report)
    dataset = report.get("dataset")
    path = dataset.get("path") if isinstance(dataset, Mapping) else None
    return f"{label} on {Path(str(path)).name}" if path else label


def dataset_queries(
    path: str | Path, fmt: str = "auto", split: str = "test", expected_sha256: str | None = None
) -> dict[str, str]:
    """``{case id: query text}`` from the golden dataset, refused if it is not the report's dataset."""
    from ragaudit.data.loading import load_dataset

    dataset = load_dataset(path, fmt, split)  # type: ignore[arg-type]
    if expected_sha256 and dataset.sha256 != expected_sha256:
        raise InputError(
            str(path),
            None,
            f"dataset sha256 {dataset.sha256[:12]} differs from the report's {expected_sha256[:12]}",
            "pass the golden dataset the report was evaluated on",
        )
    return {c.id: c.query for c in dataset.cases if c.query}


def _metric_summaries(
    loaded: LoadedReport, comparison: Mapping[str, Any] | None, confidence: float, resamples: int, seed: int
) -> list[MetricSummary]:
    rows = {c.metric: c for c in Paired.rows(comparison)} if comparison else {}
    out = []
    for name, value in loaded.data.get("metrics", {}).items():
        values = np.array(list(loaded.per_case(name).values()), dtype=np.float64)
        ci = (
            bootstrap_mean_ci(values, confidence, resamples, rng=np.random.default_rng(seed))
            if values.size
            else None
        )
        mean = float(value) if isinstance(value, (int, float)) and np.isfinite(value) else None
        out.append(MetricSummary(str(name), mean, ci, int(values.size), rows.get(name)))
    return out


def _ranks(case: Mapping[str, Any]) -> dict[str, int]:
    ranks: dict[str, int] = {}
    for rank, item in enumerate(case.get("retrieved", []), start=1):
        ranks.setdefault(str(item["chunk_id"]), rank)
    return ranks


SHOWN_RETRIEVED = 20
"""The drill-down lists the first this many retrieved chunks of a case (and says how many there were)."""


def case_changes(
    now: Mapping[str, Any], before: Mapping[str, Any], depth: int = SHOWN_RETRIEVED
) -> dict[str, Any]:
    """What changed in one case between the baseline (``before``) and this report (``now``): metric
    deltas, the chunks that entered or left the top ``depth``, and every judged-relevant chunk whose
    rank changed (anywhere in the reported lists)."""
    now_metrics, before_metrics = now.get("metrics", {}), before.get("metrics", {})
    deltas = {m: now_metrics[m] - before_metrics[m] for m in now_metrics if m in before_metrics}
    now_ranks, before_ranks = _ranks(now), _ranks(before)
    judged = {
        str(item["chunk_id"])
        for case in (now, before)
        for item in case.get("retrieved", [])
        if item.get("relevant") or (item.get("grade") or 0) > 0
    }
    moves = [
        {"chunk_id": cid, "before": before_ranks.get(cid), "now": now_ranks.get(cid)}
        for cid in sorted(judged, key=lambda c: (now_ranks.get(c, 10**9), before_ranks.get(c, 10**9)))
        if now_ranks.get(cid) != before_ranks.get(cid)
    ]
    return {
        "status_before": before.get("status"),
        "deltas": deltas,
        "entered": [c for c, r in now_ranks.items() if r <= depth and before_ranks.get(c, depth + 1) > depth],
        "left": [c for c, r in before_ranks.items() if r <= depth and now_ranks.get(c, depth + 1) > depth],
        "moves": moves,
    }


def _case_rows(
    report: Mapping[str, Any], baseline: Mapping[str, Any] | None, queries: Mapping[str, str]
) -> list[dict[str, Any]]:
    before = {str(c["id"]): c for c in baseline.get("per_case", [])} if baseline else {}
    rows = []
    for case in report.get("per_case", []):
        cid = str(case["id"])
        row = {
            "id": cid,
            "query": case.get("query") or queries.get(cid),
            "tenant_id": case.get("tenant_id"),
            "status": case.get("status"),
            "metrics": dict(case.get("metrics", {})),
            "retrieved": list(case.get("retrieved", []))[:SHOWN_RETRIEVED],
            "retrieved_total": len(case.get("retrieved", [])),
            "latency_ms": case.get("latency_ms"),
            "error": case.get("error"),
            "leaks": list(case.get("leaks", [])),
            "changes": case_changes(case, before[cid]) if cid in before else None,
        }
        rows.append(row)
    return rows


def build_view(
    report: Mapping[str, Any],
    baseline: Mapping[str, Any] | None = None,
    *,
    report_path: str = "report",
    baseline_path: str = "baseline",
    queries: Mapping[str, str] | None = None,
    resamples: int = 10_000,
    alpha: float = 0.05,
    confidence: float = 0.95,
    seed: int = 0,
) -> ReportView:
    """Everything the renderers need. A baseline needs an eval report on the same dataset and policy."""
    from ragaudit.evaluation.bench_in_sample import with_own_bench_in_sample
    from ragaudit.evaluation.in_sample_integrity import with_own_in_sample

    report = with_own_in_sample(report)  # an in_sample section deleted or edited: its records say it
    report = with_own_bench_in_sample(report)  # likewise each benchmark pipeline's
    kind = report_kind(str(report.get("kind", "")))
    typed = kind.from_json(report, report_path) if kind is not None else None
    title = report_title(report)
    if report.get("kind") != "eval":
        if baseline is not None:
            raise InputError(
                report_path,
                None,
                f"--baseline works with eval reports; this is a {report.get('kind')} report",
                "render it without --baseline, or pass two eval reports",
            )
        return ReportView(report, title, confidence=confidence, alpha=alpha, typed=typed)
    label = system_label(report)
    loaded = LoadedReport(label, report_path, report)
    comparison = None
    base_label = None
    tests: Mapping[str, Any] | None = None
    if baseline is not None:
        if baseline.get("kind") != "eval" or "per_case" not in baseline:
            raise InputError(baseline_path, None, "the baseline is not an eval report", "pass an eval report")
        base_label = system_label(baseline)
        if base_label == label:
            base_label = f"{base_label} (baseline)"
        base = LoadedReport(base_label, baseline_path, baseline)
        comparison = compare_reports([base, loaded], base, alpha=alpha, n_resamples=resamples, seed=seed)
        metrics = [str(c["metric"]) for c in comparison.get("comparisons", [])]
        tests = tenant_comparisons(base, [loaded], metrics, alpha=alpha, n_resamples=resamples, seed=seed)
    return ReportView(
        report,
        title,
        _metric_summaries(loaded, comparison, confidence, resamples, seed),
        _case_rows(report, baseline, queries or {}),
        comparison,
        base_label,
        confidence,
        alpha,
        tests,
        typed,
    )
