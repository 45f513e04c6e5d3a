"""``ragaudit validate`` on a run file: tell a run from a dataset, and check the run as a run.

A TREC run line has six fields (``qid Q0 docno rank score tag``; a qrels line has four), and a JSONL
run line holds a ``retrieved`` (or ``results``) list or an ``error``, where a golden case holds a
``query``. A file read as the wrong kind gives nonsense problems ("grade '1.5' is not an integer" for
a run's score column), so :func:`detect_run_file` looks first and :func:`validate_run` reads the file
with the run readers ``ragaudit eval --run`` uses, plus, when given, its ids against a corpus and its
case ids against a dataset.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from ragaudit.data.corpus_ids import read_corpus_index
from ragaudit.data.loading import load_dataset
from ragaudit.data.run import Run
from ragaudit.data.run_jsonl import read_jsonl_run
from ragaudit.data.trec import read_trec_run
from ragaudit.errors import Problem

RunKind = Literal["trec", "jsonl"]
TREC_RUN_FIELDS = 6
SHOWN = 5


def _first_line(path: Path) -> str:
    """The first line that is neither blank nor a ``#`` comment."""
    with path.open("rb") as handle:
        for raw in handle:
            text = raw.decode("utf-8", errors="replace").lstrip("\ufeff").strip()
            if text and not text.startswith("#"):
                return text
    return ""


def detect_run_file(path: str | Path) -> RunKind | None:
    """``trec`` or ``jsonl`` when ``path`` is a run file, ``None`` when it looks like a dataset (a golden
    JSONL or qrels file, a folder)."""
    p = Path(path)
    if not p.is_file():
        return None
    first = _first_line(p)
    if first.startswith("{"):
        try:
            obj = json.loads(first)
        except ValueError:
            return None
        ranked = any(key in obj for key in ("retrieved", "results", "error"))
        return "jsonl" if isinstance(obj, dict) and ranked and "query" not in obj else None
    return "trec" if len(first.split()) == TREC_RUN_FIELDS else None


def _shown(ids: list[str]) -> str:
    return ", ".join(repr(i) for i in ids[:SHOWN]) + (
        f" and {len(ids) - SHOWN} more" if len(ids) > SHOWN else ""
    )


def validate_run(
    path: str | Path, kind: RunKind, corpus: str | Path | None = None, dataset: str | Path | None = None
) -> tuple[list[Problem], str]:
    """Every problem of the run file (errors and warnings) and a one-line summary of what it holds."""
    run: Run
    run, problems = read_trec_run(path) if kind == "trec" else read_jsonl_run(path)
    results = sum(len(case.items) for case in run.cases.values())
    failed = sum(1 for case in run.cases.values() if case.error is not None)
    summary = f"{kind} run: {len(run.cases)} case(s), {results} result(s)" + (
        f", {failed} case(s) recorded as failed" if failed else ""
    )
    where = str(path)
    if corpus is not None:
        index, corpus_problems = read_corpus_index(corpus)
        problems += corpus_problems
        unknown = sorted(
            {i.chunk_id for c in run.cases.values() for i in c.items if not index.known(i.chunk_id)}
        )
        if unknown:
            problems.append(
                Problem(
                    where,
                    None,
                    f"{len(unknown)} result id(s) name nothing in the corpus {corpus}: {_shown(unknown)}",
                    "check the run was made over this corpus (a document D also names its chunks D#n)",
                    "warning",
                )
            )
    if dataset is not None:
        cases = {c.id for c in load_dataset(dataset).cases}
        shared = [cid for cid in run.cases if cid in cases]
        if run.cases and not shared:
            problems.append(
                Problem(
                    where,
                    None,
                    f"no case id in common with the dataset {dataset} (run: {_shown(list(run.cases))})",
                    "was the run made for another dataset or split?",
                )
            )
        else:
            missing = sorted(cases - set(run.cases))
            if missing:
                problems.append(
                    Problem(
                        where,
                        None,
                        f"{len(missing)} case(s) of the dataset have no result (scored 0): {_shown(missing)}",
                        "run them, or expect them listed as missing",
                        "warning",
                    )
                )
            extra = [cid for cid in run.cases if cid not in cases]
            if extra:
                problems.append(
                    Problem(
                        where,
                        None,
                        f"{len(extra)} run case(s) are not in the dataset {dataset} (eval ignores them): "
                        f"{_shown(extra)}",
                        "check the case ids (a typo, or a case removed from the dataset)",
                        "warning",
                    )
                )
        summary += f"; {len(shared)} of {len(cases)} dataset case(s) answered"
    return problems, summary
