"""ragaudit's metrics equal ranx's per query, and differ only as documented.

ranx breaks score ties differently from trec_eval (see ``test_ranx_breaks_ties_by_insertion_order``), so
it is given ragaudit's own ranking of each seeded random run (loaded from a TREC file, trec_eval's tie
order) as strictly decreasing scores: the comparison is of the metrics, not of the tie rule. Every
answerable query must agree within 1e-9 through the pure functions, the bulk engine and
``ragaudit.evaluate``, with linear gain (ranx ``ndcg``) and exponential gain (ranx ``ndcg_burges``),
at relevance thresholds 1 and 2 (ranx's ``-l2`` suffix).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from math import log2
from pathlib import Path
from typing import Any

import pytest

import ragaudit
import randomruns
from ragaudit import Policy
from ragaudit.data.schema import Dataset, GoldenCase
from ragaudit.metrics.pure import Gain
from randomruns import CUTOFFS, SEEDS, Qrels, Scores

if importlib.util.find_spec("ranx") is None or importlib.util.find_spec("numba") is None:
    pytest.skip("ranx (and numba) not installed: the dev extra has them", allow_module_level=True)
_PLAIN_PYTHON = "ranx" not in sys.modules


@contextmanager
def ranx_kernels() -> Iterator[None]:
    """Run ranx's numba kernels as plain Python, the same source without compiling it.

    Compiling them costs ~35 s on 2 cores whenever numba's cache is cold (every fresh venv, so every
    CI machine), and loading the cache still ~6 s; on these tiny inputs plain Python takes ~1 s.
    numba reads ``config.DISABLE_JIT`` when a kernel is decorated (ranx's import) and when a typed
    container is made (inside ranx's calls), so the flag is set around both and nowhere else. If ranx
    was imported compiled before this module, it stays compiled.
    """
    import numba

    saved = numba.config.DISABLE_JIT
    numba.config.DISABLE_JIT = _PLAIN_PYTHON
    try:
        yield
    finally:
        numba.config.DISABLE_JIT = saved


class _RanxOnFirstUse:
    """ranx, imported at its first use inside a test (so under :func:`ranx_kernels`, set by the autouse
    fixture below) instead of at collection: importing numba, ranx and the plotting libraries ranx pulls
    in costs seconds, which every pytest-xdist worker paid while collecting, whatever it ran."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # pytest looks for private names on every module global while collecting
            raise AttributeError(name)
        import ranx as module

        return getattr(module, name)


ranx = _RanxOnFirstUse()

pytestmark = pytest.mark.filterwarnings("ignore:unsafe cast:Warning")  # numba, inside compiled ranx nDCG


@pytest.fixture(autouse=True)
def _ranx_as_plain_python() -> Iterator[None]:
    with ranx_kernels():
        yield


def ranx_names(threshold: int, gain: Gain) -> dict[str, str]:
    """ragaudit metric name -> ranx metric, where the two are defined identically.

    ranx's ``-lN`` suffix sets the relevance level. nDCG keeps ranx's default level 1 at every
    threshold: ragaudit's nDCG (like trec_eval's) uses every grade > 0, whatever the threshold.
    """
    return randomruns.names_in(lambda measure, k: measure.ranx(k, threshold, gain))


def test_the_registry_covers_every_family_ranx_was_checked_against_before() -> None:
    for threshold in (1, 2):
        for gain in ("linear", "exponential"):
            level = f"-l{threshold}" if threshold != 1 else ""
            ndcg = "ndcg" if gain == "linear" else "ndcg_burges"
            before = {
                **{f"nDCG@{k}": f"{ndcg}@{k}" for k in CUTOFFS},
                "nDCG": ndcg,
                **{f"R@{k}": f"recall@{k}{level}" for k in CUTOFFS},
                **{f"P@{k}": f"precision@{k}{level}" for k in CUTOFFS},
                **{f"Hit@{k}": f"hit_rate@{k}{level}" for k in CUTOFFS},
                **{f"MRR@{k}": f"mrr@{k}{level}" for k in CUTOFFS},
                "MRR": f"mrr{level}",
                **{f"MAP@{k}": f"map@{k}{level}" for k in CUTOFFS},
                "MAP": f"map{level}",
                "RPrec": f"r-precision{level}",
            }
            assert before.items() <= ranx_names(threshold, gain).items()  # type: ignore[arg-type]


def ranx_eval(qrels: Qrels, run: Mapping[str, Mapping[str, float]], metrics: Sequence[str]) -> Scores:
    """ranx's per-query scores; ``run`` must have exactly the queries of ``qrels``."""
    ranx_run = ranx.Run({qid: dict(results) for qid, results in run.items()})
    ranx.evaluate(ranx.Qrels(qrels), ranx_run, list(metrics))
    return {qid: {m: float(ranx_run.scores[m][qid]) for m in metrics} for qid in run}


def ranx_on_rankings(qrels: Qrels, rankings: Mapping[str, Sequence[str]], metrics: Sequence[str]) -> Scores:
    """ranx on ragaudit's rankings: every judged query, an absent one as an empty list."""
    comparable = {qid: rankings.get(qid, []) for qid in qrels}
    return ranx_eval(qrels, randomruns.as_rank_scores(comparable), metrics)


@pytest.mark.parametrize("gain", ["linear", "exponential"])
@pytest.mark.parametrize("threshold", [1, 2])
@pytest.mark.parametrize("seed", SEEDS)
def test_pure_bulk_and_evaluate_equal_ranx(seed: int, threshold: int, gain: Gain, tmp_path: Path) -> None:
    coll = randomruns.make_collection(seed)
    qrels_path = randomruns.write_qrels(coll.qrels, tmp_path / "qrels.txt")
    run_path = randomruns.write_run(coll.run, tmp_path / "run.trec")
    rankings = randomruns.rankings_of(ragaudit.load_run(run_path))
    names = ranx_names(threshold, gain)
    metrics = ",".join(names)
    expected = ranx_on_rankings(coll.qrels, rankings, list(names.values()))

    pure = randomruns.score_pure(coll.qrels, rankings, metrics, threshold, gain)
    assert len(pure) > 15
    assert randomruns.mismatches(pure, expected, names) == []
    bulk = randomruns.score_bulk(coll.qrels, rankings, metrics, threshold, gain)
    assert randomruns.mismatches(bulk, expected, names) == []
    result = ragaudit.evaluate(qrels_path, run_path, metrics, Policy(gain, relevance_threshold=threshold))
    per_case = {c.id: c.metrics for c in result.per_case if c.status != "unanswerable"}
    assert sorted(per_case) == sorted(pure)
    assert randomruns.mismatches(per_case, expected, names) == []


# --- documented differences (docs/metrics.md), each on a hand example --------------------------------


def _dataset(qrels: Qrels) -> Dataset:
    cases = tuple(GoldenCase(qid, f"query {qid}", None, judged) for qid, judged in qrels.items())
    return Dataset(cases, "in-memory", "0" * 64, "qrels")


def test_ragaudit_default_gain_is_ranx_ndcg_burges_and_linear_is_ranx_ndcg() -> None:
    qrels = {"q": {"a": 3, "b": 1}}
    ranks = {"q": {"b": 2.0, "a": 1.0}}
    result = ragaudit.evaluate(_dataset(qrels), {"q": ["b", "a"]}, "nDCG@2")
    linear = ragaudit.evaluate(_dataset(qrels), {"q": ["b", "a"]}, "nDCG@2", Policy(gain="linear"))
    theirs = ranx_eval(qrels, ranks, ["ndcg_burges@2", "ndcg@2"])["q"]
    assert result.metrics["nDCG@2"] == pytest.approx(theirs["ndcg_burges@2"])
    assert result.metrics["nDCG@2"] == pytest.approx((1 + 7 / log2(3)) / (7 + 1 / log2(3)))
    assert linear.metrics["nDCG@2"] == pytest.approx(theirs["ndcg@2"])


def test_ranx_breaks_ties_by_insertion_order(tmp_path: Path) -> None:
    """trec_eval (and ragaudit) rank equal scores by doc id descending; ranx keeps the file's order."""
    run_path = tmp_path / "run.trec"
    run_path.write_text("q Q0 d10 1 0.5 t\nq Q0 d9 2 0.5 t\n", encoding="utf-8")
    qrels = {"q": {"d10": 1}}
    ours = ragaudit.evaluate(_dataset(qrels), run_path, "MRR").metrics["MRR"]
    ranx_run = ranx.Run.from_file(str(run_path), kind="trec")
    theirs = ranx.evaluate(ranx.Qrels(qrels), ranx_run, "mrr")
    assert ours == pytest.approx(0.5)  # d9 > d10 as strings
    assert theirs == pytest.approx(1.0)


def test_ranx_run_file_loader_keeps_the_last_duplicate_line(tmp_path: Path) -> None:
    run_path = randomruns.write_run({"q": [("a", 0.9), ("b", 0.8), ("a", 0.1)]}, tmp_path / "run.trec")
    qrels = {"q": {"a": 1}}
    ours = ragaudit.evaluate(_dataset(qrels), run_path, "MRR").metrics["MRR"]
    theirs = ranx.evaluate(ranx.Qrels(qrels), ranx.Run.from_file(str(run_path), kind="trec"), "mrr")
    assert ours == 1.0
    assert theirs == pytest.approx(0.5)


def test_ranx_scores_unanswerable_queries_zero_and_needs_missing_ones_made_comparable() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 0}}
    run = {"q1": {"a": 1.0}, "q3": {"c": 1.0}}
    with pytest.raises(AssertionError, match="make_comparable"):
        ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), "mrr")
    theirs = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), "mrr", make_comparable=True)
    assert theirs == pytest.approx(1 / 3)  # q1 = 1, q2 missing = 0, q3 unanswerable = 0
    result = ragaudit.evaluate(_dataset(qrels), {q: list(r) for q, r in run.items()}, "MRR")
    assert result.metrics["MRR"] == pytest.approx(1 / 2)  # q1 = 1, q2 missing = 0; q3 left out
    assert result.missing == ["q2"]
    assert result.counts.unanswerable == 1


def test_ranx_relevance_level_also_drops_low_grades_from_ndcg() -> None:
    """With ``-l2`` ranx's nDCG ignores grade-1 items; ragaudit (and trec_eval) keep their gain."""
    qrels = {"q": {"a": 1, "b": 2}}
    result = ragaudit.evaluate(
        _dataset(qrels), {"q": ["a", "b"]}, "nDCG@2,MRR", Policy(gain="linear", relevance_threshold=2)
    )
    theirs = ranx_eval(qrels, {"q": {"a": 2.0, "b": 1.0}}, ["ndcg@2-l2", "mrr-l2"])["q"]
    assert result.metrics["MRR"] == pytest.approx(theirs["mrr-l2"]) == pytest.approx(0.5)
    assert result.metrics["nDCG@2"] == pytest.approx((1 + 2 / log2(3)) / (2 + 1 / log2(3)))
    assert theirs["ndcg@2-l2"] == pytest.approx((2 / log2(3)) / 2)
