"""Paired comparison of evaluation reports: deltas, bootstrap CIs, corrected p-values, win/tie/loss.

Reports are comparable only when made on the same dataset (same sha256) under the same policy;
``compare_reports`` refuses otherwise and says why. Pairs are the answerable cases both reports scored.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ragaudit.artifacts.envelope import envelope, read_report
from ragaudit.artifacts.in_sample import first_in_sample
from ragaudit.artifacts.provenance import recorded_top_k
from ragaudit.errors import InputError, MetricNameError
from ragaudit.evaluation.holes import DEFAULT_MIN_JUDGED, report_holes
from ragaudit.evaluation.in_sample_integrity import with_own_in_sample
from ragaudit.evaluation.outcome import failed_run
from ragaudit.metrics.names import parse_metric
from ragaudit.stats.bootstrap import bootstrap_mean_ci
from ragaudit.stats.correction import bonferroni_confidence, ci_method, holm_bonferroni
from ragaudit.stats.paired import paired_effect_size, paired_t_test, randomization_test, win_tie_loss
from ragaudit.stats.power import estimate_power

DEFAULT_DELTA = 0.02
DEFAULT_POWER = 0.8

MOVED = 5


def metric_value(value: object) -> float | None:
    """A per-case metric value as a float, or ``None`` when it is not a finite number. A boolean is not
    one (``true`` is no score: :func:`ragaudit.evaluation.integrity.case_inconsistencies` calls such a
    case blank too), so every reader of per-case values skips it alike."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def case_values(cases: Iterable[Mapping[str, Any]], metric: str) -> dict[str, float]:
    """``{case id: value}`` of ``metric`` over per-case records, the cases with a finite value
    (:func:`metric_value`)."""
    out: dict[str, float] = {}
    for case in cases:
        value = metric_value(case.get("metrics", {}).get(metric))
        if value is not None:
            out[str(case["id"])] = value
    return out


@dataclass(frozen=True)
class LoadedReport:
    """An eval report as read from JSON, reduced to what comparisons need."""

    label: str
    path: str
    data: Mapping[str, Any]

    @property
    def dataset_sha(self) -> str:
        return str(self.data.get("dataset", {}).get("sha256", ""))

    @property
    def policy(self) -> Mapping[str, Any]:
        policy = self.data.get("policy", {})
        return policy if isinstance(policy, Mapping) else {}

    def per_case(self, metric: str) -> dict[str, float]:
        return case_values(self.data.get("per_case", []), metric)

    def metric_names(self) -> list[str]:
        return list(self.data.get("metrics", {}))


def load_report(path: str | Path, label: str | None = None) -> LoadedReport:
    p = Path(path)
    data = read_report(p)
    if data.get("kind") != "eval":  # another kind may carry per_case and metrics of another meaning
        raise InputError(
            str(p),
            None,
            f"not a ragaudit eval report (a {data.get('kind')!r} report)",
            "pass a report written by 'ragaudit eval --out' (or the pytest plugin's --ragaudit-report)",
        )
    if "per_case" not in data or "metrics" not in data:
        raise InputError(
            str(p),
            None,
            "not a ragaudit eval report (no per_case / metrics)",
            "pass a report written by 'ragaudit eval --out'",
        )
    name = label or str(data.get("run", {}).get("name") or p.stem)
    return LoadedReport(name, str(p), data)


@dataclass(frozen=True)
class Comparison:
    metric: str
    baseline: str
    system: str
    baseline_mean: float
    system_mean: float
    delta: float
    ci: tuple[float, float]
    p_value: float
    p_value_corrected: float
    test: str
    significant: bool
    wins: int
    ties: int
    losses: int
    n: int
    effect_size: float
    p_value_t_test: float
    most_improved: list[dict[str, Any]] = field(default_factory=list)
    most_regressed: list[dict[str, Any]] = field(default_factory=list)
    ci_level: float = 0.95
    """The confidence level of ``ci``: ``1 - alpha/m`` over a family of ``m`` Holm-corrected comparisons."""
    ci_method: str = "percentile bootstrap, unadjusted"
    power: dict[str, Any] = field(default_factory=dict)
    """How many cases the comparison needs (:func:`ragaudit.stats.power.estimate_power` of the per-case
    differences, as ``ragaudit power --baseline`` gives it): cases to detect ``delta``, smallest detectable."""

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["ci"] = list(self.ci)
        return out


