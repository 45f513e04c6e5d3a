"""Validate ``ragaudit power`` by simulation on the shared BEIR sets.

For each set, the real per-query nDCG@10 differences of two presets (``dense`` minus ``bm25``) form a
population. Shifted to a target mean difference ``delta`` (``d - mean(d) + delta``, keeping the real
shape: skew, ties, zeros), the population is resampled ``n`` queries at a time (with replacement,
``--sims`` times); each resample gets the paired two-sided t-test at alpha 0.05. The share of
resamples that detect the difference (significant, right sign) is compared with the power
:func:`ragaudit.stats.power.paired_power` predicts from the population's spread, and with the number
of cases :func:`~ragaudit.stats.power.cases_needed` says give 80 % power.

Run: ``.venv/bin/python bench/power_sim.py [--beir ../shared/data/beir] [--sets msmarco,dbpedia]``
(embeds the corpora once; the embedding cache is kept in ``--cache``).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
from pathlib import Path

import numpy as np

from ragaudit.stats.power import cases_needed, paired_power, t_quantile

ROOT = Path(__file__).resolve().parents[1]


def per_query_differences(folder: Path, systems: tuple[str, str]) -> np.ndarray:
    from ragaudit.corpus.loading import load_corpus
    from ragaudit.data.loading import load_dataset
    from ragaudit.evaluation.live import RunOptions, evaluate_live
    from ragaudit.metrics.names import parse_metrics
    from ragaudit.metrics.policy import Policy
    from ragaudit.pipelines.build import ComponentCache
    from ragaudit.pipelines.config import resolve_pipeline
    from ragaudit.pipelines.prepare import prepare_pipeline

    dataset = load_dataset(folder)
    corpus = load_corpus(folder)
    specs = parse_metrics("nDCG@10")
    cache = ComponentCache()
    scores = []
    for name in systems:
        prepared = prepare_pipeline(dataset, corpus, resolve_pipeline(name), cache=cache)
        result = asyncio.run(
            evaluate_live(
                prepared.dataset,
                prepared.pipeline.retriever,
                specs,
                Policy(),
                RunOptions(10, progress=False),
                name=name,
            )
        )
        per = {c["id"]: c["metrics"].get("nDCG@10") for c in result.to_dict()["per_case"]}
        scores.append(
            {k: float(v) for k, v in per.items() if isinstance(v, (int, float)) and math.isfinite(v)}
        )
    ids = sorted(set(scores[0]) & set(scores[1]))
    return np.array([scores[1][i] - scores[0][i] for i in ids])


def detection_rate(d: np.ndarray, n: int, sims: int, rng: np.random.Generator, alpha: float = 0.05) -> float:
    sample = d[rng.integers(0, len(d), (sims, n))]
    sd = sample.std(axis=1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = sample.mean(axis=1) / (sd / math.sqrt(n))
    t = np.where(sd == 0, np.sign(sample.mean(axis=1)) * np.inf, t)
    critical = t_quantile(1 - alpha / 2, n - 1)
    return float(np.mean(t > critical))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--beir", default=str(ROOT.parent / "shared" / "data" / "beir"))
    parser.add_argument("--sets", default="msmarco,dbpedia")
    parser.add_argument("--deltas", default="0.05,0.1")
    parser.add_argument("--sizes", default="10,20,40,80,160")
    parser.add_argument("--sims", type=int, default=4000)
    parser.add_argument("--cache", default="/tmp/ragaudit-power-sim-cache")
    args = parser.parse_args()
    os.environ.setdefault("RAGAUDIT_CACHE_DIR", args.cache)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    rng = np.random.default_rng(0)
    print(
        "| set | queries | sd of differences | delta | n | predicted power | simulated detection | cases for 80 % (predicted) | detection at that n |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in args.sets.split(","):
        d = per_query_differences(Path(args.beir) / name, ("bm25", "dense"))
        sd = float(d.std(ddof=0))  # the population resampled from
        for delta in [float(x) for x in args.deltas.split(",")]:
            shifted = d - d.mean() + delta
            need = cases_needed(sd, delta)
            at_need = detection_rate(shifted, need, args.sims, rng)
            for n in [int(x) for x in args.sizes.split(",")]:
                predicted = paired_power(sd, n, delta)
                observed = detection_rate(shifted, n, args.sims, rng)
                print(
                    f"| {name} | {len(d)} | {sd:.3f} | {delta:.2f} | {n} | {predicted:.3f} | {observed:.3f} | {need} | {at_need:.3f} |"
                )
        print(f"| {name} (observed mean difference {d.mean():+.3f}) | | | | | | | | |")


if __name__ == "__main__":
    main()
