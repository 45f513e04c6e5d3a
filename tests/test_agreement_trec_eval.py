"""ragaudit's metrics equal trec_eval's (through pytrec_eval) per query, and differ only as documented.

Agreement: seeded random collections (``randomruns``) are written as TREC qrels and run files and
loaded by ragaudit, so the ranking comes from ragaudit's run-file reader (trec_eval's tie order: score
descending, then doc id descending). Each is scored by the pure functions, the bulk engine and
``ragaudit.evaluate`` with ``Policy(gain="linear")``, and every answerable query must equal
pytrec_eval within 1e-9. pytrec_eval is given every judged query (``{}`` for those the run lacks),
which is what ``trec_eval -c`` does.

Differences: each deliberate difference of docs/metrics.md is pinned on a tiny hand example.
"""

from __future__ import annotations

from math import log2
from pathlib import Path

import pytest

import ragaudit
import randomruns
from ragaudit import Policy
from ragaudit.data.schema import Dataset, GoldenCase
from ragaudit.metrics import ndcg_at_k, reciprocal_rank
from ragaudit.metrics.measures import MEASURES
from randomruns import CUTOFFS, SEEDS, Collection, Qrels, Scores

pytrec_eval = pytest.importorskip("pytrec_eval")

TREC_NAMES: dict[str, str] = randomruns.names_in(lambda measure, k: measure.trec_eval.of(k))
"""ragaudit metric name -> trec_eval measure, where the two are defined identically (from the registry)."""

_CUTS = ",".join(map(str, CUTOFFS))
TREC_MEASURES = {
    *(f"{m.trec_eval.cut}.{_CUTS}" for m in MEASURES if m.trec_eval.cut),
    *(m.trec_eval.whole for m in MEASURES if m.trec_eval.whole),
}
METRICS = ",".join(TREC_NAMES)
THRESHOLDS = (1, 2)


def trec_eval(
    qrels: Qrels, run: dict[str, dict[str, float]], threshold: int = 1, measures: set[str] = TREC_MEASURES
) -> Scores:
    """pytrec_eval's per-query scores (only the queries present in ``run``)."""
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=threshold)
    return dict(evaluator.evaluate(run))


def trec_eval_c(coll: Collection, threshold: int) -> Scores:
    """pytrec_eval scoring every judged query, an absent one as an empty ranking (``trec_eval -c``)."""
    empty: dict[str, dict[str, float]] = {qid: {} for qid in coll.qrels}
    run = empty | randomruns.as_scored_dict(coll.run)
    return trec_eval(coll.qrels, run, threshold)


def policy(threshold: int) -> Policy:
    return Policy(gain="linear", relevance_threshold=threshold)


@pytest.fixture(params=SEEDS, ids=[f"seed{s}" for s in SEEDS])
def files(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Collection, Path, Path]:
    coll = randomruns.make_collection(request.param)
    return (
        coll,
        randomruns.write_qrels(coll.qrels, tmp_path / "qrels.txt"),
        randomruns.write_run(coll.run, tmp_path / "run.trec"),
    )


def test_the_registry_covers_every_family_trec_eval_was_checked_against_before() -> None:
    before = {
        **{f"nDCG@{k}": f"ndcg_cut_{k}" for k in CUTOFFS},
        "nDCG": "ndcg",
        **{f"R@{k}": f"recall_{k}" for k in CUTOFFS},
        **{f"P@{k}": f"P_{k}" for k in CUTOFFS},
        **{f"Hit@{k}": f"success_{k}" for k in CUTOFFS},
        **{f"MAP@{k}": f"map_cut_{k}" for k in CUTOFFS},
        "MAP": "map",
        "MRR": "recip_rank",
        "RPrec": "Rprec",
    }
    assert before.items() <= TREC_NAMES.items()


