"""In-sample scores, named: a fitted stage evaluated on the cases it was fitted on.

A stage fitted on a golden set (``ragaudit fit-fusion``'s learned fusion, anything whose model records
``fitted_on``) scores the cases it saw better than new queries; a report of those cases is an
**in-sample** figure. What the stage was fitted on is in its model (``fitted_on``: the dataset's
``sha256`` and, since ``fit-fusion --holdout``, ``cases``: ``{case id: fingerprint}`` of every case
it learned from). :func:`in_sample_section` compares that with the cases a report scores:

- ``in_sample``: some (``partial``) or all answerable cases scored were fitted on, matched by case id
  and the fingerprint of the case's tenant and query; a model that records no case ids but was fitted
  on this very dataset (same sha256) counts every case;
- ``held_out``: none was;
- ``unknown``: the model records no case ids and was fitted on another dataset.

The section is written into the report (top-level ``in_sample``); the renderers print
:func:`in_sample_line` at the top of the terminal, Markdown and HTML views, the run history keeps an
in-sample report out of its trends, and the quality gate does not pass a floor on one (NOT VERIFIED).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

HOLDOUT_FIX = (
    "fit on one part and score on the other: ragaudit fit-fusion --holdout 0.3 writes the held-out cases "
    "to FILE.holdout.jsonl; evaluate with --dataset FILE.holdout.jsonl"
)


def case_fingerprint(tenant_id: str | None, query: str) -> str:
    """A short hash of a case's tenant and query text (its id alone may be reused by another set)."""
    text = f"{tenant_id or ''}\x00{' '.join(query.split())}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def fitted_cases(cases: Iterable[Any]) -> dict[str, str]:
    """``{case id: fingerprint}`` of the golden cases a stage is fitted on (what ``fitted_on.cases`` holds)."""
    return {c.id: case_fingerprint(c.tenant_id, c.query) for c in cases}


def _stage_label(stage: Mapping[str, Any]) -> str:
    return str(stage.get("name") or stage.get("stage") or "a fitted stage")


def in_sample_section(
    stages: Sequence[Mapping[str, Any]], dataset_sha256: str, scored: Mapping[str, str]
) -> dict[str, Any] | None:
    """The ``in_sample`` section of a report that scores ``scored`` (``{case id: fingerprint}`` of its
    answerable cases, from :func:`fitted_cases`) of the dataset ``dataset_sha256`` through fitted
    ``stages`` (each ``{"name": ..., "fitted_on": {...}}``); ``None`` when no stage was fitted."""
    rows: list[dict[str, Any]] = []
    for stage in stages:
        fitted = stage.get("fitted_on")
        if not isinstance(fitted, Mapping):
            continue
        raw = fitted.get("dataset")
        dataset: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
        same_dataset = bool(dataset.get("sha256")) and dataset.get("sha256") == dataset_sha256
        known = fitted.get("cases")
        if isinstance(known, Mapping):
            overlap = sum(1 for cid, fp in scored.items() if known.get(cid) == fp)
            state = "in_sample" if overlap else "held_out"
        elif same_dataset:
            overlap, state = len(scored), "in_sample"
        else:
            overlap, state = 0, "unknown"
        rows.append(
            {
                "stage": _stage_label(stage),
                "state": state,
                "overlap": overlap,
                "fitted_on_dataset": dataset.get("path"),
                "fitted_on_sha256": dataset.get("sha256"),
                "fitted_cases": len(known) if isinstance(known, Mapping) else None,
            }
        )
    if not rows:
        return None
    worst = max(rows, key=lambda r: ("unknown", "held_out", "in_sample").index(r["state"]))
    section: dict[str, Any] = {
        "state": worst["state"],
        "cases": len(scored),
        "overlap": max(r["overlap"] for r in rows),
        "stages": rows,
    }
    section["text"] = _text(section, worst)
    return section


def _text(section: Mapping[str, Any], row: Mapping[str, Any]) -> str:
    cases, overlap, stage = section["cases"], section["overlap"], row["stage"]
    sha = str(row.get("fitted_on_sha256") or "")[:12]
    if section["state"] == "in_sample":
        share = f"all {cases}" if overlap >= cases else f"{overlap} of {cases}"
        return (
            f"IN-SAMPLE: {share} answerable cases scored here were fitted on by {stage} (fitted on "
            f"{row.get('fitted_on_dataset') or 'a dataset'}, sha256 {sha}): these scores flatter it and "
            f"say nothing about new queries; {HOLDOUT_FIX}"
        )
    if section["state"] == "held_out":
        return f"held out: none of the {cases} answerable cases scored here was fitted on by {stage}"
    return (
        f"in-sample or not is unknown: {stage} records no case ids and was fitted on another dataset "
        f"(sha256 {sha}); refit with ragaudit fit-fusion to record them"
    )


def first_in_sample(systems: Iterable[tuple[str, Mapping[str, Any]]]) -> dict[str, Any]:
    """``{"in_sample": section}`` for a report over several systems (``(label, its eval report)``:
    a benchmark, a comparison) when any of them is IN-SAMPLE: the first one's section (``system``: its
    label), ``systems``: every IN-SAMPLE system's label, and a text naming each; ``{}`` otherwise.
    Each system's own section stays in its own entry (a benchmark's ``pipelines[].in_sample``)."""
    found = [
        (label, s) for label, report in systems if (s := section_of(report)) and s.get("state") == "in_sample"
    ]
    if not found:
        return {}
    label, section = found[0]
    if len(found) == 1:
        text = f"IN-SAMPLE: {label}: {_bare(section)}"
    else:  # each named once, the fix they share said once at the end
        text = "IN-SAMPLE: " + "; ".join(
            f"{name}: {_bare(s).removesuffix(f'; {HOLDOUT_FIX}')}" for name, s in found
        )
        text += f"; {HOLDOUT_FIX}"
    return {"in_sample": {**section, "system": label, "systems": [name for name, _ in found], "text": text}}


def _bare(section: Mapping[str, Any]) -> str:
    """A section's text without its ``IN-SAMPLE: `` prefix."""
    return str(section.get("text", "")).removeprefix("IN-SAMPLE: ")


def section_of(report: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """A report's ``in_sample`` section, if it has one."""
    section = report.get("in_sample")
    return section if isinstance(section, Mapping) else None


def is_in_sample(report: Mapping[str, Any]) -> bool:
    """Whether a report scores (some of) the cases a stage of it was fitted on."""
    section = section_of(report)
    return section is not None and section.get("state") == "in_sample"


def in_sample_line(report: Mapping[str, Any]) -> str | None:
    """The line every view prints at its top about a fitted stage (``IN-SAMPLE: ...``), or ``None``."""
    flag = in_sample_flag(report)
    return flag[1] if flag is not None else None


def in_sample_flag(report: Mapping[str, Any]) -> tuple[str, str] | None:
    """``(state, line)`` of a report's fitted stage (``in_sample``, ``held_out`` or ``unknown``), or ``None``."""
    section = section_of(report)
    text = section.get("text") if section is not None else None
    return (str(section.get("state")), str(text)) if section is not None and text else None
