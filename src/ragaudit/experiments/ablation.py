"""Ablation: what each pipeline component adds, measured two ways, with paired significance.

Components are *toggles* over one base configuration, the full pipeline:

=========  ======================================================================
toggle     switching it off
=========  ======================================================================
rewrite    drops the ``[rewrite]`` table
rerank     drops the ``[rerank]`` table
hybrid     a hybrid retriever becomes its first (remaining) component
bm25       removes the bm25 component(s) of a hybrid retriever
dense      removes the dense component(s) of a hybrid retriever
=========  ======================================================================

A hybrid retriever left with one component becomes that component; fusion weights follow the
components they belong to. The *full* variant has every toggle on, the *bare* one every toggle off;
anything not toggled is held constant. For each toggle ``t``:

- remove-one: ``gain = metric(full) - metric(full-minus-t)``, what ``t`` adds on top of everything else;
- add-one:    ``gain = metric(bare-plus-t) - metric(bare)``, what ``t`` adds on its own.

The two differ when components interact (a reranker over a weak first stage has more to fix). Each
gain is a paired comparison from :func:`ragaudit.evaluation.compare.compare_pair` (randomization test,
bootstrap CI, win/tie/loss) with *baseline* = the variant without ``t`` and *system* = the variant
with it, so ``delta`` is the gain. The p-values of the whole table (both analyses, every toggle and
metric) are Holm-corrected together.

Invariants (the lesson's): every variant is scored on the same case ids, each case under the same
tenant, the same answerable cases, the same k, dataset and policy. :func:`check_invariants` verifies
them on the evaluated reports and refuses a table that breaks them. Variants whose configurations are
identical (with one toggle, full-minus-t *is* bare) are evaluated once; all variants share one
:class:`~ragaudit.pipelines.build.ComponentCache`, so an index is built once. Each variant answers
one warm-up query before its timed run, so a model loaded on first use is not counted as latency.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from ragaudit.artifacts.envelope import envelope, utc_timestamp, write_artifact
from ragaudit.artifacts.in_sample import first_in_sample
from ragaudit.corpus.loading import Corpus
from ragaudit.data.schema import Dataset
from ragaudit.errors import InputError
from ragaudit.evaluation.compare import Comparison, LoadedReport, compare_pair
from ragaudit.evaluation.live import RunOptions
from ragaudit.experiments.benchmark import CellInputs, PipelineOutcome, run_cells
from ragaudit.metrics.names import MetricSpec
from ragaudit.metrics.policy import Policy
from ragaudit.pipelines.build import ComponentCache
from ragaudit.pipelines.config import PipelineConfig, StageConfig
from ragaudit.runner.executor import Executor
from ragaudit.stats.correction import holm_bonferroni

TOGGLES: dict[str, str] = {
    "rewrite": "[rewrite] table (query rewriting)",
    "rerank": "[rerank] table (second-stage reranking)",
    "hybrid": "hybrid retriever",
    "bm25": "bm25 component in a hybrid retriever",
    "dense": "dense component in a hybrid retriever",
}
COMPONENTS = ("bm25", "dense")
Analysis = Literal["remove-one", "add-one"]


def _present(base: PipelineConfig, toggle: str) -> bool:
    if toggle == "rewrite":
        return base.rewrite is not None
    if toggle == "rerank":
        return base.rerank is not None
    if base.retriever.type != "hybrid":
        return False
    return toggle == "hybrid" or any(c.type == toggle for c in base.retriever.components)


def _needs_hybrid(base: PipelineConfig) -> bool:
    """Whether the rerank stage reads the bm25 + dense hybrid's own lists (the learned fusion stage)."""
    return base.rerank is not None and base.rerank.type == "learned"


def applicable_toggles(base: PipelineConfig) -> tuple[str, ...]:
    """The default toggles of ``base``: rewrite, rerank and hybrid, where the configuration has them
    (not the hybrid under a learned rerank stage, which cannot run without it)."""
    defaults = ("rewrite", "rerank") if _needs_hybrid(base) else ("rewrite", "rerank", "hybrid")
    return tuple(t for t in defaults if _present(base, t))


