"""Whether a benchmark report's in-sample marks are the ones its own records give.

A benchmark pipeline with a fitted stage (a learned fusion) carries its own ``in_sample`` section and
the report a top-level one naming every IN-SAMPLE pipeline (:mod:`ragaudit.artifacts.in_sample`).
Deleting both would make an in-sample figure read as held-out on every page of the report. So
``ragaudit bench`` also records, for each pipeline with a fitted stage, what recomputes them
(``fitted``: :func:`fitted_record`): the fitted stages (each ``fitted_on``, with the case
fingerprints it learned from) and the fingerprints of the answerable cases it scored. A reader
recomputes each pipeline's section from that (:func:`with_own_bench_in_sample`) and puts it back when
the stored one is missing or says less.

A report that dropped ``fitted`` too leaves one trace: a pipeline named after the learned preset
(``hybrid-rerank``) always has a fitted stage. Such a pipeline without any record is read as IN-SAMPLE
(``assumed``: its text says the marks could not be checked), never as held-out. A pipeline of another
name whose records were all deleted cannot be told from one that was never fitted (docs/gates.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragaudit.artifacts.in_sample import HOLDOUT_FIX, case_fingerprint, first_in_sample, in_sample_section
from ragaudit.evaluation.in_sample_integrity import RANK

LEARNED_NAME = "hybrid-rerank"
"""The name of a pipeline built from the learned preset (``hybrid-rerank:MODEL.json``): it has a fitted
stage whatever its report says (:data:`ragaudit.pipelines.config.LEARNED_PRESET`)."""


def fitted_record(context: Mapping[str, Any], per_case: list[Mapping[str, Any]]) -> dict[str, Any]:
    """``{"fitted": {"stages", "scored"}}`` for a benchmark pipeline entry whose eval ``context`` records a
    fitted stage (``pipeline.fitted``); ``{}`` without one. ``scored`` is ``{case id: fingerprint}`` of
    the answerable cases it scored (``per_case``, as eval reports write them)."""
    pipeline = context.get("pipeline")
    stages = pipeline.get("fitted") if isinstance(pipeline, Mapping) else None
    if not isinstance(stages, list) or not stages:
        return {}
    return {"fitted": {"stages": stages, "scored": _scored(per_case)}}


def _scored(per_case: list[Mapping[str, Any]]) -> dict[str, str]:
    return {
        str(c.get("id")): case_fingerprint(
            c.get("tenant_id") if isinstance(c.get("tenant_id"), str) else None, str(c.get("query") or "")
        )
        for c in per_case
        if isinstance(c, Mapping) and c.get("answerable") is True
    }


def _dataset_sha(report: Mapping[str, Any]) -> str:
    for holder in (report.get("dataset"), report.get("provenance")):
        if isinstance(holder, Mapping):
            sha = holder.get("sha256") or holder.get("dataset_sha256")
            if isinstance(sha, str):
                return sha
    return ""


def recomputed(report: Mapping[str, Any], pipeline: Mapping[str, Any]) -> dict[str, Any] | None:
    """The ``in_sample`` section a benchmark pipeline's own records give (``None``: no fitted stage
    recorded and not the learned preset)."""
    record = pipeline.get("fitted")
    if isinstance(record, Mapping) and isinstance(record.get("stages"), list):
        scored = record.get("scored")
        return in_sample_section(
            [s for s in record["stages"] if isinstance(s, Mapping)],
            _dataset_sha(report),
            {str(k): str(v) for k, v in scored.items()} if isinstance(scored, Mapping) else {},
        )
    if pipeline.get("name") == LEARNED_NAME:
        return {
            "state": "in_sample",
            "assumed": True,
            "text": (
                f"IN-SAMPLE (assumed): {LEARNED_NAME} reranks with a fitted fusion model, but this report "
                "records neither what it was fitted on (fitted) nor its in_sample marks, so its figures "
                f"cannot be read as held-out; re-run 'ragaudit bench' for a report that records them; {HOLDOUT_FIX}"
            ),
        }
    return None


def with_own_bench_in_sample(report: Mapping[str, Any]) -> Mapping[str, Any]:
    """``report`` (a benchmark) with each pipeline's ``in_sample`` section recomputed from its records
    where the stored one is missing or concedes less, and the top-level section rebuilt from them; else
    ``report`` unchanged."""
    pipelines = report.get("pipelines")
    if report.get("kind") != "benchmark" or not isinstance(pipelines, list):
        return report
    changed = False
    fixed: list[Any] = []
    for entry in pipelines:
        section = recomputed(report, entry) if isinstance(entry, Mapping) else None
        stored = entry.get("in_sample") if isinstance(entry, Mapping) else None
        if section is not None and isinstance(entry, Mapping) and _says_less(stored, section):
            entry = {**entry, "in_sample": section}
            changed = True
        fixed.append(entry)
    if not changed:
        return report
    systems = [(f"pipeline {p.get('name')}", p) for p in fixed if isinstance(p, Mapping)]
    return {**report, "pipelines": fixed, **first_in_sample(systems)}


def _says_less(stored: Any, expected: Mapping[str, Any]) -> bool:
    if not isinstance(stored, Mapping):
        return True
    overlap, wanted = stored.get("overlap"), expected.get("overlap")
    return RANK.get(str(stored.get("state")), -1) < RANK.get(str(expected.get("state")), -1) or (
        isinstance(overlap, int) and isinstance(wanted, int) and overlap < wanted
    )
