"""Every pipeline preset and every fusion on the shared BEIR sets, with paired significance.

Two tables per set (``--sets``, default msmarco and dbpedia; business-reports cannot separate systems
and is not used for quality):

**Fusion** (item 4 of issue 13): bm25, dense on each embedding backend (``onnx-int8``; ``torch`` when
sentence-transformers is installed), hybrid RRF, hybrid convex with its weight chosen by
cross-validation, and learned fusion (cross-validated), all on the same answerable cases, with the
paired randomization test of each against hybrid RRF (Holm-corrected over the rows of the set). The
cross-validated rows come from :func:`ragaudit.experiments.fusion_fit.cross_validate`, exactly what
``ragaudit fit-fusion --dataset DIR --corpus DIR --folds 5 --gain linear`` estimates: 5 folds by case,
each case scored by the convex weight and the model chosen or fitted without it; bm25, dense and RRF
are the hybrid's own sub-lists and fused list (100 deep), so every row ranks the same candidates.

**Presets**: ``bm25``, ``dense``, ``hybrid`` through :func:`ragaudit.experiments.benchmark.run_benchmark`
with the BEIR folder as both dataset and corpus (what ``ragaudit bench --dataset DIR --corpus DIR
--metrics nDCG@10,R@100 --gain linear`` reports): nDCG@10 (linear gain), R@100, index build seconds,
queries/s (a second pass: ``prepare_pipeline`` then ``run_cases`` alone timed, concurrency 8, depth
100), the nDCG@10 of bm25s run standalone (``bench/bm25_quality.py``) for the ``bm25`` row, and each
preset minus the best single retriever with its Holm-corrected paired randomization p-value.
(``hybrid-rerank`` needs a model fitted on the set, so it is the *learned fusion (CV)* row here.)

``--grid`` also runs a small grid of fusion settings (RRF k and weights; weighted sums with min-max or
z-score normalisation) through ``run_benchmark`` on every set, and prints each setting's nDCG@10 minus
the best single retriever per set, its worst case over the sets, and its pooled difference from the
``hybrid`` preset over every query of every set (paired randomization test, Holm-corrected over the
grid). ``--no-presets`` skips the presets table.

Run: ``.venv/bin/python bench/presets_quality.py [--sets msmarco,dbpedia] [--backends onnx-int8,torch]
[--cache-dir DIR] [--grid] [--fold-seeds 0,1,2,3,4] [--json FILE]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEFAULT_ROOT = Path(os.environ.get("RAGAUDIT_SHARED_DATA", HERE.parents[1] / "shared" / "data")) / "beir"
DEFAULT_CACHE = HERE / "_data" / "dense_cache"
SETS = ("msmarco", "dbpedia")
PRESET_NAMES = ("bm25", "dense", "hybrid")
FUSION_METRICS = "nDCG@10,MRR@10,R@100"
FOLDS = 5
SINGLES = ("bm25", "dense")
METRICS = "nDCG@10,R@100"
DEPTH = 100
CONCURRENCY = 8
PRESET_SUFFIX = " (the hybrid preset)"


@dataclass
class PresetRow:
    name: str
    ndcg: float
    recall: float | None
    build_s: float
    queries_per_s: float | None
    delta: float | None = None
    p_value: float | None = None


@dataclass
class SetReport:
    name: str
    docs: int
    queries: int
    rows: list[PresetRow]
    best_single: str
    bm25s_ndcg: float
    seconds: float
    grid: dict[str, dict[str, float]] = field(default_factory=dict)
    grid_per_case: dict[str, dict[str, float]] = field(default_factory=dict)
    """Each grid setting's nDCG@10 per case id."""
    fusion: list[FusionRow] = field(default_factory=list)
    fusion_cases: int = 0
    convex_weights: list[float] = field(default_factory=list)
    """The dense weight each cross-validation fold chose."""
    fusion_seconds: float = 0.0
    learned_settings: list[str] = field(default_factory=list)
    """The objective and C each fold's inner cross-validation chose for the learned model."""
    seed_rows: list[dict[str, Any]] = field(default_factory=list)
    """Convex and learned against RRF (nDCG@10) under other fold shuffles (``--fold-seeds``)."""


