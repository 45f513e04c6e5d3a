"""``evaluate``: score a run against a golden dataset under the semantics policy."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from itertools import chain
from pathlib import Path
from typing import Any

from ragaudit.artifacts.provenance import recorded_top_k
from ragaudit.data.loading import load_dataset, load_run
from ragaudit.data.run import CaseRun, RankedItem, Run, count_duplicates, order_trec
from ragaudit.data.schema import Dataset
from ragaudit.errors import InputError
from ragaudit.evaluation.holes import judged_k
from ragaudit.evaluation.id_forms import IdFormCheck, all_plain
from ragaudit.evaluation.result import CaseResult, CaseStatus, Counts, EvalResult, RetrievedRecord
from ragaudit.metrics.bulk import compute_rankings
from ragaudit.metrics.names import DEFAULT_METRICS, MetricSpec, parse_metrics
from ragaudit.metrics.policy import Policy, no_answerable_case
from ragaudit.runner.tenancy import assess_run

RunLike = Run | str | Path | Mapping[str, Sequence[str]] | Mapping[str, Mapping[str, float]]


def as_run(run: RunLike) -> Run:
    """Accept a :class:`Run`, a path to a run file, or an in-memory run: ``{case_id: [ids]}`` ranked by
    position, or ``{case_id: {id: score}}`` (ranx / trec_eval style) ranked as trec_eval ranks a run
    file: score descending, then id descending (:func:`ragaudit.data.run.order_trec`), whatever the dict's order."""
    if isinstance(run, Run):
        return run
    if isinstance(run, (str, Path)):
        return load_run(run)
    cases = {}
    for cid, ranked in run.items():
        items = _scored_items(cid, ranked) if isinstance(ranked, Mapping) else _listed_items(cid, ranked)
        cases[cid] = CaseRun(items, duplicates=count_duplicates(items))
    return Run(cases, name="in-memory")


def _listed_items(case_id: str, ids: Any) -> list[RankedItem]:
    if isinstance(ids, (str, bytes)) or not isinstance(ids, Sequence):
        raise InputError(
            "run",
            None,
            f"case {case_id!r}: expected a list of ids or a {{id: score}} dict, got {type(ids).__name__}",
            'write {"q1": ["d2", "d1"]} (ranked by position) or {"q1": {"d1": 0.2, "d2": 0.9}} (by score)',
        )
    return [RankedItem(str(d)) for d in ids]


def _scored_items(case_id: str, scores: Mapping[Any, Any]) -> list[RankedItem]:
    bad = [
        d
        for d, v in scores.items()
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v)
    ]  # NaN or inf cannot be ranked: trec_eval's order is undefined for them
    if bad:
        raise InputError(
            "run",
            None,
            f"case {case_id!r}: the score of {bad[0]!r} is {scores[bad[0]]!r}, not a number",
            "give every id a finite numeric score, or pass a list of ids ranked by position",
        )
    return order_trec([RankedItem(str(d), float(v)) for d, v in scores.items()])


def _report_depth(specs: Sequence[MetricSpec]) -> int:
    cutoffs = [s.k for s in specs if s.k is not None]
    return max(cutoffs) if cutoffs else 100


def cut_by_top_k(
    specs: Sequence[MetricSpec], context: Mapping[str, Any] | None, deepest: int | None = None
) -> str | None:
    """The note for a live run that asked for fewer results than a metric's cut-off (``--top-k 5`` with
    ``nDCG@10``): those metrics were scored on a shorter list than their name says, so they are neither
    the figures of the system at that depth nor comparable with a run that asked for enough; ``None``
    when ``context`` records no ``retrieval.top_k`` or it covers every cut-off, or when the source returned
    longer lists than it was asked for (``deepest``, the longest returned list: nothing was cut)."""
    top_k = recorded_top_k(context)
    if top_k is None:
        return None
    depth = max(top_k, deepest or 0)
    deeper = [s.name for s in specs if s.k is not None and s.k > depth]
    if not deeper:
        return None
    return (
        f"{', '.join(deeper)} scored on the top {depth} only: top_k {top_k} asked for fewer results than "
        f"their cut-off, so they are the figures of a {depth}-deep list, not comparable with a run at full "
        f"depth (ask for --top-k {_report_depth(specs)} or more)"
    )


def in_sample_of(
    dataset: Dataset, context: Mapping[str, Any] | None, threshold: int
) -> dict[str, Any] | None:
    """The report's ``in_sample`` section when the pipeline in ``context`` has a fitted stage (its
    ``pipeline.fitted``): whether the answerable cases of ``dataset`` were among those it was fitted on
    (:mod:`ragaudit.artifacts.in_sample`); ``None`` when nothing was fitted."""
    from ragaudit.artifacts.in_sample import fitted_cases, in_sample_section

    pipeline = (context or {}).get("pipeline")
    stages = pipeline.get("fitted") if isinstance(pipeline, Mapping) else None
    if not stages:
        return None
    scored = fitted_cases(c for c in dataset.cases if c.is_answerable(threshold))
    return in_sample_section(stages, dataset.sha256, scored)


def _with_in_sample(dataset: Dataset, context: Mapping[str, Any] | None, threshold: int) -> dict[str, Any]:
    out = dict(context or {})
    in_sample = in_sample_of(dataset, context, threshold)
    if in_sample is not None:
        out["in_sample"] = in_sample
    return out


