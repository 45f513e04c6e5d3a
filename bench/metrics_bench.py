"""Metric engine benchmark: from TREC files to five averages, ragaudit's fast path against its peers.

1. Data: a seeded synthetic TREC qrels + run under ``bench/_data/metrics/`` (gitignored, reused when
   present): ``--queries`` queries x ``--depth`` results, graded labels 0-3, about 1% of the
   qrels queries missing from the run, 1% of the run's queries not in the qrels, 2% of the queries
   judged with grade 0 only, and scores rounded to 2 decimals so ties are common (tied lines are in
   random doc order, so trec_eval's doc-id tie-break has work to do). No repeated doc ids: the dict
   readers of the peers cannot represent them.
2. Files to averages of nDCG@10, R@100, MRR@10, P@10, MAP, each tool in its own subprocess (time
   from opening the files to the averages; peak memory = that process's peak RSS):
   ragaudit ``evaluate_trec_files``; pytrec_eval with a plain Python reader into dicts; ranx
   (``Qrels.from_file`` / ``Run.from_file`` + ``evaluate``; first call with numba JIT, then warm);
   ir_measures (``read_trec_qrels`` / ``read_trec_run`` + ``calc_aggregate``). Peak memory is the
   child's ``VmHWM`` (``ru_maxrss`` would inherit the parent's peak across ``fork`` + ``exec``).
3. Agreement, per query over the answerable queries in the run, with ragaudit set to trec_eval's
   conventions (linear gain, relevance level 1): trec_eval's ``recip_rank`` has no cut-off, so it is
   compared as RR@10 = rr if rr >= 1/10 else 0; ranx breaks score ties by insertion order, not doc
   id, so it is compared on the queries whose ties are all between items of one grade; so is
   ir_measures' RR@10 (its provider for RR@k orders ties differently from trec_eval).
4. The metric kernel alone (``bulk.compute`` on a RankMatrix already in memory, same shape).
5. Streaming: ``--stream-queries`` queries (default 1,000,000) x ``--stream-depth`` results in bounded
   memory; time and peak RSS.
6. Whole process (issue 25): the command a user types, ``ragaudit eval --dataset QRELS --run RUN
   --metrics nDCG@10,R@100,MRR,P@10,MAP --gain linear --out report.json`` (start-up, reading, scoring,
   the terminal summary, the JSON report and the history entry), against a whole pytrec_eval process
   (start-up, a plain Python reader into dicts, ``RelevanceEvaluator``, the means, the per-query values
   written as JSON). Each process runs under ``/usr/bin/time`` (wall, user + system CPU, peak RSS of
   that process alone), the two alternating, ``--whole-rounds`` rounds after one untimed ragaudit run
   (bytecode caches, page cache); the minimum and median of each are compared and the ratios
   printed, with every round and the load average at its start listed (the machine is shared: CPU
   seconds move less than wall seconds under load). The report's per-case values are checked
   against pytrec_eval's.

Run: ``.venv/bin/python bench/metrics_bench.py`` (several minutes, mostly the peers and data
generation); ``--queries 2000 --stream-queries 0`` for a quick run; ``--only-whole`` runs the data step
and part 6 alone.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench" / "_data" / "metrics"
METRICS = "nDCG@10,R@100,MRR@10,P@10,MAP"
TREC_MEASURES = {"ndcg_cut.10", "recall.100", "recip_rank", "P.10", "map"}
TREC_KEYS = {
    "nDCG@10": "ndcg_cut_10",
    "R@100": "recall_100",
    "MRR@10": "recip_rank",
    "P@10": "P_10",
    "MAP": "map",
}
RANX_KEYS = {
    "nDCG@10": "ndcg@10",
    "R@100": "recall@100",
    "MRR@10": "mrr@10",
    "P@10": "precision@10",
    "MAP": "map",
}


# ---------------------------------------------------------------- data


def _chunk_lines(rng: np.random.Generator, first: int, count: int, depth: int) -> tuple[str, str]:
    """Qrels and run text for queries ``first .. first + count - 1`` (vectorised over the chunk)."""
    n_docs = 8_841_823
    n_judged = 1 + rng.poisson(8, count)
    jq = np.repeat(np.arange(first, first + count), n_judged)
    jdoc = rng.integers(0, n_docs, jq.size)
    grade = rng.choice(4, jq.size, p=[0.4, 0.3, 0.2, 0.1])
    grade[np.isin(jq, first + np.flatnonzero(rng.random(count) < 0.02))] = 0  # 2%: grade 0 only
    in_qrels = jq % 100 != 1  # 1% of the run's queries are not in the qrels
    qrels = "".join(
        f"q{q} 0 d{d} {g}\n"
        for q, d, g in zip(
            jq[in_qrels].tolist(), jdoc[in_qrels].tolist(), grade[in_qrels].tolist(), strict=True
        )
    )
    shown = rng.random(jq.size) < 0.6
    fill = np.maximum(depth - np.bincount(jq[shown] - first, minlength=count), 0)
    oq = np.repeat(np.arange(first, first + count), fill)
    q = np.concatenate([jq[shown], oq])
    doc = np.concatenate([jdoc[shown], rng.integers(0, n_docs, oq.size)])
    bonus = np.concatenate([grade[shown], np.zeros(oq.size, dtype=np.int64)])
    score = np.round(rng.gamma(2.0, 3.0, q.size) + 2.5 * bonus, 2)
    keep = (q % 100 != 2) & ~_repeats(q, doc)  # 1% of the qrels' queries are missing from the run
    q, doc, score = q[keep], doc[keep], score[keep]
    order = np.lexsort((-score, q))  # score order within a query; ties stay in random doc order
    q, doc, score = q[order], doc[order], score[order]
    starts = np.flatnonzero(np.r_[True, q[1:] != q[:-1]])
    rank = np.arange(q.size) - np.repeat(starts, np.diff(np.r_[starts, q.size])) + 1
    keep = rank <= depth
    run = "".join(
        f"q{a} Q0 d{b} {c} {e:.2f} bench\n"
        for a, b, c, e in zip(
            q[keep].tolist(), doc[keep].tolist(), rank[keep].tolist(), score[keep].tolist(), strict=True
        )
    )
    return qrels, run


def _repeats(q: np.ndarray, doc: np.ndarray) -> np.ndarray:  # type: ignore[type-arg]
    """Later copies of a (query, doc) pair (the peers' dict readers cannot represent repeats)."""
    _, first = np.unique(q.astype(np.int64) * 10_000_000 + doc, return_index=True)
    out = np.ones(q.size, dtype=bool)
    out[first] = False
    return out


def generate(queries: int, depth: int, seed: int) -> tuple[Path, Path]:
    """Write (or reuse) the synthetic qrels and run; returns their paths."""
    DATA.mkdir(parents=True, exist_ok=True)
    stem = f"q{queries}_d{depth}_s{seed}"
    qrels_path, run_path = DATA / f"{stem}.qrels", DATA / f"{stem}.run"
    if qrels_path.is_file() and run_path.is_file():
        return qrels_path, run_path
    rng = np.random.default_rng(seed)
    tmp_q, tmp_r = qrels_path.with_suffix(".tmp1"), run_path.with_suffix(".tmp2")
    with tmp_q.open("w") as qf, tmp_r.open("w") as rf:
        for first in range(0, queries, 5000):
            qrels, run = _chunk_lines(rng, first, min(5000, queries - first), depth)
            qf.write(qrels)
            rf.write(run)
    tmp_q.replace(qrels_path)
    tmp_r.replace(run_path)
    return qrels_path, run_path


# ---------------------------------------------------------------- peers (each in its own process)


PerQuery = dict[str, dict[str, float]]
Outcome = tuple[dict[str, float], Callable[[], PerQuery]]
"""A peer's averages, and a thunk for its per-query values (called after the clock stops)."""


def _ragaudit(qrels: str, run: str, workers: int | None = None) -> Outcome:
    from ragaudit.evaluation.fast_trec import evaluate_trec_files
    from ragaudit.metrics.policy import Policy

    result = evaluate_trec_files(qrels, run, METRICS, Policy(gain="linear"), workers=workers)
    return result.metrics, lambda: {m: result.per_query_values(m) for m in result.metrics}


def _ragaudit_one_thread(qrels: str, run: str) -> Outcome:
    return _ragaudit(qrels, run, workers=1)


def _read_qrels_dict(path: str) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with open(path) as handle:
        for line in handle:
            q, _, d, g = line.split()
            qrels.setdefault(q, {})[d] = int(g)
    return qrels


def _read_run_dict(path: str) -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = {}
    with open(path) as handle:
        for line in handle:
            q, _, d, _, s, _ = line.split()
            run.setdefault(q, {})[d] = float(s)
    return run


def _pytrec_eval(qrels: str, run: str) -> Outcome:
    import pytrec_eval

    evaluator = pytrec_eval.RelevanceEvaluator(_read_qrels_dict(qrels), TREC_MEASURES)
    per_query = evaluator.evaluate(_read_run_dict(run))
    means = {m: float(np.mean([v[key] for v in per_query.values()])) for m, key in TREC_KEYS.items()}
    return means, lambda: {m: {q: v[key] for q, v in per_query.items()} for m, key in TREC_KEYS.items()}


def _ranx(qrels: str, run: str) -> Outcome:
    from ranx import Qrels, Run, evaluate

    q = Qrels.from_file(qrels, kind="trec")
    r = Run.from_file(run, kind="trec")
    names = list(RANX_KEYS.values())
    means = evaluate(q, r, names, make_comparable=True)

    def per_query() -> PerQuery:
        per = evaluate(q, r, names, make_comparable=True, return_mean=False)
        ids = list(r.keys())
        return {m: dict(zip(ids, np.asarray(per[key]).tolist(), strict=True)) for m, key in RANX_KEYS.items()}

    return {m: float(means[key]) for m, key in RANX_KEYS.items()}, per_query


def _ir_measures_names() -> dict[str, Any]:
    import ir_measures
    from ir_measures import AP, RR, R, nDCG

    return {"nDCG@10": nDCG @ 10, "R@100": R @ 100, "MRR@10": RR @ 10, "P@10": ir_measures.P @ 10, "MAP": AP}


def _ir_measures(qrels: str, run: str) -> Outcome:
    import ir_measures

    measures = _ir_measures_names()
    agg = ir_measures.calc_aggregate(
        list(measures.values()), ir_measures.read_trec_qrels(qrels), ir_measures.read_trec_run(run)
    )

    def per_query() -> PerQuery:
        names = {str(measure): m for m, measure in measures.items()}
        out: PerQuery = {m: {} for m in measures}
        for row in ir_measures.iter_calc(
            list(measures.values()), ir_measures.read_trec_qrels(qrels), ir_measures.read_trec_run(run)
        ):
            out[names[str(row.measure)]][row.query_id] = float(row.value)
        return out

    return {m: float(agg[measure]) for m, measure in measures.items()}, per_query


def _qrels_only(qrels: str, run: str) -> Outcome:
    """Only the qrels index (the part of ragaudit's memory that does not depend on the run)."""
    from ragaudit.data.fast_qrels import read_qrels_index

    read_qrels_index(qrels)
    return {}, dict


PEERS = {
    "qrels_only": _qrels_only,
    "ragaudit": _ragaudit,
    "ragaudit_1": _ragaudit_one_thread,
    "pytrec_eval": _pytrec_eval,
    "ranx": _ranx,
    "ir_measures": _ir_measures,
}


def peak_rss_mb() -> float:
    """This process's peak resident memory in MB.

    Linux's ``VmHWM`` counts this program only; ``ru_maxrss`` would also carry the parent's peak
    over ``fork`` + ``exec`` (the kernel keeps the larger of the two), inflating small children.
    """
    status = Path("/proc/self/status")
    if status.is_file():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def peer_main(name: str, qrels: str, run: str, out: str, repeat: int, per_query: bool) -> None:
    """Child process: time files-to-averages (``repeat`` times), then write figures and per-query values.

    Peak memory is read before the per-query values are gathered for the agreement check.
    """
    fn = PEERS[name]
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        means, detail = fn(qrels, run)
        times.append(time.perf_counter() - start)
    peak = peak_rss_mb()
    values = detail() if per_query else {}
    Path(out).write_text(json.dumps({"times": times, "peak_mb": peak, "means": means, "per_query": values}))


def run_peer(name: str, qrels: Path, run: Path, repeat: int = 1, per_query: bool = True) -> dict[str, Any]:
    out = DATA / f"result_{name}.json"
    cmd = [
        sys.executable,
        __file__,
        "--peer",
        name,
        "--qrels",
        str(qrels),
        "--run",
        str(run),
        "--out",
        str(out),
    ]
    subprocess.run([*cmd, "--repeat", str(repeat), *([] if per_query else ["--no-per-query"])], check=True)
    result: dict[str, Any] = json.loads(out.read_text())
    out.unlink()
    return result


# ---------------------------------------------------------------- checks and the other timings


def answerable_in_run(qrels: Path, run: Path) -> tuple[set[str], set[str]]:
    """Queries with a grade >= 1 that the run answers, and those of them whose scores per query do
    not depend on the order of tied items (every tie is between items of one grade)."""
    judged = _read_qrels_dict(str(qrels))
    answerable = {q for q, docs in judged.items() if any(g >= 1 for g in docs.values())}
    ties: dict[str, dict[float, set[int]]] = {}
    with run.open() as handle:
        for line in handle:
            q, _, d, _, s, _ = line.split()
            grade = judged.get(q, {}).get(d, 0)
            ties.setdefault(q, {}).setdefault(float(s), set()).add(grade)
    in_run = answerable & set(ties)
    order_free = {q for q in in_run if all(len(grades) == 1 for grades in ties[q].values())}
    return in_run, order_free


def agreement(
    ours: dict[str, dict[str, float]],
    theirs: dict[str, dict[str, float]],
    queries: set[str],
    rr_cut: bool = False,
    tie_sensitive: tuple[str, ...] = (),
    order_free: frozenset[str] = frozenset(),
) -> float:
    """Largest per-query difference over ``queries`` and the five metrics (absent there = 0).

    ``rr_cut``: the peer's MRR@10 column is trec_eval's uncut ``recip_rank``, read as RR@10.
    ``tie_sensitive`` metrics (the peer orders ties its own way) are compared on ``order_free`` only.
    """
    worst = 0.0
    for metric, values in ours.items():
        for q in order_free & queries if metric in tie_sensitive else queries:
            other = theirs[metric].get(q, 0.0)
            if metric == "MRR@10" and rr_cut and other < 0.1:
                other = 0.0
            worst = max(worst, abs(values[q] - other))
    return worst


def kernel_seconds(queries: int, depth: int, seed: int) -> float:
    from ragaudit.metrics.bulk import RankMatrix, compute
    from ragaudit.metrics.names import parse_metrics

    rng = np.random.default_rng(seed)
    grades = rng.choice(4, (queries, depth), p=[0.85, 0.08, 0.05, 0.02]).astype(np.float64)
    ideal = -np.sort(-rng.choice(4, (queries, 12), p=[0.3, 0.4, 0.2, 0.1]).astype(np.float64), axis=1)
    matrix = RankMatrix(grades, grades >= 1, (ideal >= 1).sum(axis=1).astype(np.int64) + 1, ideal)
    specs = parse_metrics(METRICS)
    compute(matrix, specs, "linear")
    start = time.perf_counter()
    compute(matrix, specs, "linear")
    return time.perf_counter() - start


# ---------------------------------------------------------------- whole process (issue 25)

WHOLE_METRICS = "nDCG@10,R@100,MRR,P@10,MAP"
WHOLE_TREC = {
    "nDCG@10": "ndcg_cut_10",
    "R@100": "recall_100",
    "MRR": "recip_rank",
    "P@10": "P_10",
    "MAP": "map",
}


def pytrec_whole(qrels: str, run: str, out: str) -> None:
    """The peer's whole job in one process: read, evaluate, average, write the values as JSON."""
    import pytrec_eval

    evaluator = pytrec_eval.RelevanceEvaluator(_read_qrels_dict(qrels), TREC_MEASURES)
    per_query = evaluator.evaluate(_read_run_dict(run))
    means = {m: float(np.mean([v[key] for v in per_query.values()])) for m, key in WHOLE_TREC.items()}
    values = {m: {q: v[key] for q, v in per_query.items()} for m, key in WHOLE_TREC.items()}
    Path(out).write_text(json.dumps({"means": means, "per_query": values}))


def timed(cmd: list[str], cwd: Path) -> dict[str, float]:
    """Run ``cmd`` to the end; its wall and CPU seconds and peak RSS (MB), that process alone, and the
    1-minute load average when it started.

    ``PYTHONDONTWRITEBYTECODE`` is dropped from the child's environment, so the bytecode caches are
    written and then used, as in an installed package (compiling the modules a run imports costs
    about 0.1 s).
    """
    env = {**os.environ, "RAGAUDIT_HISTORY": str(cwd / "history.sqlite")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    load = os.getloadavg()[0]
    stats = cwd / "time.txt"
    timer = shutil.which("time") or "/usr/bin/time"
    if Path(timer).is_file():
        start = time.perf_counter()
        done = subprocess.run(
            [timer, "-o", str(stats), "-f", "%e %U %S %M", *cmd], cwd=cwd, env=env, capture_output=True
        )
        wall = time.perf_counter() - start
        _, user, system, peak_kb = stats.read_text().split()[-4:]
        cpu, peak = float(user) + float(system), int(peak_kb) / 1024
    else:  # no /usr/bin/time: the child's rusage (its peak may include the forking parent's)
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        done = subprocess.CompletedProcess(cmd, proc.returncode, proc.stdout.read(), proc.stderr.read())  # type: ignore[union-attr]
        cpu, peak = usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024
    if done.returncode not in (0, 1):  # eval exits 1 on the missing queries (its exit rule), still writing
        raise SystemExit(f"{cmd[:4]} failed ({done.returncode}): {done.stderr[-2000:]!r}")
    return {"wall": wall, "cpu": cpu, "peak": peak, "load": load}


def whole_process(qrels: Path, run: Path, rounds: int) -> None:
    """Part 6: ``ragaudit eval ... --out report.json`` against a whole pytrec_eval process."""
    ours_cmd = [
        sys.executable, "-m", "ragaudit", "eval", "--dataset", str(qrels), "--run", str(run),
        "--metrics", WHOLE_METRICS, "--gain", "linear", "--out", "report.json",
    ]  # fmt: skip
    theirs_cmd = [
        sys.executable, __file__, "--peer", "pytrec_whole", "--qrels", str(qrels), "--run", str(run),
        "--out", "peer.json",
    ]  # fmt: skip
    figures: dict[str, list[dict[str, float]]] = {"ragaudit": [], "pytrec_eval": []}
    with tempfile.TemporaryDirectory(dir=DATA) as tmp:
        folder = Path(tmp)
        timed(ours_cmd, folder)  # warm-up, untimed: bytecode caches written, the files in the page cache
        for _ in range(rounds):
            figures["ragaudit"].append(timed(ours_cmd, folder))
            figures["pytrec_eval"].append(timed(theirs_cmd, folder))
        report = json.loads((folder / "report.json").read_text())
        peer = json.loads((folder / "peer.json").read_text())
    ours = {
        m: {c["id"]: c["metrics"][m] for c in report["per_case"] if m in c["metrics"]} for m in WHOLE_TREC
    }
    answerable, _ = answerable_in_run(qrels, run)
    worst = agreement(ours, peer["per_query"], answerable)
    loads = [r["load"] for rows in figures.values() for r in rows]
    print(
        f"\nwhole process, {' '.join(ours_cmd[2:4])} ... --out report.json vs pytrec_eval, {rounds} rounds "
        f"in turn (load average {min(loads):.1f}-{max(loads):.1f}; 2.0 = both cores of this machine busy)"
    )
    print(
        f"{'tool':12} {'wall min':>8} {'median':>7} {'CPU min':>8} {'median':>7} {'peak MB':>8}"
        "  rounds (wall s / CPU s @ load)"
    )
    summary = {}
    for name, rows in figures.items():
        walls, cpus = [r["wall"] for r in rows], [r["cpu"] for r in rows]
        summary[name] = (min(walls), statistics.median(walls), min(cpus), statistics.median(cpus))
        listed = ", ".join(f"{r['wall']:.2f}/{r['cpu']:.2f}@{r['load']:.1f}" for r in rows)
        print(
            f"{name:12} {summary[name][0]:8.2f} {summary[name][1]:7.2f} {summary[name][2]:8.2f} "
            f"{summary[name][3]:7.2f} {max(r['peak'] for r in rows):8.0f}  {listed}"
        )
    ratios = [theirs / mine for mine, theirs in zip(summary["ragaudit"], summary["pytrec_eval"], strict=True)]
    print(
        "ratio pytrec_eval / ragaudit: wall {:.1f}x (min) {:.1f}x (median), CPU {:.1f}x (min) {:.1f}x (median); "
        "ragaudit per-case values vs pytrec_eval: max |diff| {:.1e} over {:,} queries".format(
            *ratios, worst, len(answerable)
        )
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--stream-queries", type=int, default=1_000_000, help="0 skips the streaming run")
    parser.add_argument("--stream-depth", type=int, default=20)
    parser.add_argument("--peers", default="pytrec_eval,ranx,ir_measures")
    parser.add_argument("--whole-rounds", type=int, default=3, help="rounds of the whole-process race")
    parser.add_argument("--only-whole", action="store_true", help="only the whole-process race (part 6)")
    parser.add_argument("--peer", help=argparse.SUPPRESS)
    parser.add_argument("--qrels", help=argparse.SUPPRESS)
    parser.add_argument("--run", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--repeat", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--no-per-query", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.peer == "pytrec_whole":
        pytrec_whole(args.qrels, args.run, args.out)
        return 0
    if args.peer:
        peer_main(args.peer, args.qrels, args.run, args.out, args.repeat, not args.no_per_query)
        return 0

    start = time.perf_counter()
    qrels, run = generate(args.queries, args.depth, args.seed)
    print(
        f"data: {run.stat().st_size / 2**20:.0f} MB run, {qrels.stat().st_size / 2**20:.0f} MB qrels "
        f"({time.perf_counter() - start:.1f} s to make or find) in {DATA}"
    )
    if args.whole_rounds:
        whole_process(qrels, run, args.whole_rounds)
    if args.only_whole:
        return 0
    rows: list[tuple[str, float, float, str]] = []
    ours = run_peer("ragaudit", qrels, run, repeat=2)
    base_t, base_m = min(ours["times"]), ours["peak_mb"]
    rows.append(("ragaudit evaluate_trec_files", base_t, base_m, "reference"))
    one = run_peer("ragaudit_1", qrels, run, repeat=2, per_query=False)
    rows.append(("ragaudit, workers=1", min(one["times"]), one["peak_mb"], "same code, one parse thread"))
    answerable, order_free = answerable_in_run(qrels, run)
    for name in [p for p in args.peers.split(",") if p]:
        result = run_peer(name, qrels, run, repeat=2 if name == "ranx" else 1)
        per_query = result["per_query"]
        if name == "pytrec_eval":
            worst = agreement(ours["per_query"], per_query, answerable, rr_cut=True)
            note = f"max |diff| {worst:.1e} over {len(answerable):,} queries"
        elif name == "ranx":
            worst = agreement(ours["per_query"], per_query, order_free)
            note = f"max |diff| {worst:.1e} over {len(order_free):,} queries whose ties do not matter"
        else:
            worst = agreement(
                ours["per_query"],
                per_query,
                answerable,
                tie_sensitive=("MRR@10",),
                order_free=frozenset(order_free),
            )
            note = f"max |diff| {worst:.1e} over {len(answerable):,} queries (RR@10: ties that do not matter)"
        label = name
        if name == "ranx":
            rows.append(("ranx (first call, with JIT)", result["times"][0], result["peak_mb"], note))
            label, result["times"] = "ranx (warm)", result["times"][1:]
        rows.append((label, min(result["times"]), result["peak_mb"], note))
    print(f"\nfiles -> {METRICS} averages, {args.queries:,} queries x {args.depth} results")
    print(f"{'tool':32} {'time s':>8} {'x ours':>7} {'peak MB':>8} {'x ours':>7}  agreement")
    for label, seconds, peak, note in rows:
        print(f"{label:32} {seconds:8.2f} {seconds / base_t:7.1f} {peak:8.0f} {peak / base_m:7.2f}  {note}")
    print(
        f"\nmetric kernel alone (bulk.compute, {args.queries:,} x {args.depth} in memory): "
        f"{kernel_seconds(args.queries, args.depth, args.seed):.3f} s"
    )
    if args.stream_queries:
        sq, sr = generate(args.stream_queries, args.stream_depth, args.seed)
        big = run_peer("ragaudit", sq, sr, per_query=False)
        index = run_peer("qrels_only", sq, sr, per_query=False)
        print(
            f"streaming: {args.stream_queries:,} queries x {args.stream_depth} results "
            f"({sr.stat().st_size / 2**20:.0f} MB run, {sq.stat().st_size / 2**20:.0f} MB qrels): "
            f"{big['times'][0]:.1f} s, peak RSS {big['peak_mb']:.0f} MB "
            f"(the qrels index alone: {index['times'][0]:.1f} s, {index['peak_mb']:.0f} MB)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