@dataclass
class FusionRow:
    """One system of the fusion table: mean metrics, and nDCG@10 against hybrid RRF."""

    name: str
    metrics: dict[str, float]
    delta: float | None = None
    wins: int | None = None
    losses: int | None = None
    p_value: float | None = None
    p_holm: float | None = None


def _pipeline(name: str, retriever: dict[str, Any]) -> Any:
    from ragaudit.pipelines.config import parse_pipeline

    return parse_pipeline({"name": name, "retriever": retriever}, f"grid:{name}", name)


def grid_configs() -> list[Any]:
    """The fusion settings tried: RRF over k (equal weights), RRF k=60 with unequal weights, and
    weighted sums of min-max or z-score normalised scores over the dense weight (bm25 gets the rest).

    No depth axis: ``HybridRetriever`` asks each component for ``max(depth, top_k)`` candidates, so at
    the depth-100 run that R@100 needs, every depth <= 100 gives the same lists."""
    components = [{"type": "bm25"}, {"type": "dense"}]
    configs = [
        _pipeline(
            f"rrf k={k}" + (PRESET_SUFFIX if k == 60 else ""),
            {"type": "hybrid", "method": "rrf", "rrf_k": k, "components": components},
        )
        for k in (10, 30, 60, 100)
    ]
    for bm25_share, dense_share in ((2, 1), (1, 2), (1, 3), (1, 4)):
        configs.append(
            _pipeline(
                f"rrf k=60 w={bm25_share}:{dense_share}",
                {
                    "type": "hybrid",
                    "method": "rrf",
                    "weights": [float(bm25_share), float(dense_share)],
                    "components": components,
                },
            )
        )
    for normalize in ("minmax", "zscore"):
        for dense_weight in (0.3, 0.5, 0.6, 0.7, 0.8, 0.9):
            configs.append(
                _pipeline(
                    f"{normalize} dense={dense_weight:g}",
                    {
                        "type": "hybrid",
                        "method": "weighted",
                        "normalize": normalize,
                        "weights": [round(1 - dense_weight, 2), dense_weight],
                        "components": components,
                    },
                )
            )
    return configs


async def _speed(dataset: Any, corpus: Any, config: Any) -> float:
    """Queries/s of ``run_cases`` over a freshly prepared pipeline (build time excluded)."""
    from ragaudit.pipelines.build import ComponentCache
    from ragaudit.pipelines.prepare import prepare_pipeline
    from ragaudit.runner.execute import run_cases

    prepared = prepare_pipeline(dataset, corpus, config, cache=ComponentCache())
    started = time.perf_counter()
    await run_cases(
        prepared.pipeline.retriever,
        prepared.dataset.cases,
        DEPTH,
        concurrency=CONCURRENCY,
        name=config.name,
        progress=False,
    )
    return len(prepared.dataset.cases) / (time.perf_counter() - started)