def evaluate(
    dataset: Dataset | str | Path,
    run: RunLike,
    metrics: Iterable[MetricSpec] | str | Sequence[str] | None = None,
    policy: Policy | None = None,
    context: Mapping[str, Any] | None = None,
) -> EvalResult:
    """Score ``run`` on ``dataset``; every dataset case appears in the result, marked.

    Averages are macro means over answerable cases; a case the run does not answer (absent, or an
    error) scores 0 there and is listed. Unanswerable cases are kept out of the averages. When the
    pipeline in ``context`` has a fitted stage, the result says whether these cases were among those it
    was fitted on (``in_sample``, :func:`in_sample_of`).
    """
    policy = policy or Policy()
    ds = (
        dataset
        if isinstance(dataset, Dataset)
        else load_dataset(dataset, threshold=policy.relevance_threshold)
    )
    the_run = as_run(run)
    if metrics is None:
        specs: tuple[MetricSpec, ...] = DEFAULT_METRICS
    elif isinstance(metrics, (str, list, tuple)) and all(isinstance(m, str) for m in metrics):
        specs = parse_metrics(metrics)
    else:
        specs = tuple(metrics)  # type: ignore[arg-type]
    threshold = policy.relevance_threshold

    answerable = [c for c in ds.cases if c.is_answerable(threshold)]
    grades = [c.grades() for c in answerable]
    rel_sets = [c.relevant_set(threshold) for c in answerable]
    case_runs = [the_run.cases.get(c.id) for c in answerable]
    if not answerable:
        top = max((g for case in ds.cases for g in case.grades().values()), default=None)
        raise no_answerable_case(ds.path, threshold, top)
    rankings = [
        cr.ranking[: policy.max_depth] if cr is not None and cr.error is None else [] for cr in case_runs
    ]
    hole_spec = MetricSpec("Judged", judged_k(specs))  # every report says how much of the top k is judged
    values = compute_rankings(rankings, rel_sets, grades, (*specs, hole_spec), policy.gain)
    means = {s.name: float(values[s.name].mean()) for s in specs}

    isolation = the_run.isolation or assess_run(the_run, {c.id: c.tenant_id for c in ds.cases})
    depth = _report_depth(specs) if policy.max_depth is None else min(_report_depth(specs), policy.max_depth)
    per_case: list[CaseResult] = []
    row_of = {c.id: i for i, c in enumerate(answerable)}
    forms = IdFormCheck()  # unjudged retrieved ids equal to a judged id but for their form (a hint)
    plain = all_plain(chain(rankings, grades))
    for case in ds.cases:
        case_run = the_run.cases.get(case.id)
        row = row_of.get(case.id)
        status: CaseStatus
        if row is None:
            status = "unanswerable"
        elif case_run is None:
            status = "missing"
        elif case_run.error is not None:
            status = "error"
        else:
            status = "ok"
        case_grades = case.grades()
        rel = case.relevant_set(threshold)
        retrieved = tuple(
            RetrievedRecord(
                it.chunk_id, it.score, case_grades.get(it.chunk_id), it.chunk_id in rel, it.tenant_id
            )
            for it in (case_run.items[:depth] if case_run is not None else [])
        )
        if row is not None and not plain:  # an answerable case: its ranking as scored, to the report's depth
            forms.add(case.id, rankings[row][:depth], case_grades)
        per_case.append(
            CaseResult(
                id=case.id,
                status=status,
                answered=case_run is not None and case_run.error is None,
                metrics={s.name: float(values[s.name][row]) for s in specs} if row is not None else {},
                retrieved=retrieved,
                tenant_id=case.tenant_id,
                error=case_run.error if case_run is not None else None,
                latency_ms=case_run.latency_ms if case_run is not None else None,
                duplicates=case_run.duplicates if case_run is not None else 0,
                leaks=tuple(leak.to_json() for leak in case_run.leaks) if case_run is not None else (),
                query=case.query or None,
                judged=float(values[hole_spec.name][row]) if row is not None and rankings[row] else None,
            )
        )
    dataset_ids = {c.id for c in ds.cases}
    extra = sorted(set(the_run.cases) - dataset_ids)
    notes = [*ds.notes, *the_run.problems]
    if extra:
        shown = ", ".join(extra[:5]) + (" ..." if len(extra) > 5 else "")
        notes.append(f"{len(extra)} run result(s) for ids not in the dataset were ignored: {shown}")
    live = isinstance((context or {}).get("retrieval"), Mapping)  # a run file asked for no top_k
    deepest = max((len(cr.items) for cr in the_run.cases.values()), default=0) if live else 0
    if cut := cut_by_top_k(specs, context, deepest):
        notes.append(cut)
    if form_note := forms.note():
        notes.append(form_note)
    if ds.skipped:
        notes += [
            f"dataset input left out: {n} {reason.replace('_', ' ')}" for reason, n in ds.skipped.items() if n
        ]
    counts = Counts(
        cases=len(ds.cases),
        answerable=len(answerable),
        unanswerable=len(ds.cases) - len(answerable),
        missing=sum(1 for c in per_case if c.status == "missing"),
        errors=sum(1 for c in per_case if c.status == "error"),
        not_in_dataset=len(extra),
        unanswerable_errors=sum(1 for c in per_case if c.status == "unanswerable" and c.error is not None),
    )
    return EvalResult(
        means,
        counts,
        tuple(per_case),
        policy,
        ds.info(),
        the_run.info(),
        tuple(notes),
        _with_in_sample(ds, context, policy.relevance_threshold),
        isolation=isolation,
        judged_k=hole_spec.k,
    )
