"""Merge annotators' judgments (and the grades the pool carried over) into a golden set.

Per candidate, the grades in effect of every annotator who judged it are combined:

* all agree: that grade;
* an ``adjudicator`` judged it: the adjudicator's grade;
* otherwise ``resolve``: ``median`` (the lower median: a tie between 1 and 2 gives 1), ``min`` or ``max``;
  the pair is marked as a disagreement in the case's metadata.

A candidate nobody judged keeps the grade the pool carried over from the earlier golden set (the
annotators' grades win over carried-over ones). ``relevant_chunk_ids`` lists the grades at or above
``relevant_from`` (2 by default: grade 1 is "related but not sufficient"). Evidence spans of every
annotator are kept, with the merged grade. A case is unanswerable (``relevant_chunk_ids: []`` and the tag
``unanswerable``) when most annotators who marked it say so and no candidate is graded relevant; a
case with neither a relevant candidate nor an unanswerable mark is left out and reported as
incomplete; a drafted unanswerable probe (``ragaudit pool --draft-unanswerable``) is kept only when
the annotators mark it unanswerable, else dropped. Who labelled what and when is kept under each case's ``metadata.labels``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ragaudit.labeling.judgments import AnnotatorLabels
from ragaudit.labeling.pool import Pool, PoolCase

Resolve = Literal["median", "min", "max"]


@dataclass
class MergeResult:
    cases: list[dict[str, Any]]
    incomplete: list[str] = field(default_factory=list)
    """Cases left out: nothing graded relevant and not marked unanswerable."""
    disagreements: int = 0
    unjudged: int = 0
    """Pooled candidates nobody judged and the pool carried no grade for."""
    dropped_drafts: list[str] = field(default_factory=list)
    """Drafted unanswerable probes the annotators did not accept (not marked unanswerable)."""
    conflicts: list[str] = field(default_factory=list)
    """Cases marked unanswerable although a candidate is graded relevant (kept answerable)."""

    def write(self, path: str | Path) -> None:
        with Path(path).open("w", encoding="utf-8") as out:
            for case in self.cases:
                out.write(json.dumps(case, ensure_ascii=False) + "\n")


def combine(grades: Sequence[int], resolve: Resolve) -> int:
    """One grade from several: the lower median, the minimum or the maximum."""
    ordered = sorted(grades)
    if resolve == "min":
        return ordered[0]
    if resolve == "max":
        return ordered[-1]
    return ordered[(len(ordered) - 1) // 2]


def _merge_case(
    case: PoolCase,
    labels: Sequence[AnnotatorLabels],
    relevant_from: int,
    resolve: Resolve,
    adjudicator: str | None,
    result: MergeResult,
) -> dict[str, Any] | None:
    relevance: dict[str, int] = dict(case.judged)
    provenance: dict[str, list[dict[str, Any]]] = {}
    evidence: list[dict[str, Any]] = []
    disagreements: list[str] = []
    chunk_ids = [c.chunk_id for c in case.candidates] + [
        k for k in case.judged if k not in {c.chunk_id for c in case.candidates}
    ]
    for chunk_id in chunk_ids:
        votes = [
            (a, a.state.grades[(case.case_id, chunk_id)])
            for a in labels
            if (case.case_id, chunk_id) in a.state.grades
        ]
        if not votes:
            if chunk_id not in relevance:
                result.unjudged += 1
            continue
        provenance[chunk_id] = [
            {"annotator": a.annotator, "grade": e["grade"], "superseded": e["superseded"], "time": e["time"]}
            for a, e in votes
        ]
        grades = [int(e["grade"]) for _, e in votes]
        by_judge = {a.annotator: int(e["grade"]) for a, e in votes}
        if adjudicator is not None and adjudicator in by_judge:
            grade = by_judge[adjudicator]
        else:
            grade = combine(grades, resolve)
        if len(set(grades)) > 1:
            disagreements.append(chunk_id)
        relevance[chunk_id] = grade
        spans = {
            (s["doc_id"], s["start"], s["end"])
            for a in labels
            for s in a.state.spans.get((case.case_id, chunk_id), [])
        }
        if grade >= 1:
            evidence.extend({"doc_id": d, "start": s, "end": e, "grade": grade} for d, s, e in sorted(spans))
    result.disagreements += len(disagreements)
    relevant = [k for k, g in relevance.items() if g >= relevant_from]
    marks = {
        a.annotator: a.state.unanswerable[case.case_id]
        for a in labels
        if case.case_id in a.state.unanswerable
    }
    says_unanswerable = (
        sum(1 for e in marks.values() if e["value"]) * 2 > len(marks) if marks else case.unanswerable
    )
    if says_unanswerable and relevant:
        result.conflicts.append(case.case_id)
    unanswerable = says_unanswerable and not relevant
    if case.draft is not None and not unanswerable:
        result.dropped_drafts.append(case.case_id)
        return None
    if not relevant and not unanswerable:
        result.incomplete.append(case.case_id)
        return None
    out: dict[str, Any] = {"id": case.case_id, "query": case.query}
    if case.tenant_id is not None:
        out["tenant_id"] = case.tenant_id
    out["relevant_chunk_ids"] = relevant
    out["relevance"] = relevance
    if evidence:
        out["evidence"] = evidence
    if unanswerable:
        out["tags"] = ["unanswerable"] + (["drafted-probe"] if case.draft is not None else [])
    out["metadata"] = {
        "labels": provenance,
        "carried_over": sorted(k for k in case.judged if k not in provenance),
        "disagreements": disagreements,
        "unanswerable_marks": {n: {"value": e["value"], "time": e["time"]} for n, e in marks.items()},
    }
    return out


def merge_judgments(
    pool: Pool,
    labels: Sequence[AnnotatorLabels],
    *,
    relevant_from: int = 2,
    resolve: Resolve = "median",
    adjudicator: str | None = None,
) -> MergeResult:
    """The golden cases of ``pool`` under the annotators' ``labels`` (see the module docstring)."""
    result = MergeResult([])
    for case in pool.cases:
        merged = _merge_case(case, labels, relevant_from, resolve, adjudicator, result)
        if merged is not None:
            result.cases.append(merged)
    return result
