"""The default engine scores a run in memory proportional to its size, never queries × longest ranking.

One query with 150,000 results and 100 short ones: the numbers are those of the pure functions, and
the peak memory of ``evaluate`` stays far below what a dense 101 × 150,000 layout needs (about
500 MB for its grade, relevance and cumulative-hit arrays).
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path
from types import MappingProxyType

import numpy as np
import pytest

import ragaudit
from ragaudit.data.run import CaseRun, RankedItem, Run
from ragaudit.data.schema import Dataset, GoldenCase
from ragaudit.evaluation.fast_trec import evaluate_trec_files
from ragaudit.metrics.bulk import build_rank_matrix, compute, compute_rankings
from ragaudit.metrics.measures import measure_of
from ragaudit.metrics.names import parse_metrics

LONG = 150_000
SHORT = 100
METRICS = "nDCG@10,nDCG,R@100,MAP,MAP@100,RPrec,MRR,MRR@10,P@5,Hit@5"
PEAK_BYTES = 64 * 2**20


def _collection() -> tuple[Dataset, Run]:
    rng = np.random.default_rng(7)
    cases: list[GoldenCase] = []
    runs: dict[str, CaseRun] = {}
    long_ids = [f"L{i}" for i in range(LONG)]
    picked = rng.choice(LONG, size=60, replace=False).tolist()
    long_grades = {f"L{i}": int(rng.integers(1, 4)) for i in picked} | {"L-absent": 2}
    cases.append(GoldenCase("long", "q", None, MappingProxyType(long_grades)))
    runs["long"] = CaseRun([RankedItem(d) for d in long_ids])
    for q in range(SHORT):
        ids = [f"s{q}-{i}" for i in range(int(rng.integers(1, 20)))]
        judged = {d: int(rng.integers(0, 4)) for d in ids[::3]} | {f"s{q}-far": 1}
        cases.append(GoldenCase(f"short{q}", "q", None, MappingProxyType(judged)))
        runs[f"short{q}"] = CaseRun([RankedItem(d) for d in ids + ids[:1]])  # and a repeat
    return Dataset(tuple(cases), "in-memory", "0" * 64, "jsonl"), Run(runs, "long-run")


def _pure(case: GoldenCase, ranking: list[str], name: str) -> float:
    spec = parse_metrics(name)[0]
    rel, grades = case.relevant_set(1), case.grades()
    return measure_of(spec.family).pure(ranking, grades, rel, spec.k, "exponential")


def test_one_long_ranking_scores_like_the_pure_functions_in_bounded_memory() -> None:
    dataset, run = _collection()
    tracemalloc.start()
    try:
        result = ragaudit.evaluate(dataset, run, METRICS)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < PEAK_BYTES, f"peak {peak / 2**20:.0f} MiB"
    by_id = dataset.by_id()
    for case in result.per_case:
        ranking = run.cases[case.id].ranking
        for name, value in case.metrics.items():
            assert value == pytest.approx(_pure(by_id[case.id], ranking, name), abs=1e-12), (case.id, name)
    assert result.per_case[0].metrics["MAP"] > 0  # relevant items deep in the long ranking count


def test_compute_rankings_equals_one_dense_matrix() -> None:
    rng = np.random.default_rng(3)
    rankings = [
        [f"d{int(x)}" for x in rng.integers(0, 40, size=int(n))] for n in rng.integers(0, 70, size=60)
    ]
    grades = [
        {f"d{i}": int(rng.integers(0, 4)) for i in range(0, 60, int(rng.integers(2, 9)))} for _ in rankings
    ]
    rel_sets = [{d for d, g in g_.items() if g >= 2} for g_ in grades]
    for names in (METRICS, "nDCG@3,P@5,R@20,MAP@7,Hit@1,MRR@2"):
        specs = parse_metrics(names)
        dense = compute(build_rank_matrix(rankings, rel_sets, grades), specs)
        ragged = compute_rankings(rankings, rel_sets, grades, specs)
        for spec in specs:
            np.testing.assert_allclose(
                ragged[spec.name], dense[spec.name], rtol=0, atol=1e-12, equal_nan=True
            )


def test_the_fast_engine_also_keeps_a_long_ranking_from_widening_the_others(tmp_path: Path) -> None:
    """Whole-ranking metrics (MAP, RPrec, nDCG) need every judged rank: the long query alone is wide."""
    dataset, run = _collection()
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run.trec"
    qrels_path.write_text(
        "".join(f"{c.id} 0 {d} {g}\n" for c in dataset.cases for d, g in c.relevance.items()),
        encoding="utf-8",
    )
    with run_path.open("w", encoding="utf-8") as out:
        for qid, case in run.cases.items():
            size = len(case.items)
            out.writelines(f"{qid} Q0 {it.chunk_id} {i} {size - i} t\n" for i, it in enumerate(case.items))
    expected = ragaudit.evaluate(dataset, run, METRICS)
    tracemalloc.start()
    try:
        fast = evaluate_trec_files(qrels_path, run_path, METRICS, workers=1)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < PEAK_BYTES, f"peak {peak / 2**20:.0f} MiB"
    for name, mean in expected.metrics.items():
        assert fast.metrics[name] == pytest.approx(mean, abs=1e-12), name
