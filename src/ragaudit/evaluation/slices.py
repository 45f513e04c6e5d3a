"""Per-tenant slices: each metric's mean, 95% CI and n per tenant, and the paired test per tenant.

A mean over every tenant hides a regression confined to one of them (one tenant of three dropping by
0.30 moves the overall mean by 0.10, or by nothing when the others improve). A slice is the answerable
cases of one tenant (``per_case[].tenant_id``; a case without one is in the slice ``(no tenant)``).

* :func:`tenant_slices` — per tenant and metric: the mean over the tenant's answerable cases, its 95%
  CI and ``n``. The CI is the percentile bootstrap (2,000 resamples, seed 0, as ``benchmark``'s
  ``metrics_ci``) while the whole table's resampling stays within :data:`BOOTSTRAP_BUDGET` values drawn,
  else the normal approximation for every tenant (large slices, where the two agree and the bootstrap
  would cost seconds); ``method`` says which. With a single tenant the slice is the overall figures:
  its row has ``n`` and no per-metric figures (``metrics`` empty).
* :func:`tenant_comparisons` — per system, tenant and metric: the paired comparison of
  :func:`ragaudit.evaluation.compare.compare_pair` over the tenant's paired cases, the p-values
  Holm-corrected together across every tenant x metric x system row that has enough cases (the CIs at
  the matching Bonferroni level ``1 - alpha/m``).

A tenant with fewer than ``min_cases`` (default :data:`MIN_TENANT_CASES`) answerable cases is marked
``enough: false``: its figures are printed, but it is left out of the correction and never called
significant, and the gate says "too few cases to judge" instead of passing it.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict
from typing import Any

import numpy as np

from ragaudit.evaluation.compare import LoadedReport, compare_pair, metric_value
from ragaudit.stats.bootstrap import bootstrap_mean_ci
from ragaudit.stats.correction import bonferroni_confidence, holm_bonferroni

MIN_TENANT_CASES = 5
BOOTSTRAP_BUDGET = 50_000_000
"""Values the bootstrap may draw for one slice table (cases x metrics x resamples); about a second."""
SLICE_LEVEL = 0.95
SLICE_RESAMPLES = 2_000
NO_TENANT = "(no tenant)"
CORRECTION = "holm-bonferroni"


def tenant_of(case: Mapping[str, Any]) -> str:
    tenant = case.get("tenant_id")
    return str(tenant) if tenant not in (None, "") else NO_TENANT


def _grouped(per_case: Iterable[Any], answerable_only: bool) -> dict[str, list[Mapping[str, Any]]]:
    """The case records of a report's ``per_case`` by tenant (:func:`tenant_of`), tenants sorted by name."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for case in per_case:
        if isinstance(case, Mapping) and not (answerable_only and _unanswerable(case)):
            groups.setdefault(tenant_of(case), []).append(case)
    return dict(sorted(groups.items()))


def _unanswerable(case: Mapping[str, Any]) -> bool:
    return case.get("status") == "unanswerable"


