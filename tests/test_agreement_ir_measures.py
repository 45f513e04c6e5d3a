"""ragaudit's metrics equal ir_measures' per query wherever a measure names its ir_measures equal.

The registry says which families ir_measures defines identically (``Measure.ir_measures``); each is
checked on the seeded random collections of ``randomruns``, with ragaudit's ranking of each query
(trec_eval's tie order) given as strictly decreasing scores, so the comparison is of the metric, not
of a tie rule. ir_measures scores only the queries of the run that have judgments and a result.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import ragaudit
import randomruns
from randomruns import SEEDS

ir_measures = pytest.importorskip("ir_measures")

NAMES = randomruns.names_in(lambda measure, k: measure.ir_measures(k))


def ir_measures_scores(qrels: randomruns.Qrels, rankings: dict[str, list[str]]) -> randomruns.Scores:
    run = randomruns.as_rank_scores({q: r for q, r in rankings.items() if r and q in qrels})
    measures = [ir_measures.parse_measure(name) for name in NAMES.values()]
    out: randomruns.Scores = {}
    for metric in ir_measures.iter_calc(measures, qrels, run):
        out.setdefault(metric.query_id, {})[str(metric.measure)] = float(metric.value)
    return out


def test_the_registry_names_judged_for_ir_measures() -> None:
    assert NAMES["Judged@5"] == "Judged@5"


@pytest.mark.parametrize("seed", SEEDS)
def test_pure_bulk_and_evaluate_equal_ir_measures(seed: int, tmp_path: Path) -> None:
    coll = randomruns.make_collection(seed)
    qrels_path = randomruns.write_qrels(coll.qrels, tmp_path / "qrels.txt")
    run_path = randomruns.write_run(coll.run, tmp_path / "run.trec")
    rankings = randomruns.rankings_of(ragaudit.load_run(run_path))
    expected = ir_measures_scores(coll.qrels, rankings)
    assert len(expected) > 15
    metrics = ",".join(NAMES)
    answerable = set(randomruns.answerable(coll.qrels, 1))
    pure = randomruns.score_pure(coll.qrels, rankings, metrics, 1, "exponential")
    bulk = randomruns.score_bulk(coll.qrels, rankings, metrics, 1, "exponential")
    scored = {q: v for q, v in pure.items() if q in expected}
    assert len(scored) > 10
    assert randomruns.mismatches(scored, expected, NAMES) == []
    assert randomruns.mismatches({q: bulk[q] for q in scored}, expected, NAMES) == []
    result = ragaudit.evaluate(qrels_path, run_path, metrics)
    per_case = {c.id: c.metrics for c in result.per_case if c.id in expected and c.id in answerable}
    assert randomruns.mismatches(per_case, expected, NAMES) == []


def test_documented_difference_negative_grades_count_as_judged_in_ir_measures(tmp_path: Path) -> None:
    """trec_eval reads a negative grade as in-pool-unjudged, and so does ragaudit; ir_measures counts the line."""
    qrels_path = tmp_path / "qrels.txt"
    qrels_path.write_text("q 0 a 1\nq 0 c -1\n", encoding="utf-8")
    run = {"q": {"a": 2.0, "c": 1.0}}
    theirs = next(
        iter(ir_measures.iter_calc([ir_measures.parse_measure("Judged@2")], {"q": {"a": 1, "c": -1}}, run))
    )
    assert theirs.value == 1.0
    ours = ragaudit.evaluate(qrels_path, {"q": ["a", "c"]}, "Judged@2")
    assert ours.metrics["Judged@2"] == pytest.approx(0.5)
