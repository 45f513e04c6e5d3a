"""TREC qrels and run files, read line by line with file:line errors.

* qrels: ``query_id iteration doc_id grade`` (4 columns) or the BEIR TSV ``query-id corpus-id score``
  (3 columns, with or without a header line);
* run: ``query_id Q0 doc_id rank score tag`` (6 columns). The rank column is ignored: rankings are
  re-ordered by score descending, then doc id descending, as trec_eval does.
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

from ragaudit.data.lines import iter_lines, sha256_of
from ragaudit.data.run import CaseRun, RankedItem, Run, count_duplicates, order_trec
from ragaudit.errors import InputError, Problem, ValidationError

MAX_PROBLEMS = 200
_HEADER_WORDS = {"query-id", "query_id", "qid", "query", "corpus-id", "doc_id", "docid", "score"}


def _raise_if(problems: list[Problem]) -> None:
    errors = [p for p in problems if p.severity == "error"]
    if errors:
        raise ValidationError(errors)


def read_qrels(path: str | Path) -> tuple[dict[str, dict[str, int]], list[Problem]]:
    """Read qrels into ``{query_id: {doc_id: grade}}``, collecting problems instead of stopping."""
    p = str(path)
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    problems: list[Problem] = []
    for number, text in iter_lines(path):
        if len(problems) >= MAX_PROBLEMS:
            problems.append(
                Problem(p, number, f"stopped after {MAX_PROBLEMS} problems", "fix the ones above first")
            )
            break
        if isinstance(text, InputError):
            problems.append(text.problem)
            continue
        cols = text.split()
        if number == 1 and cols and cols[0].lower() in _HEADER_WORDS:
            continue
        if len(cols) == 4:
            qid, _, doc_id, grade_text = cols
        elif len(cols) == 3:
            qid, doc_id, grade_text = cols
        else:
            problems.append(
                Problem(
                    p,
                    number,
                    f"expected 4 columns (query_id 0 doc_id grade) or 3 (BEIR), got {len(cols)}",
                    "separate columns with spaces or tabs",
                )
            )
            continue
        try:
            grade_f = float(grade_text)
        except ValueError:
            grade_f = math.nan
        if not math.isfinite(grade_f) or not grade_f.is_integer():
            problems.append(Problem(p, number, f"grade {grade_text!r} is not an integer", "use 0, 1, 2 or 3"))
            continue
        grade = int(grade_f)
        if grade < 0:
            problems.append(
                Problem(
                    p,
                    number,
                    f"negative grade {grade} for {doc_id!r}",
                    "use 0 for judged non-relevant (negative grades are not supported)",
                )
            )
            continue
        if doc_id in qrels[qid] and qrels[qid][doc_id] != grade:
            problems.append(
                Problem(
                    p,
                    number,
                    f"{qid} {doc_id} judged twice with different grades "
                    f"({qrels[qid][doc_id]} and {grade}); the last one is used",
                    "keep one judgment per pair",
                    "warning",
                )
            )
        qrels[qid][doc_id] = grade
    return dict(qrels), problems


def load_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    qrels, problems = read_qrels(path)
    _raise_if(problems)
    if not qrels:
        raise InputError(
            str(path), None, "no judgments found", "write one 'query_id 0 doc_id grade' per line"
        )
    return qrels


def read_trec_run(path: str | Path, name: str | None = None) -> tuple[Run, list[Problem]]:
    """Read a TREC run file into a :class:`Run` in trec_eval order, collecting problems."""
    p = str(path)
    raw: dict[str, list[RankedItem]] = defaultdict(list)
    problems: list[Problem] = []
    tags: set[str] = set()
    for number, text in iter_lines(path):
        if len(problems) >= MAX_PROBLEMS:
            problems.append(
                Problem(p, number, f"stopped after {MAX_PROBLEMS} problems", "fix the ones above first")
            )
            break
        if isinstance(text, InputError):
            problems.append(text.problem)
            continue
        cols = text.split()
        if len(cols) != 6:
            problems.append(
                Problem(
                    p,
                    number,
                    f"expected 6 columns (query_id Q0 doc_id rank score tag), got {len(cols)}",
                    "write one result per line in TREC run format",
                )
            )
            continue
        qid, _, doc_id, _, score_text, tag = cols
        try:
            score = float(score_text)
        except ValueError:
            problems.append(
                Problem(p, number, f"score {score_text!r} is not a number", "write a decimal score")
            )
            continue
        if not math.isfinite(score):
            problems.append(
                Problem(p, number, f"score {score_text!r} is not finite", "replace NaN/inf by a real score")
            )
            continue
        tags.add(tag)
        raw[qid].append(RankedItem(doc_id, score))
    cases: dict[str, CaseRun] = {}
    notes: list[str] = []
    for qid, items in raw.items():
        ordered = order_trec(items)
        repeats = count_duplicates(ordered)
        if repeats:
            notes.append(f"{qid}: {repeats} duplicate doc id line(s); each id counts once, at its best rank")
        cases[qid] = CaseRun(ordered, duplicates=repeats)
    run_name = name or (sorted(tags)[0] if len(tags) == 1 else Path(p).stem)
    sha = sha256_of(path) if not any(pr.severity == "error" for pr in problems) else None
    return Run(cases, run_name, p, sha, notes), problems


def load_trec_run(path: str | Path, name: str | None = None) -> Run:
    run, problems = read_trec_run(path, name)
    _raise_if(problems)
    return run


def write_trec_run(run: Run, path: str | Path) -> None:
    """Write a run in TREC format (errors and empty rankings leave no lines)."""
    with Path(path).open("w", encoding="utf-8") as out:
        for qid, case in run.cases.items():
            for rank, item in enumerate(case.items, start=1):
                score = item.score if item.score is not None else float(len(case.items) - rank + 1)
                out.write(f"{qid} Q0 {item.chunk_id} {rank} {score:.6f} {run.name}\n")