def test_random_collections_exercise_every_edge(files: tuple[Collection, Path, Path]) -> None:
    coll, _, _ = files
    assert coll.ties() > 5
    assert any(all(g == 0 for g in judged.values()) for judged in coll.qrels.values())
    assert any(qid not in coll.run for qid in coll.qrels), "a judged query absent from the run"
    assert any(coll.run.get(qid) == [] for qid in coll.qrels), "a judged query with an empty result list"
    assert any(qid not in coll.qrels for qid in coll.run), "a run query without judgments"
    assert len({len(items) for items in coll.run.values()}) > 5, "varied list lengths"


@pytest.mark.parametrize("threshold", THRESHOLDS)
def test_pure_functions_equal_trec_eval(files: tuple[Collection, Path, Path], threshold: int) -> None:
    coll, _, run_path = files
    rankings = randomruns.rankings_of(ragaudit.load_run(run_path))
    ours = randomruns.score_pure(coll.qrels, rankings, METRICS, threshold, "linear")
    assert ours, "no answerable query"
    assert randomruns.mismatches(ours, trec_eval_c(coll, threshold), TREC_NAMES) == []


@pytest.mark.parametrize("threshold", THRESHOLDS)
def test_bulk_engine_equals_trec_eval(files: tuple[Collection, Path, Path], threshold: int) -> None:
    coll, _, run_path = files
    rankings = randomruns.rankings_of(ragaudit.load_run(run_path))
    ours = randomruns.score_bulk(coll.qrels, rankings, METRICS, threshold, "linear")
    assert randomruns.mismatches(ours, trec_eval_c(coll, threshold), TREC_NAMES) == []


@pytest.mark.parametrize("threshold", THRESHOLDS)
def test_evaluate_equals_trec_eval_c_on_answerable_queries(
    files: tuple[Collection, Path, Path], threshold: int
) -> None:
    coll, qrels_path, run_path = files
    result = ragaudit.evaluate(qrels_path, run_path, METRICS, policy(threshold))
    expected = trec_eval_c(coll, threshold)
    answerable = randomruns.answerable(coll.qrels, threshold)
    per_case = {c.id: c.metrics for c in result.per_case if c.status != "unanswerable"}
    assert sorted(per_case) == sorted(answerable)
    assert randomruns.mismatches(per_case, expected, TREC_NAMES) == []
    for ours, theirs in TREC_NAMES.items():
        mean = sum(expected[q][theirs] for q in answerable) / len(answerable)
        assert result.metrics[ours] == pytest.approx(mean, abs=1e-12), ours
    assert sorted(result.missing) == sorted(q for q in answerable if not coll.run.get(q))
    assert result.counts.not_in_dataset == sum(1 for q in coll.run if q not in coll.qrels)


def test_evaluate_of_in_memory_rankings_with_empty_lists_equals_trec_eval(
    files: tuple[Collection, Path, Path],
) -> None:
    coll, qrels_path, run_path = files
    rankings = randomruns.rankings_of(ragaudit.load_run(run_path))
    rankings |= {qid: [] for qid, items in coll.run.items() if not items}
    result = ragaudit.evaluate(qrels_path, rankings, METRICS, policy(1))
    per_case = {c.id: c.metrics for c in result.per_case if c.status != "unanswerable"}
    assert randomruns.mismatches(per_case, trec_eval_c(coll, 1), TREC_NAMES) == []
    empty = {c.id for c in result.per_case if c.status == "ok" and not c.retrieved}
    assert empty == {q for q in randomruns.answerable(coll.qrels, 1) if coll.run.get(q) == []}