def cases_by_tenant(per_case: Iterable[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    """The answerable cases of a report's ``per_case`` grouped by tenant, tenants sorted by name."""
    return _grouped(per_case, answerable_only=True)


def mean_ci(values: Sequence[float], resamples: int, seed: int, bootstrap: bool) -> tuple[float, float]:
    """The 95% CI of the mean: percentile bootstrap (``bootstrap``), else the normal approximation."""
    if bootstrap or len(values) < 2:
        return bootstrap_mean_ci(values, SLICE_LEVEL, resamples, seed=seed)
    x = np.asarray(values, dtype=np.float64)
    spread = float(x.std(ddof=1)) / math.sqrt(x.size)
    z = statistics.NormalDist().inv_cdf(0.5 + SLICE_LEVEL / 2)
    return float(x.mean()) - z * spread, float(x.mean()) + z * spread


def tenant_slices(
    per_case: Iterable[Mapping[str, Any]],
    metrics: Sequence[str],
    *,
    min_cases: int = MIN_TENANT_CASES,
    resamples: int = SLICE_RESAMPLES,
    seed: int = 0,
) -> dict[str, Any]:
    """``{"level", "method", "min_cases", "tenants": [{"tenant", "n", "enough", "metrics": {metric: {"mean",
    "ci", "n"}}}]}`` over the answerable cases of a report's ``per_case`` (the JSON form); a tenant with
    cases that failed (an error, e.g. no tenant to ask as, or no result; scored 0) also has ``failed``."""
    rows = []
    groups = cases_by_tenant(per_case)
    bootstrap = sum(map(len, groups.values())) * len(metrics) * resamples <= BOOTSTRAP_BUDGET
    for tenant, cases in groups.items():
        figures: dict[str, Any] = {}
        for metric in metrics if len(groups) > 1 else ():
            values = [v for c in cases if (v := metric_value(c.get("metrics", {}).get(metric))) is not None]
            ci = mean_ci(values, resamples, seed, bootstrap) if values else None
            figures[metric] = {
                "mean": math.fsum(values) / len(values) if values else None,
                "ci": list(ci) if ci is not None else None,
                "n": len(values),
            }
        failed = sum(1 for c in cases if c.get("status") in ("error", "missing"))
        rows.append(_slice_row(tenant, len(cases), failed, figures, min_cases))
    return {
        "level": SLICE_LEVEL,
        "method": (
            ONE_TENANT
            if len(groups) < 2
            else f"percentile bootstrap of the tenant's mean ({resamples} resamples, seed {seed})"
            if bootstrap
            else "normal approximation of the tenant's mean (too many cases to bootstrap in a second)"
        ),
        "min_cases": min_cases,
        "tenants": rows,
    }


ONE_TENANT = "one tenant: the overall figures"


def _slice_row(tenant: str, n: int, failed: int, figures: dict[str, Any], min_cases: int) -> dict[str, Any]:
    row = {"tenant": tenant, "n": n, "enough": n >= min_cases, "metrics": figures}
    return {**row, "failed": failed} if failed else row  # scored 0: said beside the slice


def one_tenant_slices(
    tenant: str, n: int, failed: int, *, min_cases: int = MIN_TENANT_CASES
) -> dict[str, Any]:
    """:func:`tenant_slices` of a ``per_case`` whose ``n`` answerable cases all have ``tenant`` (``failed``
    of them errored or missing), from those counts instead of the cases (the fast TREC path)."""
    return {
        "level": SLICE_LEVEL,
        "method": ONE_TENANT,
        "min_cases": min_cases,
        "tenants": [_slice_row(tenant, n, failed, {}, min_cases)] if n else [],
    }


def _by_tenant(report: LoadedReport) -> dict[str, LoadedReport]:
    """``report`` split by tenant: one report per tenant holding that tenant's cases (every status)."""
    groups = _grouped(report.data.get("per_case", []), answerable_only=False)
    return {
        t: LoadedReport(report.label, report.path, {**report.data, "per_case": c}) for t, c in groups.items()
    }


def tenant_comparisons(
    baseline: LoadedReport,
    systems: Sequence[LoadedReport],
    metrics: Sequence[str],
    *,
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    seed: int = 0,
    min_cases: int = MIN_TENANT_CASES,
) -> dict[str, Any]:
    """The paired test of every system against ``baseline`` per tenant and metric, Holm-corrected across
    every row whose tenant has at least ``min_cases`` paired cases (``family`` of them)."""
    split = {id(r): _by_tenant(r) for r in [baseline, *systems]}  # two runs may share a label
    tenants = sorted(  # a tenant one side lacks is a row with 0 paired cases, never left out unseen
        {
            t
            for parts in split.values()
            for t, part_of in parts.items()
            if not all(_unanswerable(c) for c in part_of.data["per_case"])
        }
    )
    empty = LoadedReport(baseline.label, baseline.path, {"per_case": []})

    def part(report: LoadedReport, tenant: str) -> LoadedReport:
        return split[id(report)].get(tenant, empty)

    sizes = {
        (id(s), t): len(set(part(baseline, t).per_case(metrics[0])) & set(part(s, t).per_case(metrics[0])))
        if metrics
        else 0
        for s in systems
        for t in tenants
    }
    family = sum(len(metrics) for n in sizes.values() if n >= min_cases)
    left_out = any(n < min_cases for n in sizes.values())
    rows: list[dict[str, Any]] = []
    for system in systems:
        for tenant in tenants:
            base_t, sys_t = part(baseline, tenant), part(system, tenant)
            for metric in metrics:
                pair = compare_pair(
                    base_t, sys_t, metric, alpha=alpha, n_resamples=n_resamples, seed=seed, family=family
                )
                rows.append(
                    {"tenant": tenant, "enough": sizes[(id(system), tenant)] >= min_cases, **asdict(pair)}
                )
    corrected = holm_bonferroni([r["p_value"] if r["enough"] else math.nan for r in rows])
    for row, p in zip(rows, corrected, strict=True):
        row["ci"] = list(row["ci"])
        row["p_value_corrected"] = p
        row["significant"] = bool(row["enough"] and not math.isnan(p) and p < alpha)
        for key in ("most_improved", "power", "test", "ci_method"):
            row.pop(key, None)
    return {
        "alpha": alpha,
        "correction": CORRECTION,
        "family": family,
        "correction_text": (
            f"Holm over {family} comparison(s) ({len(tenants)} tenant(s) x {len(metrics)} metric(s) x "
            f"{len(systems)} system(s)"
            + (f"; tenants under {min_cases} paired cases left out)" if left_out else ")")
        ),
        "ci_level": bonferroni_confidence(alpha, family),
        "test": "paired randomization (sign-flip) per tenant",
        "min_cases": min_cases,
        "n_resamples": n_resamples,
        "rows": rows,
    }


def with_tenant_comparisons(
    comparison: dict[str, Any], reports: Sequence[LoadedReport], baseline: LoadedReport | None = None
) -> dict[str, Any]:
    """A :func:`ragaudit.evaluation.compare.compare_reports` result with its ``tenant_comparisons``: the same
    systems and metrics, the same alpha, resamples and seed, tested per tenant."""
    base = baseline or reports[0]
    systems = [r for r in reports if r is not base and r.path != base.path]
    metrics = sorted({str(c["metric"]) for c in comparison.get("comparisons", [])}, key=_order(comparison))
    return {
        **comparison,
        "tenant_comparisons": tenant_comparisons(
            base,
            systems,
            metrics,
            alpha=float(comparison.get("alpha", 0.05)),
            n_resamples=int(comparison.get("n_resamples", 10_000)),
            seed=int(comparison.get("seed", 0)),
        ),
    }


def _order(comparison: Mapping[str, Any]) -> Any:
    first = [str(c["metric"]) for c in comparison.get("comparisons", [])]
    return first.index