def check_comparable(reports: Sequence[LoadedReport]) -> None:
    first = reports[0]
    for other in reports[1:]:
        if other.dataset_sha != first.dataset_sha:
            raise InputError(
                other.path,
                None,
                f"made on a different dataset (sha256 {other.dataset_sha[:12]} vs {first.dataset_sha[:12]} in {first.path})",
                "compare reports evaluated on the same golden dataset",
            )
        keys = set(first.policy) | set(other.policy)
        diff = sorted(k for k in keys if first.policy.get(k) != other.policy.get(k))
        if diff:
            detail = ", ".join(f"{k}: {first.policy.get(k)!r} vs {other.policy.get(k)!r}" for k in diff)
            raise InputError(
                other.path,
                None,
                f"made under a different metric policy ({detail})",
                "re-run both evaluations with the same --gain and --relevance-threshold",
            )


def _moved(ids: list[str], d: np.ndarray, reverse: bool) -> list[dict[str, Any]]:
    order = np.argsort(-d if reverse else d, kind="stable")[:MOVED]
    return [{"id": ids[i], "delta": float(d[i])} for i in order if (d[i] > 0 if reverse else d[i] < 0)]


def compare_pair(
    baseline: LoadedReport,
    system: LoadedReport,
    metric: str,
    *,
    alpha: float,
    n_resamples: int,
    seed: int,
    family: int = 1,
    delta: float = DEFAULT_DELTA,
    power: float = DEFAULT_POWER,
) -> Comparison:
    """One paired comparison in a family of ``family`` comparisons that are Holm-corrected together: the
    delta's percentile-bootstrap CI is at level ``1 - alpha/family`` (Bonferroni; see
    :mod:`ragaudit.stats.correction`), so it is adjusted for the same family as the p-value."""
    a_map, b_map = baseline.per_case(metric), system.per_case(metric)
    ids = sorted(set(a_map) & set(b_map))
    a = np.array([a_map[i] for i in ids])
    b = np.array([b_map[i] for i in ids])
    d = b - a
    rng = np.random.default_rng(seed)
    p = randomization_test(a, b, n_resamples=n_resamples, rng=rng) if ids else math.nan
    wtl = win_tie_loss(a, b)
    level = bonferroni_confidence(alpha, family)
    return Comparison(
        metric=metric,
        baseline=baseline.label,
        system=system.label,
        baseline_mean=float(a.mean()) if ids else math.nan,
        system_mean=float(b.mean()) if ids else math.nan,
        delta=float(d.mean()) if ids else math.nan,
        ci=bootstrap_mean_ci(d, level, n_resamples=n_resamples, rng=rng),
        p_value=p,
        p_value_corrected=p,
        test="paired randomization (sign-flip)",
        significant=False,
        wins=wtl.wins,
        ties=wtl.ties,
        losses=wtl.losses,
        n=len(ids),
        effect_size=paired_effect_size(a, b) if ids else math.nan,
        p_value_t_test=paired_t_test(a, b).p_value if ids else math.nan,
        most_improved=_moved(ids, d, True),
        most_regressed=_moved(ids, d, False),
        ci_level=level,
        ci_method=ci_method(level, family),
        power=estimate_power(d.tolist(), delta, alpha, power).to_json(),
    )