def test_score_ties_follow_trec_eval_order(tmp_path: Path) -> None:
    """Equal scores: doc id descending as strings, so ``d9`` ranks above ``d10``; line order is ignored."""
    qrels = {"q": {"d10": 1}}
    coll = Collection(qrels, {"q": [("d10", 0.5), ("d9", 0.5), ("d2", 0.7)]})
    run_path = randomruns.write_run(coll.run, tmp_path / "run.trec")
    assert ragaudit.load_run(run_path).cases["q"].ranking == ["d2", "d9", "d10"]
    result = ragaudit.evaluate(randomruns.write_qrels(qrels, tmp_path / "qrels"), run_path, "MRR")
    assert result.metrics["MRR"] == pytest.approx(1 / 3)
    assert trec_eval(qrels, randomruns.as_scored_dict(coll.run))["q"]["recip_rank"] == pytest.approx(1 / 3)


# --- documented differences (docs/metrics.md), each on a hand example --------------------------------


def _dataset(qrels: Qrels) -> Dataset:
    cases = tuple(GoldenCase(qid, f"query {qid}", None, judged) for qid, judged in qrels.items())
    return Dataset(cases, "in-memory", "0" * 64, "qrels")


def test_default_gain_is_exponential_trec_eval_is_linear() -> None:
    qrels = {"q": {"a": 3, "b": 1}}
    ranking = ["b", "a"]
    trec = trec_eval(qrels, randomruns.as_rank_scores({"q": ranking}), 1, {"ndcg_cut.2"})["q"]["ndcg_cut_2"]
    linear = (1 + 3 / log2(3)) / (3 + 1 / log2(3))
    exponential = (1 + 7 / log2(3)) / (7 + 1 / log2(3))
    assert trec == pytest.approx(linear)
    assert ndcg_at_k(ranking, qrels["q"], 2, "linear") == pytest.approx(linear)
    assert ragaudit.evaluate(_dataset(qrels), {"q": ranking}, "nDCG@2").metrics["nDCG@2"] == pytest.approx(
        exponential
    )
    assert exponential < linear - 0.03


def test_missing_queries_score_zero_like_trec_eval_c() -> None:
    """pytrec_eval only scores the run's queries (trec_eval without -c); ragaudit keeps the rest as 0."""
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": ["a"]}
    result = ragaudit.evaluate(_dataset(qrels), run, "MRR")
    assert result.metrics["MRR"] == pytest.approx(0.5)
    assert result.missing == ["q2"]
    assert set(trec_eval(qrels, randomruns.as_rank_scores(run))) == {"q1"}  # mean would be 1.0
    with_c = trec_eval(qrels, randomruns.as_rank_scores(run) | {"q2": {}})
    assert (with_c["q1"]["recip_rank"] + with_c["q2"]["recip_rank"]) / 2 == pytest.approx(0.5)


def test_unanswerable_queries_are_left_out_but_trec_eval_scores_them_zero() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 0}}
    run = {"q1": ["a"], "q2": ["b"]}
    result = ragaudit.evaluate(_dataset(qrels), run, "MRR,nDCG@10,R@5")
    assert result.metrics == {"MRR": 1.0, "nDCG@10": 1.0, "R@5": 1.0}
    assert result.counts.unanswerable == 1
    assert next(c for c in result.per_case if c.id == "q2").metrics == {}
    trec = trec_eval(qrels, randomruns.as_rank_scores(run))
    assert trec["q2"] == dict.fromkeys(trec["q2"], 0.0)  # trec_eval's mean would be 0.5


def test_unanswerable_depends_on_the_relevance_threshold_like_trec_eval_relevance_level() -> None:
    qrels = {"q1": {"a": 2}, "q2": {"b": 1}}
    run = {"q1": ["a"], "q2": ["b"]}
    result = ragaudit.evaluate(_dataset(qrels), run, "MRR", Policy(relevance_threshold=2))
    assert result.counts.unanswerable == 1
    assert trec_eval(qrels, randomruns.as_rank_scores(run), threshold=2)["q2"]["recip_rank"] == 0.0


