"""Whether an eval report's ``in_sample`` section is the one its own records give.

An eval report of a pipeline with a fitted stage (``pipeline.fitted``: each stage's ``fitted_on``, the
dataset and the case fingerprints it learned from) carries an ``in_sample`` section saying whether the
cases it scored were among those (:mod:`ragaudit.artifacts.in_sample`). Deleting that section, or
editing its state to ``held_out``, would make an in-sample figure read as a held-out claim in the gate,
the history and every page. The report's own records recompute it: the fitted stages, the dataset
sha256 and each answerable case's tenant and query (``per_case``). :func:`in_sample_inconsistency`
names a section that is missing or says less than they do, and a report that dropped both the section
and ``pipeline.fitted`` while its learned model file (still where its config names it) records
``fitted_on``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ragaudit.artifacts.in_sample import case_fingerprint, in_sample_section

FIX = "use the report 'ragaudit eval' wrote, unedited"
RANK = {"held_out": 0, "unknown": 1, "in_sample": 2}
"""How much a state concedes: a stored state below the recomputed one hides an in-sample figure."""


def recomputed_in_sample(report: Mapping[str, Any]) -> dict[str, Any] | None:
    """The ``in_sample`` section the report's own records give (``None``: it records no fitted stage)."""
    pipeline = report.get("pipeline")
    stages = pipeline.get("fitted") if isinstance(pipeline, Mapping) else None
    if not isinstance(stages, list) or not stages:
        return None
    dataset = report.get("dataset")
    sha = dataset.get("sha256") if isinstance(dataset, Mapping) else None
    cases = report.get("per_case")
    scored = {
        str(c.get("id")): case_fingerprint(
            c.get("tenant_id") if isinstance(c.get("tenant_id"), str) else None, str(c.get("query") or "")
        )
        for c in (cases if isinstance(cases, list) else [])
        if isinstance(c, Mapping) and c.get("answerable") is True
    }
    return in_sample_section([s for s in stages if isinstance(s, Mapping)], str(sha or ""), scored)


def _unrecorded_fitting(report: Mapping[str, Any]) -> str | None:
    """A learned stage whose model file (still at the path the config names) records what it was fitted
    on, in a report that records no fitted stage: ``pipeline.fitted`` was deleted with the section."""
    pipeline = report.get("pipeline")
    config = pipeline.get("config") if isinstance(pipeline, Mapping) else None
    rerank = config.get("rerank") if isinstance(config, Mapping) else None
    model = rerank.get("model") if isinstance(rerank, Mapping) else None
    if not isinstance(model, str) or not model.endswith(".json"):
        return None
    try:
        data = json.loads(Path(model).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, Mapping) or not isinstance(data.get("fitted_on"), Mapping):
        return None
    return (
        f"the report records no fitted stage (pipeline.fitted) and no in_sample section, but its reranker "
        f"model {model} records the golden cases it was fitted on: both were deleted; {FIX}"
    )


def in_sample_inconsistency(report: Mapping[str, Any]) -> str | None:
    """Why the report's ``in_sample`` section is not the one its records give (``None``: it is, or the
    report records no fitted stage)."""
    expected = recomputed_in_sample(report)
    if expected is None:
        return None if isinstance(report.get("in_sample"), Mapping) else _unrecorded_fitting(report)
    stored = report.get("in_sample")
    what = (
        f"its cases are {expected['state'].upper().replace('_', '-')} (overlap {expected['overlap']} of "
        f"{expected['cases']} answerable cases, recomputed from pipeline.fitted and per_case)"
    )
    if not isinstance(stored, Mapping):
        return f"the report records a fitted stage but has no in_sample section: {what}; the section was deleted; {FIX}"
    state, overlap = stored.get("state"), stored.get("overlap")
    if RANK.get(str(state), -1) < RANK[expected["state"]] or (
        isinstance(overlap, int) and overlap < expected["overlap"]
    ):
        return f"its in_sample section says {state!r} (overlap {overlap!r}) but {what}: it was edited; {FIX}"
    return None


def with_own_in_sample(report: Mapping[str, Any]) -> Mapping[str, Any]:
    """``report`` with the ``in_sample`` section its own records give when the stored one does not say
    ``in_sample`` but they do (a deleted or edited section); else ``report`` unchanged. For the commands
    that carry a report's mark into theirs (``compare``, ``k-sweep``)."""
    stored = report.get("in_sample")
    if isinstance(stored, Mapping) and stored.get("state") == "in_sample":
        return report
    recomputed = recomputed_in_sample(report)
    if recomputed is None or recomputed["state"] != "in_sample":
        return report
    return {**report, "in_sample": recomputed}