def _comparisons(comparison: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """``{(system, metric): comparison}`` from a ``compare_reports`` result."""
    return {(c["system"], c["metric"]): c for c in comparison.get("comparisons", [])}


def _against(outcomes: Sequence[Any], baseline: str, resamples: int) -> dict[tuple[str, str], dict[str, Any]]:
    """Paired comparisons (Holm-corrected over the table) of every outcome against ``baseline``."""
    from ragaudit.evaluation.compare import LoadedReport, compare_reports

    loaded = {o.name: LoadedReport(o.name, f"<{o.name}>", o.result.to_dict()) for o in outcomes}
    others = [loaded[n] for n in loaded if n != baseline]
    return _comparisons(compare_reports([loaded[baseline], *others], loaded[baseline], n_resamples=resamples))


@dataclass
class _Set:
    """One BEIR folder loaded once, with the scoring every run of it shares."""

    folder: Path
    dataset: Any
    corpus: Any
    policy: Any
    resamples: int

    async def bench(
        self, configs: Sequence[Any], metrics: str = METRICS, depth: int = DEPTH, **kw: Any
    ) -> Any:
        from ragaudit.evaluation.live import RunOptions
        from ragaudit.experiments.benchmark import run_benchmark
        from ragaudit.metrics.names import parse_metrics

        options = RunOptions(top_k=depth, concurrency=CONCURRENCY, progress=False)
        specs = parse_metrics(metrics)
        kw.setdefault("per_query_latency", False)  # quality here; queries/s is measured in its own pass
        return await run_benchmark(
            self.dataset, self.corpus, configs, specs, self.policy, options, resamples=self.resamples, **kw
        )


def _preset_rows(data: _Set, presets: Sequence[str]) -> tuple[list[PresetRow], str, Any]:
    """Every preset through one ``run_benchmark``; the best single retriever; the benchmark result."""
    from ragaudit.pipelines.config import preset

    bench = asyncio.run(data.bench([preset(name) for name in presets]))
    ndcg = {o.name: o.result.metrics["nDCG@10"] for o in bench.outcomes}
    singles = [n for n in SINGLES if n in ndcg] or list(ndcg)
    best = max(singles, key=lambda n: ndcg[n])
    compared = _against(bench.outcomes, best, data.resamples) if len(bench.outcomes) > 1 else {}
    rows = []
    for o in bench.outcomes:
        c = compared.get((o.name, "nDCG@10"))
        speed = asyncio.run(_speed(data.dataset, data.corpus, preset(o.name)))
        rows.append(
            PresetRow(
                o.name,
                o.result.metrics["nDCG@10"],
                o.result.metrics["R@100"],
                o.build_seconds,
                speed,
                c["delta"] if c else None,
                c["p_value_corrected"] if c else None,
            )
        )
    return rows, best, bench


def _grid(data: _Set, best: str) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, float]]]:
    """Every grid setting with the two single retrievers, compared against the best of them; and each
    setting's per-case nDCG@10."""
    from ragaudit.pipelines.config import preset

    result = asyncio.run(data.bench([preset(n) for n in SINGLES] + grid_configs(), baseline=best))
    base_ndcg = max(o.result.metrics["nDCG@10"] for o in result.outcomes if o.name in SINGLES)
    compared = _comparisons(result.comparison)
    settings = [o for o in result.outcomes if o.name not in SINGLES]
    summary = {
        o.name: {
            "nDCG@10": o.result.metrics["nDCG@10"],
            "R@100": o.result.metrics["R@100"],
            "delta": o.result.metrics["nDCG@10"] - base_ndcg,
            "p_value": compared[(o.name, "nDCG@10")]["p_value"],
        }
        for o in settings
    }
    return summary, {o.name: o.result.per_case_values("nDCG@10") for o in settings}


def _dense_rankings(data: _Set, backend: str, cases: Sequence[Any], depth: int) -> list[list[str]]:
    """The dense retriever's ranking of each case on ``backend`` (its own index, same corpus)."""
    from ragaudit.pipelines.config import parse_pipeline
    from ragaudit.pipelines.prepare import prepare_pipeline

    config = parse_pipeline({"name": f"dense-{backend}", "retriever": {"type": "dense", "backend": backend}})
    retriever = prepare_pipeline(data.dataset, data.corpus, config).pipeline.retriever

    async def one(case: Any) -> list[str]:
        tenant = case.case.tenant_id
        return [
            c["chunk_id"]
            for c in await retriever.search(tenant_id=tenant, query=case.case.query, top_k=depth)
        ]

    async def every() -> list[list[str]]:
        return [await one(c) for c in cases]

    return asyncio.run(every())


def seed_sensitivity(
    collected: Any, specs: Sequence[Any], data: _Set, folds: int, seeds: Sequence[int]
) -> list[dict[str, Any]]:
    """Convex and learned against RRF (nDCG@10, uncorrected p) when the folds are shuffled with each seed."""
    from ragaudit.experiments.fusion_fit import cross_validate
    from ragaudit.stats.paired import randomization_test

    rows = []
    for seed in seeds:
        cv = cross_validate(
            collected, specs, data.policy, folds=folds, candidates=DEPTH, depth=DEPTH,
            seed=seed, resamples=data.resamples,
        )  # fmt: skip
        base = cv.per_case["rrf"]["nDCG@10"]
        for method in ("convex", "learned"):
            mine = cv.per_case[method]["nDCG@10"]
            diffs = [m - b for m, b in zip(mine, base, strict=True)]
            rows.append(
                {
                    "seed": seed,
                    "method": method,
                    "delta": sum(diffs) / len(diffs),
                    "wins": sum(d > 0 for d in diffs),
                    "losses": sum(d < 0 for d in diffs),
                    "p_value": randomization_test(base, mine, n_resamples=data.resamples),
                }
            )
    return rows