def compare_reports(
    reports: Sequence[LoadedReport],
    baseline: LoadedReport | None = None,
    metrics: Sequence[str] | None = None,
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    seed: int = 0,
    *,
    delta: float = DEFAULT_DELTA,
    power: float = DEFAULT_POWER,
    min_judged: float = DEFAULT_MIN_JUDGED,
    max_error_rate: float | None = None,
) -> dict[str, Any]:
    """Compare every system against the baseline on every metric; Holm-correct the p-values across the
    whole table and give each delta's CI at the matching Bonferroni level ``1 - alpha/m``. Each row
    carries its power figures (cases needed to detect ``delta`` with ``power`` at ``alpha``, smallest
    detectable difference), and each system its judged share of the top k (warning under ``min_judged``).
    Each report whose run fails the exit rule (at ``max_error_rate``; None: each report's recorded
    tolerance, else the default 0) is listed in ``failed_runs``."""
    if len(reports) < 2:
        raise InputError("compare", None, "need at least two reports", "pass two or more report files")
    base = baseline or reports[0]
    everyone = [base, *[r for r in reports if r is not base and r.path != base.path]]
    check_comparable(everyone)
    names = (
        list(metrics)
        if metrics
        else [m for m in base.metric_names() if all(m in r.metric_names() for r in everyone)]
    )
    family = (len(everyone) - 1) * len(names)
    rows = [
        compare_pair(
            base,
            other,
            m,
            alpha=alpha,
            n_resamples=n_resamples,
            seed=seed,
            family=family,
            delta=delta,
            power=power,
        )
        for other in everyone[1:]
        for m in names
    ]
    corrected = holm_bonferroni([r.p_value for r in rows])
    final = [
        Comparison(
            **{
                **asdict(r),
                "ci": r.ci,
                "p_value_corrected": c,
                "significant": bool(not math.isnan(c) and c < alpha),
            }
        )
        for r, c in zip(rows, corrected, strict=True)
    ]
    dataset = dict(base.data.get("dataset", {}))
    holes = [report_holes(r.data, r.label, min_judged) for r in everyone]
    return {
        **envelope("compare", dataset=dataset, policy=base.policy),
        "dataset": dataset,
        "policy": dict(base.policy),
        "baseline": base.label,
        "systems": [r.label for r in everyone[1:]],
        "alpha": alpha,
        "correction": "holm-bonferroni",
        "ci_level": bonferroni_confidence(alpha, family),
        "ci_adjustment": "bonferroni" if family > 1 else "none",
        "n_resamples": n_resamples,
        "seed": seed,
        "reports": {r.label: r.path for r in everyone},
        "comparisons": [c.to_json() for c in final],
        "holes": [h.to_json() for h in holes],
        "notes": [
            *([depth] if (depth := depth_note(everyone, names)) else []),
            *failed_run_notes(everyone),
            *unpaired_notes(base, everyone[1:], names),
            *(f"incomplete judgments: {w}" for h in holes if (w := h.warning())),
        ],
        **first_in_sample((r.label, with_own_in_sample(r.data)) for r in everyone),
        "failed_runs": [
            f for r in everyone if (f := failed_run(r.data, r.label, max_error_rate)) is not None
        ],
    }


def failed_run_notes(reports: Sequence[LoadedReport]) -> list[str]:
    """One note per report whose run failed on some cases (errors and missing cases, the rule of
    ``ragaudit eval``): each failed case scores 0, so a comparison with it is partly its failures: a
    system "better" than a baseline that timed out, or "worse" for its own timeouts."""
    from ragaudit.evaluation.outcome import report_outcome

    notes = []
    for report in reports:
        outcome = report_outcome(report.data, f"report {report.label}", "report")
        if outcome.failures:
            notes.append(
                f"the run of {report.label} failed on {len(outcome.failures)} of {outcome.total} cases (errors or "
                "missing, each scored 0): its comparisons are partly those failures, not the systems' "
                "rankings; re-run it (ragaudit compare exits 1 on it)"
            )
    return notes


def unpaired_notes(base: LoadedReport, systems: Sequence[LoadedReport], metrics: Sequence[str]) -> list[str]:
    """One note per system whose scored cases and the baseline's differ (a report cut by hand, or
    corrupt; two reports of one dataset normally hold the same cases): the paired test and the means
    shown use only the cases both scored, so they are not the reports' own means."""
    if not metrics:
        return []
    ours = set(base.per_case(metrics[0]))
    notes = []
    for system in systems:
        theirs = set(system.per_case(metrics[0]))
        only_system, only_base = len(theirs - ours), len(ours - theirs)
        if only_system or only_base:
            notes.append(
                f"{system.label} and {base.label} scored different cases ({only_system} only in {system.label}, "
                f"{only_base} only in {base.label}): compared on the {len(theirs & ours)} both scored, so the "
                "means shown are not the reports' own"
            )
    return notes


def depth_note(reports: Sequence[LoadedReport], metrics: Sequence[str]) -> str | None:
    """The note when the reports asked for different numbers of results (``retrieval.top_k``) and a
    compared metric's cut-off is deeper than the shallowest: part of such a difference is the depth,
    not the ranking. ``None`` when the depths agree, are unknown (run files), or cover every cut-off."""
    depths: list[tuple[str, int]] = []  # a list: two reports may share a label
    for report in reports:
        if (top_k := recorded_top_k(report.data)) is not None:
            depths.append((report.label, top_k))
    if len({k for _, k in depths}) < 2:
        return None
    cutoffs: dict[str, int] = {}
    for name in metrics:
        try:
            k = parse_metric(name).k
        except MetricNameError:
            continue
        if k is not None:
            cutoffs[name] = k
    shallow = min(k for _, k in depths)
    deeper = [m for m, k in cutoffs.items() if k > shallow]
    if not deeper:
        return None
    asked = ", ".join(f"{label} top_k {k}" for label, k in depths)
    return (
        f"the reports asked for different depths ({asked}): {', '.join(deeper)} scored on fewer "
        f"results in some of them, so their differences are partly the depth, not the ranking; evaluate "
        f"every system with the same --top-k ({max(cutoffs.values())} or more)"
    )