def _first_stage_without(stage: StageConfig, off: Set[str], where: str) -> StageConfig:
    if stage.type != "hybrid":
        return stage
    keep = [i for i, c in enumerate(stage.components) if c.type not in off]
    if "hybrid" in off:
        keep = keep[:1]
    if not keep:
        removed = ", ".join(sorted(off & set(COMPONENTS)))
        raise InputError(
            where,
            None,
            f"switching off {removed} leaves the bare pipeline without a first-stage retriever",
            "toggle at most all but one of the hybrid's components",
        )
    if len(keep) == 1:
        return stage.components[keep[0]]
    params = dict(stage.params)
    weights = params.get("weights")
    if isinstance(weights, Sequence) and len(weights) == len(stage.components):
        params["weights"] = tuple(weights[i] for i in keep)
    return StageConfig(stage.type, MappingProxyType(params), tuple(stage.components[i] for i in keep))


def variant_config(
    base: PipelineConfig, toggles: Sequence[str], on: Set[str], name: str, where: str = "--config"
) -> PipelineConfig:
    """``base`` with every toggle of ``toggles`` that is not in ``on`` switched off (see the module table)."""
    off = set(toggles) - set(on)
    return PipelineConfig(
        name=name,
        retriever=_first_stage_without(base.retriever, off, where),
        chunking=base.chunking,
        rerank=None if "rerank" in off else base.rerank,
        rewrite=None if "rewrite" in off else base.rewrite,
    )


def check_toggles(base: PipelineConfig, toggles: Sequence[str], where: str = "--config") -> tuple[str, ...]:
    """The toggles (order kept, repeats dropped), each known and present in ``base``; else an InputError."""
    names = tuple(dict.fromkeys(t.strip().lower() for t in toggles if t.strip()))
    if not names:
        raise InputError(
            "--toggle",
            None,
            f"nothing to ablate: the pipeline {base.name!r} has no rewrite, rerank or hybrid stage",
            f"name the components to toggle, e.g. --toggle rerank (valid: {', '.join(TOGGLES)})",
        )
    for name in names:
        if name not in TOGGLES:
            raise InputError(
                "--toggle", None, f"unknown toggle {name!r}", f"use one of: {', '.join(TOGGLES)}"
            )
        if not _present(base, name):
            fix = (
                f"add a [{name}] table to the configuration, or drop --toggle {name}"
                if name in ("rewrite", "rerank")
                else f'use a hybrid retriever (components = [{{ type = "bm25" }}, {{ type = "dense" }}]) '
                f"or drop --toggle {name}"
            )
            raise InputError(where, None, f"--toggle {name}: the pipeline has no {TOGGLES[name]}", fix)
        if name in ("hybrid", *COMPONENTS) and _needs_hybrid(base):
            raise InputError(
                where,
                None,
                f"--toggle {name}: the learned rerank stage reads the bm25 + dense hybrid's lists, so no "
                "variant can keep it without the hybrid",
                "toggle rerank (and rewrite) only, or ablate the hybrid in a pipeline without the learned stage",
            )
    variant_config(base, names, frozenset(), "bare", where)  # the bare pipeline must still retrieve
    return names


@dataclass(frozen=True)
class Variant:
    """One configuration of the ablation: which toggles are on, and the resulting pipeline."""

    name: str
    on: tuple[str, ...]
    config: PipelineConfig
    same_as: str | None = None
    """An earlier variant with the identical configuration (this one is not evaluated again)."""


def plan_variants(base: PipelineConfig, toggles: Sequence[str], where: str = "--config") -> list[Variant]:
    """full, full-minus-t for each toggle, bare, bare-plus-t for each toggle (in that order)."""
    wanted: list[tuple[str, tuple[str, ...]]] = [("full", tuple(toggles))]
    wanted += [(f"full-minus-{t}", tuple(x for x in toggles if x != t)) for t in toggles]
    wanted += [("bare", ())]
    wanted += [(f"bare-plus-{t}", (t,)) for t in toggles]
    first_by_sha: dict[str, str] = {}
    variants: list[Variant] = []
    for name, on in wanted:
        config = variant_config(base, toggles, set(on), name, where)
        sha = config.sha256()
        variants.append(Variant(name, on, config, first_by_sha.get(sha)))
        first_by_sha.setdefault(sha, name)
    return variants


