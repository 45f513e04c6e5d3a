"""ragaudit against trec_eval's own test suite: its input files, its reference outputs.

Each reference output (``out.test*``) is what trec_eval printed for some flags on some qrels and run
(the suite's README lists them). Both engines (``ragaudit.evaluate`` and the ``--fast`` engine) score
the same files with the matching policy (``--gain linear``, ``-l`` as the relevance threshold, ``-M``
as ``max_depth``) and must print trec_eval's numbers, per query and averaged, for every measure
ragaudit has: P_k, recall_k, ndcg, ndcg_cut_k, map, map_cut_k, recip_rank, Rprec, success_k, bpref.

Values are printed with 4 decimals, so agreement is to 5e-5. Queries with no relevant item are the
one documented difference (ragaudit leaves them out of its averages; trec_eval scores them), so the
averages are compared as trec_eval forms them: the sum over the queries it averages, divided by its
``num_q``.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest

import ragaudit
from ragaudit import Policy
from ragaudit.cli.main import main
from ragaudit.evaluation.fast_trec import evaluate_trec_files

TOLERANCE = 5.1e-5
_PATTERNS = (
    (re.compile(r"P_(\d+)"), "P@{}"),
    (re.compile(r"recall_(\d+)"), "R@{}"),
    (re.compile(r"ndcg_cut_(\d+)"), "nDCG@{}"),
    (re.compile(r"map_cut_(\d+)"), "MAP@{}"),
    (re.compile(r"success_(\d+)"), "Hit@{}"),
)
_PLAIN = {"ndcg": "nDCG", "map": "MAP", "recip_rank": "MRR", "Rprec": "RPrec", "bpref": "bpref"}


def ragaudit_name(measure: str) -> str | None:
    """The ragaudit metric defined as trec_eval's ``measure`` (``None``: ragaudit has no such metric)."""
    if measure in _PLAIN:
        return _PLAIN[measure]
    for pattern, name in _PATTERNS:
        if m := pattern.fullmatch(measure):
            return name.format(m.group(1))
    return None


Reference = dict[str, dict[str, float]]


def read_reference(path: Path) -> tuple[Reference, int]:
    """``{query or 'all': {ragaudit metric: value}}`` of a trec_eval output, and its ``num_q`` (0 if not printed)."""
    out: Reference = defaultdict(dict)
    num_q = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        measure, qid, value = line.split()
        if measure == "num_q":
            num_q = int(value)
        name = ragaudit_name(measure)
        if name is not None:
            out[qid][name] = float(value)
    return dict(out), num_q


@dataclass(frozen=True)
class Case:
    output: str
    qrels: str
    run: str
    threshold: int = 1
    """trec_eval's ``-l``."""
    max_depth: int | None = None
    """trec_eval's ``-M``."""
    all_judged: bool = False
    """trec_eval's ``-c``: averages over every judged query (missing ones score 0)."""


CASES = [
    Case("out.test", "qrels.test", "results.test"),
    Case("out.test", "qrels.test.with-comments", "results.test"),
    Case("out.test.a", "qrels.test", "results.test"),
    Case("out.test.aq", "qrels.test", "results.test"),
    Case("out.test.aqc", "qrels.test", "results.trunc", all_judged=True),
    Case("out.test.aqcM", "qrels.test", "results.trunc", max_depth=100, all_judged=True),
    Case("out.test.aql", "qrels.rel_level", "results.test", threshold=2),
    Case("out.test.meas_params", "qrels.test", "results.test"),
    Case("out.comment.test", "qrels.comment.test", "results.comment.test"),
]


def _per_query(root: Path, case: Case, metrics: list[str], engine: str) -> dict[str, dict[str, float]]:
    policy = Policy(gain="linear", relevance_threshold=case.threshold, max_depth=case.max_depth)
    qrels, run = root / case.qrels, root / case.run
    if engine == "evaluate":
        result = ragaudit.evaluate(qrels, run, metrics, policy)
        return {c.id: c.metrics for c in result.per_case if c.status != "unanswerable"}
    fast = evaluate_trec_files(qrels, run, metrics, policy)
    columns = {name: fast.per_query_values(name) for name in metrics}
    return {qid: {name: columns[name][qid] for name in metrics} for qid in fast.query_ids}


@pytest.mark.parametrize("engine", ["evaluate", "fast"])
@pytest.mark.parametrize("case", CASES, ids=[f"{c.output}-{c.qrels}" for c in CASES])
def test_ragaudit_prints_trec_eval_numbers(trec_eval_root: Path, case: Case, engine: str) -> None:
    reference, num_q = read_reference(trec_eval_root / case.output)
    metrics = sorted(reference["all"])
    assert len(metrics) >= 5, f"{case.output}: too few shared measures to compare"
    ours = _per_query(trec_eval_root, case, metrics, engine)
    run_queries = {line.split()[0] for line in (trec_eval_root / case.run).read_text().splitlines() if line}
    averaged = set(ours) if case.all_judged else set(ours) & run_queries
    assert averaged, "no answerable query to compare"
    mismatches = []
    compared = 0
    for qid, values in ours.items():
        for name, value in values.items():
            if qid in reference:
                compared += 1
                if abs(value - reference[qid][name]) > TOLERANCE:
                    mismatches.append((qid, name, value, reference[qid][name]))
    for name in metrics:
        mean = sum(ours[q][name] for q in averaged) / (num_q or len(averaged))
        compared += 1
        if abs(mean - reference["all"][name]) > TOLERANCE:
            mismatches.append(("all", name, mean, reference["all"][name]))
    assert mismatches == []
    assert compared >= len(metrics)


