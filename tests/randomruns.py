"""Seeded random qrels and runs for the metric agreement tests, and ragaudit's three ways to score them.

The collections are built to hit every edge the semantics policy decides: graded labels 0-3, queries
whose judgments are all grade 0, queries absent from the run, queries with an empty result list, run
queries the qrels do not know, unjudged retrieved items, score ties (scores on a 0.1 grid) and
document ids whose string order differs from their numeric order (``d9`` > ``d10``), with the run
file's lines shuffled so that only the scores (and trec_eval's tie rule) decide the ranking.

Imported as a plain module (``import randomruns``): pytest's default ``prepend`` import mode puts
``tests/`` on ``sys.path`` because ``tests/`` has no ``__init__.py``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import dataclass
from pathlib import Path

from ragaudit.data.run import Run
from ragaudit.metrics.bulk import build_rank_matrix, compute
from ragaudit.metrics.measure import Measure
from ragaudit.metrics.measures import MEASURES, measure_of
from ragaudit.metrics.names import MetricSpec, parse_metrics
from ragaudit.metrics.pure import Gain

SEEDS = (0, 1, 2, 3, 4, 5)
CUTOFFS = (1, 3, 5, 10, 20)
GRADE_WEIGHTS = {0: 4, 1: 3, 2: 2, 3: 1}

Qrels = dict[str, dict[str, int]]
ScoredRun = dict[str, list[tuple[str, float]]]
Scores = dict[str, dict[str, float]]
"""``{query_id: {metric name: value}}``."""


@dataclass(frozen=True)
class Collection:
    """A random test collection: judgments and a scored run, lines in no particular order."""

    qrels: Qrels
    run: ScoredRun
    """Every query of the run file, in file order; a query with ``[]`` has no line in the file."""

    def ties(self) -> int:
        """How many results share their score with another result of the same query."""
        return sum(len(items) - len({score for _, score in items}) for items in self.run.values())

    def queries_without_results(self) -> list[str]:
        """Judged queries the run file has no line for (absent, or an empty result list)."""
        return [q for q in self.qrels if not self.run.get(q)]


def doc_id(number: int) -> str:
    """Ids of varied length and case, so string order (trec_eval's tie rule) differs from numeric order."""
    return ("d{}", "D{}", "doc-{}x")[number % 3].format(number)


def make_collection(seed: int, n_queries: int = 30, n_docs: int = 40) -> Collection:
    """Build a seeded random collection (see the module docstring for what it contains)."""
    rng = random.Random(seed)
    pool = [doc_id(i) for i in range(n_docs)]
    grades, weights = zip(*GRADE_WEIGHTS.items(), strict=True)
    qrels: Qrels = {}
    run: ScoredRun = {}
    for q in range(n_queries):
        qid = f"q{q}"
        judged = rng.sample(pool, rng.randint(1, 12))
        if q % 7 == 3:
            qrels[qid] = dict.fromkeys(judged, 0)
        else:
            qrels[qid] = {d: rng.choices(grades, weights)[0] for d in judged}
        if q % 6 == 1:  # absent from the run
            continue
        if q % 6 == 4:  # an empty result list
            run[qid] = []
            continue
        length = rng.randint(1, 25)
        candidates = list(dict.fromkeys(rng.sample(judged, len(judged) // 2 + 1) + rng.sample(pool, length)))
        run[qid] = [(d, round(rng.uniform(-1.0, 1.0), 1)) for d in candidates[:length]]
        rng.shuffle(run[qid])
    for extra in range(2):
        run[f"unjudged-query-{extra}"] = [(d, round(rng.random(), 1)) for d in rng.sample(pool, 5)]
    return Collection(qrels, run)


def write_qrels(qrels: Qrels, path: Path) -> Path:
    """Write TREC qrels (``query_id 0 doc_id grade``)."""
    lines = [f"{qid} 0 {d} {g}\n" for qid, judged in qrels.items() for d, g in judged.items()]
    path.write_text("".join(lines), encoding="utf-8")
    return path


def write_run(run: ScoredRun, path: Path) -> Path:
    """Write a TREC run in the given (unsorted) order; the rank column is the line number, i.e. noise."""
    lines = [
        f"{qid} Q0 {d} {rank} {score!r} random\n"
        for qid, items in run.items()
        for rank, (d, score) in enumerate(items, start=1)
    ]
    path.write_text("".join(lines), encoding="utf-8")
    return path


def as_scored_dict(run: ScoredRun) -> dict[str, dict[str, float]]:
    """The run as ``{query_id: {doc_id: score}}``, the input of pytrec_eval (ties left to trec_eval)."""
    return {qid: dict(items) for qid, items in run.items()}


def as_rank_scores(rankings: Mapping[str, Sequence[str]]) -> dict[str, dict[str, float]]:
    """Rankings as strictly decreasing scores, so a tool with another tie rule sees the same order."""
    return {qid: {d: float(len(r) - i) for i, d in enumerate(r)} for qid, r in rankings.items()}


def pure_value(
    spec: MetricSpec, ranking: Sequence[str], grades: Mapping[str, int], rel: Set[str], gain: Gain
) -> float:
    """One metric of one query through its measure's pure reference function."""
    return measure_of(spec.family).pure(ranking, grades, rel, spec.k, gain)


def names_in(tool: Callable[[Measure, int | None], str | None]) -> dict[str, str]:
    """ragaudit name -> another tool's name, for every registered family at every cut-off of
    :data:`CUTOFFS` (and without one) that its name rule allows and the tool defines identically."""
    out: dict[str, str] = {}
    for measure in MEASURES:
        cutoffs = {"required": CUTOFFS, "optional": (None, *CUTOFFS), "none": (None,)}[measure.cutoff]
        for k in cutoffs:
            theirs = tool(measure, k)
            if theirs is not None:
                out[measure.family if k is None else f"{measure.family}@{k}"] = theirs
    return out


def answerable(qrels: Qrels, threshold: int) -> list[str]:
    """The queries with at least one item of grade >= threshold (ragaudit's answerable cases)."""
    return [qid for qid, judged in qrels.items() if any(g >= threshold for g in judged.values())]


def score_pure(
    qrels: Qrels, rankings: Mapping[str, Sequence[str]], names: str, threshold: int, gain: Gain
) -> Scores:
    """Every answerable query scored with the pure functions (an absent ranking is empty)."""
    specs = parse_metrics(names)
    out: Scores = {}
    for qid in answerable(qrels, threshold):
        grades = qrels[qid]
        rel = {d for d, g in grades.items() if g >= threshold}
        ranking = rankings.get(qid, [])
        out[qid] = {s.name: pure_value(s, ranking, grades, rel, gain) for s in specs}
    return out


def score_bulk(
    qrels: Qrels, rankings: Mapping[str, Sequence[str]], names: str, threshold: int, gain: Gain
) -> Scores:
    """Every answerable query scored with the vectorised engine."""
    specs = parse_metrics(names)
    qids = answerable(qrels, threshold)
    matrix = build_rank_matrix(
        [rankings.get(q, []) for q in qids],
        [{d for d, g in qrels[q].items() if g >= threshold} for q in qids],
        [qrels[q] for q in qids],
    )
    values = compute(matrix, specs, gain)
    return {q: {s.name: float(values[s.name][i]) for s in specs} for i, q in enumerate(qids)}


def rankings_of(run: Run) -> dict[str, list[str]]:
    """``{query_id: ranked ids}`` of a loaded run."""
    return {qid: case.ranking for qid, case in run.cases.items()}


def mismatches(got: Scores, expected: Scores, names: Mapping[str, str], tol: float = 1e-9) -> list[str]:
    """Every ``query metric`` where ``got`` (ragaudit names) and ``expected`` (tool names) differ."""
    out = []
    for qid, values in got.items():
        for ours, theirs in names.items():
            if abs(values[ours] - expected[qid][theirs]) > tol:
                out.append(f"{qid} {ours}: ragaudit {values[ours]!r} vs {theirs} {expected[qid][theirs]!r}")
    return out
