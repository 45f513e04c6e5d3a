"""Condensed-list measures (nDCG' and bpref): pure vs bulk, trec_eval (-J, bpref) and ir_measures, edges.

trec_eval's ``bpref`` is checked by the registry-driven agreement tests (``test_agreement_trec_eval``,
``test_agreement_ir_measures``) and against trec_eval's reference outputs (``test_trec_eval_suite``);
nDCG' is trec_eval's nDCG with ``-J`` (judged documents only), which no reference output uses, so it is
checked here through pytrec_eval's ``judged_docs_only_flag`` on trec_eval's own test inputs and on
the seeded random collections (ties, duplicates, empty lists, absent and unanswerable queries).
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ragaudit
import randomruns
from ragaudit import Policy
from ragaudit.evaluation.fast_trec import evaluate_trec_files
from ragaudit.metrics.bulk import build_rank_matrix, compute, compute_rankings
from ragaudit.metrics.measures.bpref import bpref
from ragaudit.metrics.measures.ndcg_prime import condensed, ndcg_prime_at_k
from ragaudit.metrics.names import parse_metric, parse_metrics
from ragaudit.metrics.pure import ndcg_at_k
from randomruns import CUTOFFS, SEEDS

pytrec_eval = pytest.importorskip("pytrec_eval")

IDS = [f"d{i}" for i in range(12)]
ranking_st = st.lists(st.sampled_from(IDS), max_size=15)  # duplicates on purpose
grades_st = st.dictionaries(st.sampled_from(IDS), st.integers(0, 3), max_size=10)
PRIME = {f"nDCG'@{k}": f"ndcg_cut_{k}" for k in CUTOFFS} | {"nDCG'": "ndcg"}
PRIME_MEASURES = {"ndcg", "ndcg_cut." + ",".join(map(str, (2, *CUTOFFS)))}


def trec_eval_j(
    qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]], threshold: int
) -> dict[str, dict[str, float]]:
    """pytrec_eval with trec_eval's ``-J``: unjudged documents removed from each ranking."""
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels, PRIME_MEASURES | {"bpref"}, relevance_level=threshold, judged_docs_only_flag=True
    )
    return dict(evaluator.evaluate(run))


def test_names_and_aliases() -> None:
    assert parse_metric("ndcg'@10").name == "nDCG'@10"
    assert parse_metric("ndcg_prime@5").name == "nDCG'@5"
    assert parse_metric("nDCG'").name == "nDCG'"
    assert parse_metric("Bpref").name == "bpref"
    assert parse_metric("bpref@20").name == "bpref@20"


def test_hand_examples() -> None:
    assert condensed(["X", "A", "A", "Z", "Y"], {"A": 1, "Z": 0}) == ["A", "Z"]
    assert ndcg_prime_at_k(["X", "A"], {"A": 2}, 1) == 1.0
    assert ndcg_at_k(["X", "A"], {"A": 2}, 1) == 0.0  # plain nDCG scores the hole as non-relevant
    assert ndcg_prime_at_k([], {"A": 2}, 3) == 0.0
    # R = 2, N = 3: A has no judged non-relevant above it, B has 2 of min(N, R) = 2
    assert bpref(["A", "X", "Z", "W", "B"], {"A": 1, "B": 2, "Z": 0, "W": 0, "V": 0}, {"A", "B"}) == 0.5
    # the penalty is capped at R: 3 non-relevant above B, still only 2 of 2
    assert bpref(["Z", "W", "V", "B"], {"B": 1, "Z": 0, "W": 0, "V": 0, "A": 1}, {"A", "B"}) == 0.0
    assert bpref(["A"], {"A": 1}, {"A"}) == 1.0  # N = 0: no preference to break
    assert bpref(["Z", "A"], {"A": 1, "Z": 0}, {"A"}, k=1) == 0.0  # bpref@1 reads only the top 1
    with pytest.raises(ValueError, match="undefined for an empty relevant set"):
        bpref(["A"], {"A": 0}, set())


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(ranking_st, grades_st), min_size=1, max_size=8),
    st.integers(1, 20),
    st.sampled_from(["exponential", "linear"]),
)
def test_bulk_equals_pure_and_is_not_cut_at_the_largest_k(
    queries: list[tuple[list[str], dict[str, int]]], k: int, gain: str
) -> None:
    rankings = [q[0] for q in queries]
    grades = [q[1] for q in queries]
    rel = [{d for d, g in gr.items() if g >= 1} for gr in grades]
    specs = parse_metrics(f"nDCG'@{k},nDCG'@1,nDCG',bpref,bpref@{k},P@1")
    whole = compute(build_rank_matrix(rankings, rel, grades), specs, gain)  # type: ignore[arg-type]
    grouped = compute_rankings(rankings, rel, grades, specs, gain)  # type: ignore[arg-type]
    for spec in specs:
        for row, (ranking, gr) in enumerate(queries):
            if spec.family == "nDCG'":
                expected = ndcg_prime_at_k(ranking, gr, spec.k, gain)  # type: ignore[arg-type]
            elif spec.family == "bpref":
                expected = bpref(ranking, gr, rel[row], spec.k) if rel[row] else math.nan
            else:
                continue
            for got in (whole[spec.name][row], grouped[spec.name][row]):
                if math.isnan(expected):
                    assert math.isnan(got)
                else:
                    assert got == pytest.approx(expected, abs=1e-12), (spec.name, ranking, gr)


