"""Runs as JSONL: one case per line, the list order is the ranking.

``{"id": "q1", "retrieved": ["doc-1#0", {"chunk_id": "doc-2#3", "score": 0.7, "tenant_id": "acme"}],
"latency_ms": 41.5}`` or ``{"id": "q2", "error": "timeout after 10s"}``. ``query_id`` / ``qid`` are
accepted for ``id``, ``results`` for ``retrieved``.

Lines the runner writes may also carry ``attempts`` (when not 1), ``tenant_id`` (the tenant asked for)
and ``leaks`` (``[{chunk_id, rank, claimed_tenant, caller_tenant}]``); they are read back, so a results
file evaluated with ``ragaudit eval --run`` keeps its leaks.
"""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path
from typing import Any

from ragaudit.artifacts.provenance import sha256_of
from ragaudit.data.lines import is_finite_number, iter_lines, parse_json_line
from ragaudit.data.run import CaseRun, LeakRecord, RankedItem, Run, count_duplicates
from ragaudit.errors import InputError, Problem, ValidationError


def _item(raw: Any) -> RankedItem | str:
    if isinstance(raw, str) and raw:
        return RankedItem(raw)
    if not isinstance(raw, dict):
        return "each retrieved item must be an id string or an object with 'chunk_id'"
    chunk_id = raw.get("chunk_id", raw.get("id", raw.get("doc_id")))
    if not isinstance(chunk_id, str) or not chunk_id:
        return "a retrieved object has no 'chunk_id' string"
    score = raw.get("score")
    if score is not None and not is_finite_number(score):
        return f"score of {chunk_id!r} must be a finite number (got {score!r})"
    tenant = raw.get("tenant_id")
    content = raw.get("content")
    return RankedItem(
        chunk_id,
        float(score) if score is not None else None,
        tenant if isinstance(tenant, str) else None,
        content if isinstance(content, str) else None,
        raw.get("source_id") if isinstance(raw.get("source_id"), str) else None,
    )


def _leak(raw: Any) -> LeakRecord | None:
    if not isinstance(raw, dict):
        return None
    chunk_id, rank, claimed, caller = (
        raw.get(k) for k in ("chunk_id", "rank", "claimed_tenant", "caller_tenant")
    )
    if not isinstance(chunk_id, str) or not isinstance(rank, int) or not isinstance(caller, str):
        return None
    return LeakRecord(chunk_id, rank, claimed if isinstance(claimed, str) else None, caller)


def _runner_fields(obj: dict[str, Any], case: CaseRun) -> str | None:
    """Fill ``attempts``, ``tenant_id`` and ``leaks`` from a line; return what is wrong, if anything."""
    attempts = obj.get("attempts", 1)
    if not isinstance(attempts, int) or isinstance(attempts, bool) or attempts < 0:
        return f"'attempts' must be a non-negative integer (got {attempts!r})"
    case.attempts = attempts
    tenant = obj.get("tenant_id")
    case.tenant_id = tenant if isinstance(tenant, str) else None
    raw_leaks = obj.get("leaks", [])
    leaks = [_leak(raw) for raw in raw_leaks] if isinstance(raw_leaks, list) else [None]
    if any(leak is None for leak in leaks):
        return "'leaks' must be a list of {chunk_id, rank, claimed_tenant, caller_tenant} objects"
    case.leaks = [leak for leak in leaks if leak is not None]
    return None


def parse_case_run(obj: Any) -> tuple[str, CaseRun] | str:
    """Parse one JSON case result; return ``(case_id, CaseRun)`` or a message saying what is wrong."""
    parsed = _parse_ranking(obj)
    if isinstance(parsed, str):
        return parsed
    problem = _runner_fields(obj, parsed[1])
    return problem if problem is not None else parsed


def _parse_ranking(obj: Any) -> tuple[str, CaseRun] | str:
    if not isinstance(obj, dict):
        return "expected a JSON object per line"
    case_id = obj.get("id", obj.get("query_id", obj.get("qid")))
    if isinstance(case_id, int) and not isinstance(case_id, bool):
        case_id = str(case_id)
    if not isinstance(case_id, str) or not case_id:
        return "missing 'id' (the case id)"
    latency = obj.get("latency_ms")
    latency_f = float(latency) if is_finite_number(latency) else None
    error = obj.get("error")
    if error is not None:
        return case_id, CaseRun([], str(error), latency_f)
    raw_items = obj.get("retrieved", obj.get("results"))
    if not isinstance(raw_items, list):
        return "missing 'retrieved' list (or an 'error' string)"
    items: list[RankedItem] = []
    for raw in raw_items:
        item = _item(raw)
        if isinstance(item, str):
            return item
        items.append(item)
    return case_id, CaseRun(items, None, latency_f, count_duplicates(items))


def read_jsonl_run(path: str | Path, name: str | None = None) -> tuple[Run, list[Problem]]:
    p = str(path)
    cases: dict[str, CaseRun] = {}
    problems: list[Problem] = []
    for number, text in iter_lines(path):
        if isinstance(text, InputError):
            problems.append(text.problem)
            continue
        try:
            parsed = parse_case_run(parse_json_line(p, number, text))
        except InputError as exc:
            problems.append(exc.problem)
            continue
        if isinstance(parsed, str):
            problems.append(Problem(p, number, parsed, "see docs/datasets.md for the JSONL run format"))
            continue
        case_id, case = parsed
        if case_id in cases:
            problems.append(
                Problem(
                    p,
                    number,
                    f"case {case_id!r} appears twice; the last line wins",
                    "keep one line per case",
                    "warning",
                )
            )
        cases[case_id] = case
    notes = [
        f"{cid}: {c.duplicates} duplicate id(s) counted once" for cid, c in cases.items() if c.duplicates
    ]
    unsorted = [cid for cid, c in cases.items() if _scores_rise(c.items)]
    if unsorted:
        notes.append(
            f"{len(unsorted)} case(s) list a higher score below a lower one ({', '.join(unsorted[:3])}"
            f"{' ...' if len(unsorted) > 3 else ''}): a JSONL run is ranked by its list order, not by score "
            "(docs/datasets.md); sort each list by score if the scores are the ranking"
        )
    return Run(cases, name or Path(p).stem, p, sha256_of(path), notes), problems


def _scores_rise(items: list[RankedItem]) -> bool:
    """Whether a later item of the list has a higher score than an earlier one (items without a score
    are left out of the check)."""
    scores = [it.score for it in items if it.score is not None]
    return any(later > earlier for earlier, later in pairwise(scores))


def load_jsonl_run(path: str | Path, name: str | None = None) -> Run:
    run, problems = read_jsonl_run(path, name)
    errors = [pr for pr in problems if pr.severity == "error"]
    if errors:
        raise ValidationError(errors)
    return run


def case_run_to_json(case_id: str, case: CaseRun) -> str:
    """One line of a JSONL run (the runner's append-only results file uses this too)."""
    obj: dict[str, Any] = {"id": case_id}
    if case.error is not None:
        obj["error"] = case.error
    else:
        obj["retrieved"] = [item.to_json() for item in case.items]
    if case.latency_ms is not None:
        obj["latency_ms"] = round(case.latency_ms, 3)
    if case.attempts != 1:
        obj["attempts"] = case.attempts
    if case.tenant_id is not None:
        obj["tenant_id"] = case.tenant_id
    if case.leaks:
        obj["leaks"] = [leak.to_json() for leak in case.leaks]
    return json.dumps(obj, ensure_ascii=False)