def test_duplicate_run_lines_count_once_at_the_highest_score(tmp_path: Path) -> None:
    """trec_eval refuses duplicate doc ids; a dict-building loader keeps the last line; ragaudit counts the
    first occurrence in ranking order (the highest score), keeps the later copy's slot, and reports it."""
    lines = [("a", 0.9), ("b", 0.8), ("a", 0.1)]
    run_path = randomruns.write_run({"q": lines}, tmp_path / "run.trec")
    qrels = {"q": {"a": 1}}
    run = ragaudit.load_run(run_path)
    assert run.cases["q"].ranking == ["a", "b", "a"]
    assert run.cases["q"].duplicates == 1
    assert run.problems
    result = ragaudit.evaluate(randomruns.write_qrels(qrels, tmp_path / "qrels"), run_path, "MRR")
    assert result.metrics["MRR"] == 1.0
    last_line_wins = {"q": dict(lines)}
    assert trec_eval(qrels, last_line_wins)["q"]["recip_rank"] == 0.5


def test_duplicates_in_a_ranking_keep_their_slot() -> None:
    assert reciprocal_rank(["x", "x", "b"], {"b"}) == pytest.approx(1 / 3)
    qrels = {"q": {"b": 1}}
    result = ragaudit.evaluate(_dataset(qrels), {"q": ["x", "x", "b"]}, "MRR,P@2")
    assert result.metrics == {"MRR": pytest.approx(1 / 3), "P@2": 0.0}


def test_a_run_file_and_the_same_in_memory_ranking_score_alike(tmp_path: Path) -> None:
    run_path = randomruns.write_run({"q": [("a", 3.0), ("a", 2.0), ("b", 1.0)]}, tmp_path / "run.trec")
    qrels = {"q": {"b": 1}}
    from_file = ragaudit.evaluate(_dataset(qrels), run_path, "MRR")
    in_memory = ragaudit.evaluate(_dataset(qrels), {"q": ["a", "a", "b"]}, "MRR")
    assert from_file.metrics == in_memory.metrics


def test_duplicates_in_an_in_memory_ranking_are_reported() -> None:
    result = ragaudit.evaluate(_dataset({"q": {"b": 1}}), {"q": ["x", "x", "b"]}, "MRR")
    assert result.per_case[0].duplicates == 1


def test_mrr_at_k_cuts_the_list_recip_rank_does_not() -> None:
    qrels = {"q": {"e": 1}}
    ranking = ["a", "b", "c", "d", "e"]
    trec = trec_eval(qrels, randomruns.as_rank_scores({"q": ranking}))["q"]["recip_rank"]
    assert trec == pytest.approx(0.2)
    assert reciprocal_rank(ranking, {"e"}) == pytest.approx(0.2)
    assert reciprocal_rank(ranking, {"e"}, 3) == 0.0
    assert ragaudit.evaluate(_dataset(qrels), {"q": ranking}, "MRR@3,MRR").metrics == {
        "MRR@3": 0.0,
        "MRR": pytest.approx(0.2),
    }


def test_average_precision_at_k_divides_by_all_relevant_items_like_map_cut() -> None:
    qrels = {"q": {"a": 1, "b": 1, "c": 1}}
    ranking = ["a", "b", "x"]
    trec = trec_eval(qrels, randomruns.as_rank_scores({"q": ranking}), 1, {"map_cut.2"})["q"]["map_cut_2"]
    result = ragaudit.evaluate(_dataset(qrels), {"q": ranking}, "MAP@2")
    assert result.metrics["MAP@2"] == pytest.approx(trec) == pytest.approx(2 / 3)  # not 2/min(2, 3) = 1


def test_precision_divides_by_k_even_for_short_lists() -> None:
    qrels = {"q": {"a": 1}}
    trec = trec_eval(qrels, randomruns.as_rank_scores({"q": ["a"]}))["q"]["P_5"]
    result = ragaudit.evaluate(_dataset(qrels), {"q": ["a"]}, "P@5")
    assert result.metrics["P@5"] == pytest.approx(trec) == pytest.approx(0.2)