def fusion_rows(
    data: _Set, backends: Sequence[str], folds: int, seeds: Sequence[int] = ()
) -> tuple[list[FusionRow], int, list[float], list[str], list[dict[str, Any]]]:
    """The fusion table of one set (module docstring), the number of cases, each fold's convex weight
    and learned setting, and the fold-seed sensitivity rows for ``seeds``."""
    from ragaudit.experiments.fusion_fit import collect, cross_validate, score_rankings
    from ragaudit.metrics.names import parse_metrics
    from ragaudit.pipelines.config import preset
    from ragaudit.pipelines.prepare import prepare_pipeline
    from ragaudit.stats.correction import holm_bonferroni
    from ragaudit.stats.paired import randomization_test

    specs = parse_metrics(FUSION_METRICS)
    prepared = prepare_pipeline(data.dataset, data.corpus, preset("hybrid"))
    collected = asyncio.run(
        collect(
            prepared.dataset,
            prepared.pipeline.retriever,
            candidates=DEPTH,
            depth=DEPTH,
            default_tenant=None,
            threshold=data.policy.relevance_threshold,
        )
    )
    cases = collected.cases
    cv = cross_validate(
        collected, specs, data.policy, folds=folds, candidates=DEPTH, depth=DEPTH, resamples=data.resamples
    )

    def scored(rankings: list[list[str]]) -> dict[str, list[float]]:
        return {k: v.tolist() for k, v in score_rankings(cases, rankings, specs, data.policy).items()}

    systems: dict[str, dict[str, list[float]]] = {
        "bm25": scored([[d for d, _ in c.lists[0][:DEPTH]] for c in cases]),
    }
    for backend in backends:
        if backend == "onnx-int8":  # the hybrid's own dense list
            systems["dense (onnx-int8)"] = scored([[d for d, _ in c.lists[1][:DEPTH]] for c in cases])
        else:
            systems[f"dense ({backend})"] = scored(_dense_rankings(data, backend, cases, DEPTH))
    systems["hybrid RRF"] = cv.per_case["rrf"]
    systems["hybrid convex (CV weight)"] = cv.per_case["convex"]
    systems["learned fusion (CV)"] = cv.per_case["learned"]
    base = systems["hybrid RRF"]["nDCG@10"]
    others = [n for n in systems if n != "hybrid RRF"]
    p_values = [randomization_test(base, systems[n]["nDCG@10"], n_resamples=data.resamples) for n in others]
    holm = dict(zip(others, holm_bonferroni(p_values), strict=True))
    raw_p = dict(zip(others, p_values, strict=True))
    rows = []
    for name, values in systems.items():
        means = {k: sum(v) / len(v) for k, v in values.items()}
        row = FusionRow(name, means)
        if name in raw_p:
            diffs = [m - b for m, b in zip(values["nDCG@10"], base, strict=True)]
            row.delta = sum(diffs) / len(diffs)
            row.wins, row.losses = sum(d > 0 for d in diffs), sum(d < 0 for d in diffs)
            row.p_value, row.p_holm = raw_p[name], holm[name]
        rows.append(row)
    settings = [f"{f['learned']['objective']} C={f['learned']['C']:g}" for f in cv.folds]
    sensitivity = seed_sensitivity(collected, specs, data, folds, seeds) if seeds else []
    return rows, len(cases), [f["convex_dense_weight"] for f in cv.folds], settings, sensitivity


def _p(value: float | None) -> str:
    return "–" if value is None else ("<0.001" if value < 0.001 else f"{value:.3f}")