@pytest.mark.parametrize("threshold", [1, 2])
@pytest.mark.parametrize("seed", SEEDS)
def test_pure_bulk_and_evaluate_equal_trec_eval_judged_only(
    seed: int, threshold: int, tmp_path: Path
) -> None:
    coll = randomruns.make_collection(seed)
    qrels_path = randomruns.write_qrels(coll.qrels, tmp_path / "qrels.txt")
    run_path = randomruns.write_run(coll.run, tmp_path / "run.trec")
    rankings = randomruns.rankings_of(ragaudit.load_run(run_path))
    empty = {qid: {} for qid in coll.qrels}
    expected = trec_eval_j(coll.qrels, empty | randomruns.as_scored_dict(coll.run), threshold)
    names = ",".join([*PRIME, "bpref"])
    names_map = PRIME | {"bpref": "bpref"}
    pure = randomruns.score_pure(coll.qrels, rankings, names, threshold, "linear")
    bulk = randomruns.score_bulk(coll.qrels, rankings, names, threshold, "linear")
    assert len(pure) > 10
    assert randomruns.mismatches(pure, expected, names_map) == []
    assert randomruns.mismatches(bulk, expected, names_map) == []
    result = ragaudit.evaluate(
        qrels_path, run_path, names, Policy(gain="linear", relevance_threshold=threshold)
    )
    per_case = {c.id: c.metrics for c in result.per_case if c.status != "unanswerable"}
    assert sorted(per_case) == sorted(randomruns.answerable(coll.qrels, threshold))
    assert randomruns.mismatches(per_case, expected, names_map) == []
    holes = sum(1 for q, r in rankings.items() if q in coll.qrels for d in r if d not in coll.qrels[q])
    assert holes > 20, "the collection must have unjudged retrieved items for the test to mean anything"


def test_duplicates_are_removed_from_the_condensed_list_like_unjudged_items() -> None:
    """pytrec_eval takes no duplicates; the duplicated ranking scores as its de-duplicated self."""
    qrels = {"q": {"a": 0, "b": 2, "c": 1}}
    doubled = ["a", "x", "a", "b", "b", "y", "c"]
    once = list(dict.fromkeys(doubled))
    expected = trec_eval_j(qrels, randomruns.as_rank_scores({"q": once}), 1)["q"]
    result = ragaudit.evaluate(
        randomruns_dataset(qrels), {"q": doubled}, "nDCG'@2,nDCG',bpref", Policy(gain="linear")
    )
    assert result.metrics["nDCG'@2"] == pytest.approx(expected["ndcg_cut_2"], abs=1e-12)
    assert result.metrics["nDCG'"] == pytest.approx(expected["ndcg"], abs=1e-12)
    assert result.metrics["bpref"] == pytest.approx(expected["bpref"], abs=1e-12)
    assert result.per_case[0].duplicates == 2


def randomruns_dataset(qrels: dict[str, dict[str, int]]) -> ragaudit.Dataset:
    from ragaudit.data.schema import Dataset, GoldenCase

    cases = tuple(GoldenCase(qid, f"query {qid}", None, judged) for qid, judged in qrels.items())
    return Dataset(cases, "in-memory", "0" * 64, "qrels")


def test_ir_measures_judged_only_ndcg_equals_linear_ndcg_prime() -> None:
    ir_measures = pytest.importorskip("ir_measures")
    coll = randomruns.make_collection(7)
    rankings = {q: [d for d, _ in sorted(items, key=lambda x: -x[1])] for q, items in coll.run.items()}
    run = randomruns.as_rank_scores({q: r for q, r in rankings.items() if r and q in coll.qrels})
    measure = ir_measures.parse_measure("nDCG(judged_only=True)@5")
    theirs = {m.query_id: m.value for m in ir_measures.iter_calc([measure], coll.qrels, run)}
    ours = randomruns.score_pure(coll.qrels, rankings, "nDCG'@5", 1, "linear")
    assert len(set(theirs) & set(ours)) > 10
    assert all(abs(ours[q]["nDCG'@5"] - theirs[q]) < 1e-9 for q in set(theirs) & set(ours))


def _read_run(path: Path) -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = defaultdict(dict)
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if parts and not parts[0].startswith("#"):
            run[parts[0]][parts[2]] = float(parts[4])
    return dict(run)


@pytest.mark.parametrize(("qrels_name", "threshold"), [("qrels.test", 1), ("qrels.rel_level", 2)])
@pytest.mark.parametrize("engine", ["evaluate", "fast"])
def test_trec_eval_suite_inputs_judged_only(
    trec_eval_root: Path, qrels_name: str, threshold: int, engine: str
) -> None:
    """trec_eval's own qrels and run (negative grades, ties, unjudged queries) under ``-J``."""
    qrels_path, run_path = trec_eval_root / qrels_name, trec_eval_root / "results.test"
    qrels = {c.id: dict(c.relevance) for c in ragaudit.load_dataset(qrels_path).cases}
    expected = trec_eval_j(qrels, _read_run(run_path), threshold)
    names = [*PRIME, "bpref"]
    policy = Policy(gain="linear", relevance_threshold=threshold)
    if engine == "evaluate":
        result = ragaudit.evaluate(qrels_path, run_path, names, policy)
        ours = {c.id: c.metrics for c in result.per_case if c.status == "ok"}
    else:
        fast = evaluate_trec_files(qrels_path, run_path, names, policy)
        assert fast.mode == "reference"
        columns = {n: fast.per_query_values(n) for n in names}
        ours = {q: {n: columns[n][q] for n in names} for q in fast.query_ids if q in expected}
    assert ours
    assert randomruns.mismatches(ours, expected, PRIME | {"bpref": "bpref"}) == []