def test_comment_lines_and_hashes_in_ids_read_as_trec_eval_reads_them(trec_eval_root: Path) -> None:
    plain = ragaudit.load_dataset(trec_eval_root / "qrels.test")
    commented = ragaudit.load_dataset(trec_eval_root / "qrels.test.with-comments")
    assert len(commented.cases) == len(plain.cases) == 3
    judged = {c.id: dict(c.relevance) for c in commented.cases}
    assert "CR#93E-1860" in judged["301"] and "#" not in judged
    assert sum(map(len, judged.values())) == sum(len(c.relevance) for c in plain.cases)


def test_negative_grades_are_unjudged_never_relevant_and_noted_once(trec_eval_root: Path) -> None:
    qrels = trec_eval_root / "qrels.rel_level"
    negatives = [line.split() for line in qrels.read_text().splitlines() if line.split()[3].startswith("-")]
    assert len(negatives) > 100
    dataset = ragaudit.load_dataset(qrels)
    judged = {c.id: c.relevance for c in dataset.cases}
    assert all(doc not in judged[qid] for qid, _, doc, _ in negatives)
    assert len(dataset.notes) == 1
    assert f"{len(negatives)} judgment(s) with a negative grade" in dataset.notes[0]
    assert "in the pool but unjudged" in dataset.notes[0]
    run = trec_eval_root / "results.test"
    result = ragaudit.evaluate(dataset, run, "P@10")
    assert result.notes[0] == dataset.notes[0]
    assert evaluate_trec_files(qrels, run, "P@10").notes[0] == dataset.notes[0]


@pytest.mark.parametrize("fast", ["off", "on"])
def test_eval_max_depth_is_trec_eval_dash_m(
    trec_eval_root: Path, tmp_path: Path, fast: str, capsys: pytest.CaptureFixture[str]
) -> None:
    reference, _ = read_reference(trec_eval_root / "out.test.aqcM")
    argv = [
        "eval",
        "--dataset",
        str(trec_eval_root / "qrels.test"),
        "--run",
        str(trec_eval_root / "results.trunc"),
    ]
    argv += [
        "--metrics",
        "MAP",
        "--gain",
        "linear",
        "--fast",
        fast,
        "--no-history",
        "--out",
        str(tmp_path / "e.json"),
    ]
    assert main([*argv, "--max-depth", "0"]) == 2
    assert "--max-depth" in capsys.readouterr().err
    # the run has no result for query 302 (trec_eval -c scores it 0): a failed case, so exit 1 by default
    assert main([*argv, "--max-depth", "100"]) == 1
    assert "302" in capsys.readouterr().err
    assert main([*argv, "--max-depth", "100", "--max-error-rate", "1"]) == 0
    out = capsys.readouterr().out
    assert f"{reference['all']['MAP']:.4f}" in out  # every query is answerable here
    assert "top 100 per case (--max-depth)" in out
    assert json.loads((tmp_path / "e.json").read_text())["policy"]["max_depth"] == 100


def test_a_query_with_only_negative_grades_is_an_unanswerable_query_in_both_engines(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels"
    qrels.write_text("a 0 d1 1\nb 0 d2 -1\nb 0 d3 -2\nc 0 d4 2\nz 0 d5 -1\n", encoding="utf-8")
    run = tmp_path / "run.trec"
    run.write_text(
        "a Q0 d1 1 1 t\nb Q0 d2 1 1 t\nc Q0 d2 1 2 t\nc Q0 d4 2 1 t\nz Q0 d5 1 1 t\n", encoding="utf-8"
    )
    slow = ragaudit.evaluate(qrels, run, "MRR,RPrec")
    fast = evaluate_trec_files(qrels, run, "MRR,RPrec")
    assert [c.status for c in slow.per_case] == ["ok", "unanswerable", "ok", "unanswerable"]
    assert fast.cases == ("a", "b", "c", "z") and fast.answerable.tolist() == [True, False, True, False]
    assert slow.metrics == fast.metrics == {"MRR": 0.75, "RPrec": 0.5}
    assert "3 judgment(s) with a negative grade" in fast.notes[0]
    b = next(c for c in slow.per_case if c.id == "b")
    assert b.retrieved[0].grade is None  # unjudged, not "judged non-relevant"


def test_run_comment_lines_are_skipped_by_both_engines(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels"
    qrels.write_text("q 0 d#1 1\n", encoding="utf-8")
    run = tmp_path / "run.trec"
    for text in (
        "# Q0 d#1 1 9.0 t\nq Q0 x 1 2.0 t\nq Q0 d#1 2 1.0 t\n",  # a comment shaped like a run line
        "  # indented comment\nq Q0 x 1 2.0 t\nq Q0 d#1 2 1.0 t extra columns\n",
    ):
        run.write_text(text, encoding="utf-8")
        slow = ragaudit.evaluate(qrels, run, "MRR")
        fast = evaluate_trec_files(qrels, run, "MRR")
        assert slow.metrics == fast.metrics == {"MRR": 0.5}
        assert slow.counts.not_in_dataset == fast.counts.not_in_qrels == 0
