"""TREC qrels and run files, read line by line with file:line errors.

* qrels: ``query_id iteration doc_id grade`` (4 columns) or the BEIR TSV ``query-id corpus-id score``
  (3 columns, with or without a header line);
* run: ``query_id Q0 doc_id rank score tag`` (6 columns; trec_eval ignores anything after the tag, and
  so does ragaudit). The rank column is ignored: rankings are re-ordered by score descending, then doc
  id descending, as trec_eval does.

As trec_eval reads them: a qrels line whose first character is ``#`` is a comment (a ``#`` elsewhere,
e.g. inside a document id, is data); a run line whose first non-blank character is ``#`` is a comment.
A negative grade in TREC qrels is trec_eval's "in the pool but unjudged" (``RELVALUE_UNJUDGED``): the
pair is never relevant, gains nothing and is not a judgment, so ragaudit leaves it out of the
judgments (its query is kept) and says so in one note per file (:func:`negative_grades_note`).
A pair judged twice keeps the last line's grade, with a warning.
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

from ragaudit.artifacts.provenance import sha256_of
from ragaudit.data.lines import iter_lines
from ragaudit.data.run import CaseRun, RankedItem, Run, count_duplicates, order_trec
from ragaudit.errors import InputError, Problem, ValidationError

MAX_PROBLEMS = 200
EXAMPLES = 3
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
    negative: list[int] = []
    unjudged: set[tuple[str, str]] = set()
    repeats: list[tuple[int, str, str, int, int]] = []
    for number, text in iter_lines(path):
        if len(problems) >= MAX_PROBLEMS:
            problems.append(
                Problem(p, number, f"stopped after {MAX_PROBLEMS} problems", "fix the ones above first")
            )
            break
        if isinstance(text, InputError):
            problems.append(text.problem)
            continue
        if text.startswith("#"):
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
        judged = qrels[qid]
        if doc_id in judged or (qid, doc_id) in unjudged:
            repeats.append((number, qid, doc_id, judged.get(doc_id, -1), grade))
        if grade < 0:  # the last line decides, as for any repeated pair
            negative.append(number)
            unjudged.add((qid, doc_id))
            judged.pop(doc_id, None)
            continue
        unjudged.discard((qid, doc_id))
        judged[doc_id] = grade
    if negative:
        problems.append(negative_grades_note(p, len(negative), negative[0]))
    if repeats:
        problems.append(repeated_pairs_note(p, repeats))
    return dict(qrels), problems


def negative_grades_note(path: str, count: int, first_line: int | None) -> Problem:
    """The one warning a TREC qrels file with negative grades gets (how they were read)."""
    return Problem(
        path,
        first_line,
        f"{count} judgment(s) with a negative grade read as trec_eval reads them: in the pool but "
        "unjudged (never relevant, no gain, not counted as judged)",
        "use 0 for judged non-relevant if that was meant",
        "warning",
    )


def repeated_pairs_note(path: str, repeats: list[tuple[int, str, str, int, int]]) -> Problem:
    """The one warning for (query, doc) pairs judged more than once: count, first examples, what was kept."""
    shown = "; ".join(
        f"line {line}: {qid} {doc} ({'unjudged' if old < 0 else old} then {'unjudged' if new < 0 else new})"
        for line, qid, doc, old, new in repeats[:EXAMPLES]
    )
    more = " ..." if len(repeats) > EXAMPLES else ""
    return Problem(
        path,
        repeats[0][0],
        f"{len(repeats)} repeated (query, doc) judgment(s); the last line's grade is kept: {shown}{more}",
        "keep one judgment per pair",
        "warning",
    )


def load_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    return load_qrels_noted(path)[0]


def load_qrels_noted(path: str | Path) -> tuple[dict[str, dict[str, int]], list[str]]:
    """Qrels (raising on any error) and the reading notes: negative grades, repeated pairs."""
    qrels, problems = read_qrels(path)
    _raise_if(problems)
    if not qrels:
        raise InputError(
            str(path), None, "no judgments found", "write one 'query_id 0 doc_id grade' per line"
        )
    return qrels, [str(problem) for problem in problems]


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
        if text.lstrip().startswith("#"):
            continue
        cols = text.split()
        if len(cols) < 6:
            problems.append(
                Problem(
                    p,
                    number,
                    f"expected 6 columns (query_id Q0 doc_id rank score tag), got {len(cols)}",
                    "write one result per line in TREC run format",
                )
            )
            continue
        qid, _, doc_id, _, score_text, tag = cols[:6]
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