def fusion_table(report: SetReport) -> str:
    weights = ", ".join(f"{w:g}" for w in report.convex_weights)
    lines = [
        f"### {report.name}: fusion ({report.docs:,} docs, {report.fusion_cases} answerable queries, "
        f"{len(report.convex_weights)}-fold CV; convex dense weight per fold: {weights}; "
        f"learned objective and C per fold: {', '.join(report.learned_settings)})",
        "",
        "| system | nDCG@10 | MRR@10 | R@100 | Δ nDCG@10 vs hybrid RRF | wins/losses | p | p (Holm) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in report.fusion:
        m = r.metrics
        if r.delta is None:
            tail = "– | – | – | –"
        else:
            tail = f"{r.delta:+.4f} | {r.wins}/{r.losses} | {_p(r.p_value)} | {_p(r.p_holm)}"
        lines.append(f"| {r.name} | {m['nDCG@10']:.4f} | {m['MRR@10']:.4f} | {m['R@100']:.4f} | {tail} |")
    if report.seed_rows:
        lines += [
            "",
            "Fold shuffle (`cross_validate(..., seed=s)` on the same runs), nDCG@10 against hybrid RRF, uncorrected p:",
            "",
            "| seed | convex Δ | wins/losses | p | learned Δ | wins/losses | p |",
            "|---:|---:|---:|---:|---:|---:|---:|",
        ]
        by_seed: dict[int, dict[str, dict[str, Any]]] = {}
        for row in report.seed_rows:
            by_seed.setdefault(row["seed"], {})[row["method"]] = row
        for seed, methods in by_seed.items():
            cells = [
                f"{methods[m]['delta']:+.4f} | {methods[m]['wins']}/{methods[m]['losses']} | {_p(methods[m]['p_value'])}"
                for m in ("convex", "learned")
            ]
            lines.append(f"| {seed} | {' | '.join(cells)} |")
    return "\n".join(lines)


def run_set(
    folder: Path,
    presets: Sequence[str],
    resamples: int,
    with_grid: bool,
    backends: Sequence[str] = ("onnx-int8",),
    folds: int = FOLDS,
    seeds: Sequence[int] = (),
) -> SetReport:
    from bm25_quality import run_set as bm25s_reference
    from ragaudit.corpus.loading import load_corpus
    from ragaudit.data.loading import load_dataset
    from ragaudit.metrics.policy import Policy

    started = time.perf_counter()
    data = _Set(folder, load_dataset(folder), load_corpus(folder), Policy(gain="linear"), resamples)
    rows, best, _ = _preset_rows(data, presets) if presets else ([], "dense", None)
    grid, per_case = _grid(data, best) if with_grid else ({}, {})
    fusion_started = time.perf_counter()
    fusion, fusion_cases, weights, settings, sensitivity = fusion_rows(data, backends, folds, seeds)
    return SetReport(
        folder.name,
        len(data.corpus.documents),
        len(data.dataset.cases),
        rows,
        best,
        bm25s_reference(folder).reference["nDCG@10"] if presets else float("nan"),
        time.perf_counter() - started,
        grid,
        per_case,
        fusion,
        fusion_cases,
        weights,
        time.perf_counter() - fusion_started,
        settings,
        sensitivity,
    )


def _num(value: float | None, digits: int = 4) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def set_table(report: SetReport) -> str:
    lines = [
        f"### {report.name} ({report.docs:,} docs, {report.queries} queries; "
        f"best single retriever: {report.best_single})",
        "",
        "| preset | nDCG@10 | R@100 | build s | queries/s | Δ nDCG@10 vs best single (p, Holm) "
        "| bm25s standalone nDCG@10 |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in report.rows:
        delta = "–" if r.delta is None else f"{r.delta:+.4f}"
        if r.p_value is not None:
            delta += f" (p={r.p_value:.3f})"
        reference = _num(report.bm25s_ndcg) if r.name == "bm25" else ""
        lines.append(
            f"| {r.name} | {_num(r.ndcg)} | {_num(r.recall)} | {_num(r.build_s, 2)} "
            f"| {_num(r.queries_per_s, 0)} | {delta} | {reference} |"
        )
    return "\n".join(lines)


def pooled_against_preset(reports: Sequence[SetReport]) -> dict[str, tuple[float, float]]:
    """Each grid setting against the ``hybrid`` preset's setting over every query of every set:
    ``{setting: (mean nDCG@10 difference, Holm-corrected paired randomization p)}``."""
    from ragaudit.stats.correction import holm_bonferroni
    from ragaudit.stats.paired import randomization_test

    names = list(reports[0].grid_per_case)
    current = next(n for n in names if n.endswith(PRESET_SUFFIX))
    keys = [(r, case) for r in reports for case in sorted(r.grid_per_case[current])]
    base = [r.grid_per_case[current][case] for r, case in keys]
    others = [n for n in names if n != current]
    deltas, p_values = [], []
    for name in others:
        values = [r.grid_per_case[name][case] for r, case in keys]
        deltas.append(sum(v - b for v, b in zip(values, base, strict=True)) / len(keys))
        p_values.append(randomization_test(base, values))
    corrected = holm_bonferroni(p_values)
    return {current: (0.0, 1.0), **dict(zip(others, zip(deltas, corrected, strict=True), strict=True))}


def grid_table(reports: Sequence[SetReport]) -> str:
    """Each setting's nDCG@10 minus the best single retriever, per set, the worst case, and the pooled
    difference from the ``hybrid`` preset."""
    names = list(reports[0].grid)
    pooled = pooled_against_preset(reports)
    queries = sum(len(next(iter(r.grid_per_case.values()))) for r in reports)
    head = " | ".join(f"{r.name} Δ (p)" for r in reports)
    lines = [
        f"| fusion setting | {head} | worst Δ | mean R@100 | pooled Δ vs preset, {queries} queries (p, Holm) |",
        "|---|" + "---:|" * (len(reports) + 3),
    ]
    for name in sorted(names, key=lambda n: -min(r.grid[n]["delta"] for r in reports)):
        cells = [f"{r.grid[name]['delta']:+.4f} ({r.grid[name]['p_value']:.2f})" for r in reports]
        worst = min(r.grid[name]["delta"] for r in reports)
        recall = sum(r.grid[name]["R@100"] for r in reports) / len(reports)
        delta, p = pooled[name]
        lines.append(
            f"| {name} | {' | '.join(cells)} | {worst:+.4f} | {recall:.4f} | {delta:+.4f} (p={p:.2f}) |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT, help="folder holding the BEIR sets")
    parser.add_argument("--sets", default=",".join(SETS), help="comma-separated set names")
    parser.add_argument("--presets", default=",".join(PRESET_NAMES), help="comma-separated presets")
    parser.add_argument("--no-presets", action="store_true", help="skip the presets table")
    parser.add_argument(
        "--backends",
        default=None,
        help="dense backends for the fusion table (default onnx-int8, plus torch when sentence-transformers is installed)",
    )
    parser.add_argument("--folds", type=int, default=FOLDS, help="cross-validation folds (default 5)")
    parser.add_argument(
        "--cache-dir", type=Path, default=DEFAULT_CACHE, help="embedding cache folder (RAGAUDIT_CACHE_DIR)"
    )
    parser.add_argument("--grid", action="store_true", help="also run the fusion-settings grid")
    parser.add_argument(
        "--fold-seeds",
        default="",
        help="also cross-validate with these fold seeds (comma-separated, e.g. 0,1,2,3,4): fold-shuffle sensitivity",
    )
    parser.add_argument("--resamples", type=int, default=10_000, help="randomization-test resamples")
    parser.add_argument("--json", type=Path, help="also write every figure to this JSON file")
    args = parser.parse_args(argv)
    os.environ["RAGAUDIT_CACHE_DIR"] = str(args.cache_dir)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    presets = [] if args.no_presets else [p.strip() for p in args.presets.split(",") if p.strip()]
    if args.backends is None:
        import importlib.util

        torch = importlib.util.find_spec("sentence_transformers") is not None
        args.backends = "onnx-int8,torch" if torch else "onnx-int8"
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    reports: list[SetReport] = []
    for name in args.sets.split(","):
        folder = args.root / name.strip()
        if not (folder / "corpus.jsonl").is_file():
            print(f"skipped {name}: no {folder / 'corpus.jsonl'}", file=sys.stderr)
            continue
        load = os.getloadavg()[0]
        seeds = [int(x) for x in args.fold_seeds.split(",") if x.strip()]
        report = run_set(folder, presets, args.resamples, args.grid, backends, args.folds, seeds)
        reports.append(report)
        print(fusion_table(report))
        print(f"\n(fusion {report.fusion_seconds:.0f} s)\n")
        if presets:
            print(set_table(report))
        print(f"\n({report.seconds:.0f} s; load average {load:.2f} at the start)\n", flush=True)
    if not reports:
        print(f"no BEIR set found under {args.root}", file=sys.stderr)
        return 0
    if args.grid:
        print("### fusion grid: nDCG@10 minus the best single retriever (randomization p, uncorrected)\n")
        print(grid_table(reports))
    if args.json:
        args.json.write_text(
            json.dumps([r.__dict__ for r in reports], default=lambda o: o.__dict__, indent=2)
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