def _facts(report: Mapping[str, Any]) -> dict[str, Any]:
    cases = list(report.get("per_case", []))
    return {
        "dataset": report.get("dataset", {}).get("sha256"),
        "policy": report.get("policy"),
        "case ids": sorted(str(c["id"]) for c in cases),
        "tenants": {str(c["id"]): c.get("tenant_id") for c in cases},
        "answerable cases": sorted(str(c["id"]) for c in cases if c.get("answerable", True)),
        "top_k": report.get("retrieval", {}).get("top_k"),
    }


def _difference(key: str, a: Any, b: Any) -> str:
    if key in ("case ids", "answerable cases"):
        only_a, only_b = sorted(set(a) - set(b)), sorted(set(b) - set(a))
        return f"{len(only_a)} only in one, {len(only_b)} only in the other, e.g. {(only_a + only_b)[:3]}"
    if key == "tenants":
        moved = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
        return f"e.g. case {moved[0]!r}: {a.get(moved[0])!r} vs {b.get(moved[0])!r}"
    return f"{a!r} vs {b!r}"


def check_invariants(reports: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Verify that eval reports (``{variant: report dict}``) share the dataset, policy, case ids, each
    case's tenant, the answerable cases and top_k; raise :class:`InputError` naming the first difference.
    Returns what was checked and the shared values."""
    if not reports:
        raise ValueError("no reports to check")
    names = list(reports)
    first = _facts(reports[names[0]])
    for name in names[1:]:
        other = _facts(reports[name])
        for key, value in first.items():
            if other[key] != value:
                raise InputError(
                    f"variant {name}",
                    None,
                    f"{key} differ from variant {names[0]}'s ({_difference(key, value, other[key])})",
                    "an ablation holds the cases, tenants, k, dataset and policy constant: "
                    "evaluate every variant on the same golden set with the same --top-k",
                )
    return {
        "checked": list(first),
        "same_for_every_variant": True,
        "variants": len(names),
        "cases": len(first["case ids"]),
        "answerable": len(first["answerable cases"]),
        "tenants": sorted({t or "" for t in first["tenants"].values()}),
        "top_k": first["top_k"],
        "dataset_sha256": first["dataset"],
    }


@dataclass(frozen=True)
class Gain:
    """The paired comparison of a variant without a toggle (baseline) and with it (system)."""

    toggle: str
    analysis: Analysis
    comparison: Comparison

    def to_json(self) -> dict[str, Any]:
        return {"toggle": self.toggle, "analysis": self.analysis, **self.comparison.to_json()}


@dataclass
class AblationResult:
    base: PipelineConfig
    toggles: tuple[str, ...]
    variants: list[Variant]
    outcomes: dict[str, PipelineOutcome]
    """Every variant's outcome by variant name (identical configurations share one)."""
    gains: list[Gain]
    invariants: dict[str, Any]
    metrics: list[str]
    alpha: float
    resamples: int
    seed: int
    context_k: int
    created_at: str = field(default_factory=utc_timestamp)
    executor: dict[str, Any] | None = None
    """Where the variants ran (``--executor ray``: the cluster); ``None`` for a local run."""

    def to_dict(self) -> dict[str, Any]:
        first = self.outcomes[self.variants[0].name].result
        full_pipeline = first.context.get("pipeline")
        context = {
            **first.context,
            "pipeline": {
                **(full_pipeline if isinstance(full_pipeline, Mapping) else {}),
                "name": self.base.name,
                "config_sha256": self.base.sha256(),
            },
            "executor": self.executor,
        }
        return {
            **envelope(
                "ablation",
                created_at=self.created_at,
                dataset=first.dataset,
                policy=first.policy.to_dict(),
                context=context,
            ),
            "dataset": first.dataset,
            "policy": first.policy.to_dict(),
            "base": self.base.to_dict(),
            "base_sha256": self.base.sha256(),
            "toggles": list(self.toggles),
            "invariants": self.invariants,
            "metrics": self.metrics,
            "alpha": self.alpha,
            "correction": "holm-bonferroni",
            "test": "paired randomization (sign-flip)",
            "n_resamples": self.resamples,
            "seed": self.seed,
            "context_k": self.context_k,
            "gain_definition": "delta = metric(with toggle) - metric(without); remove-one: full vs "
            "full-minus-t, add-one: bare-plus-t vs bare",
            "variants": [self._variant_json(v) for v in self.variants],
            "gains": [g.to_json() for g in self.gains],
            **first_in_sample(
                (f"variant {v.name}", self.outcomes[v.name].result.context) for v in self.variants
            ),
        }

    def _variant_json(self, v: Variant) -> dict[str, Any]:
        o = self.outcomes[v.name]
        return {
            "name": v.name,
            "on": list(v.on),
            "off": [t for t in self.toggles if t not in v.on],
            "same_as": v.same_as,
            "config": v.config.to_dict(),
            "config_sha256": v.config.sha256(),
            "metrics": o.result.metrics,
            "latency_ms": o.result.latency(),
            "index_build_seconds": round(o.build_seconds, 3),
            "context_tokens": o.context_tokens,
            "counts": o.result.counts.__dict__,
            "leaks": len(o.result.leaks()),
            "isolation": o.result.tenant_isolation().to_json(),
        }

    def write_json(self, path: str | Path) -> None:
        """The artifact as strict JSON (an undefined value, NaN, is written as ``null``)."""
        write_artifact(self.to_dict(), path)


def _gains(
    toggles: Sequence[str],
    loaded: Mapping[str, LoadedReport],
    metrics: Sequence[str],
    *,
    alpha: float,
    resamples: int,
    seed: int,
) -> list[Gain]:
    pairs: list[tuple[str, Analysis, str, str]] = []
    for t in toggles:
        pairs.append((t, "remove-one", f"full-minus-{t}", "full"))
        pairs.append((t, "add-one", "bare", f"bare-plus-{t}"))
    rows = [
        (
            t,
            analysis,
            compare_pair(
                loaded[without],
                loaded[with_],
                m,
                alpha=alpha,
                n_resamples=resamples,
                seed=seed,
                family=len(pairs) * len(metrics),
            ),
        )
        for t, analysis, without, with_ in pairs
        for m in metrics
    ]
    corrected = holm_bonferroni([c.p_value for _, _, c in rows])
    return [
        Gain(t, analysis, replace(c, p_value_corrected=p, significant=bool(not math.isnan(p) and p < alpha)))
        for (t, analysis, c), p in zip(rows, corrected, strict=True)
    ]


async def run_ablation(
    dataset: Dataset,
    corpus: Corpus,
    base: PipelineConfig,
    toggles: Sequence[str],
    specs: tuple[MetricSpec, ...],
    policy: Policy,
    options: RunOptions,
    *,
    context_k: int = 5,
    alpha: float = 0.05,
    resamples: int = 10_000,
    seed: int = 0,
    report_dir: str | Path | None = None,
    qdrant_url: str | None = None,
    where: str = "--config",
    executor: Executor | None = None,
) -> AblationResult:
    """Evaluate every distinct variant of ``base`` (one shared component cache), verify the invariants,
    and test each toggle's remove-one and add-one gain. ``report_dir`` receives one eval report per
    evaluated variant and ``ablation.json``. ``executor`` runs the variants (default: one after
    another in this process; on Ray one task each, see
    :func:`~ragaudit.experiments.benchmark.run_cells`)."""
    names = check_toggles(base, toggles, where)
    variants = plan_variants(base, names, where)
    evaluated = [v for v in variants if v.same_as is None]
    inputs = CellInputs(dataset, corpus, specs, policy, options, ComponentCache(), context_k, qdrant_url)
    results, provenance = await run_cells([v.config for v in evaluated], inputs, executor)
    by_config: dict[str, PipelineOutcome] = {v.name: o for v, o in zip(evaluated, results, strict=True)}
    outcomes = {v.name: by_config[v.same_as or v.name] for v in variants}
    reports = {v.name: by_config[v.name].result.to_dict() for v in evaluated}
    invariants = check_invariants(reports)
    loaded = {v.name: LoadedReport(v.name, f"<{v.name}>", reports[v.same_as or v.name]) for v in variants}
    metrics = [s.name for s in specs]
    gains = _gains(names, loaded, metrics, alpha=alpha, resamples=resamples, seed=seed)
    result = AblationResult(
        base, names, variants, outcomes, gains, invariants, metrics, alpha, resamples, seed, context_k
    )
    result.executor = provenance
    if report_dir is not None:
        for v in evaluated:
            outcomes[v.name].result.write_json(Path(report_dir) / f"{v.name}.json")
        result.write_json(Path(report_dir) / "ablation.json")
    return result
