"""A ragaudit JSON report as MLflow runs: what each run holds, decided without MLflow.

One :class:`MlflowRun` per pipeline: an ``eval`` report is one run, a ``benchmark`` report one per
pipeline. Params carry the pipeline (name, config and its hash), the dataset and corpus hashes and the
scoring policy; metrics their MLflow-safe names (:func:`mlflow_name`: ``nDCG@10`` -> ``ndcg_at_10``,
MLflow rejects ``@``); tags the report kind, the tenant-isolation state, the gate verdict where the
report has one, and whether a fitted stage was scored in-sample. :mod:`ragaudit.report.mlflow_export` logs them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ragaudit.errors import InputError
from ragaudit.evaluation.bench_in_sample import with_own_bench_in_sample
from ragaudit.evaluation.in_sample_integrity import with_own_in_sample
from ragaudit.report.sections import gate_state, gate_verdict
from ragaudit.verdict import golden_question_isolation

PARAM_LIMIT = 6000
"""MLflow's longest param value; a longer one (a big pipeline config) is logged as an artifact only."""


def mlflow_name(metric: str) -> str:
    """``nDCG@10`` -> ``ndcg_at_10``, ``MRR`` -> ``mrr``: lower case, ``@`` as ``_at_``, and anything
    MLflow does not accept in a key (letters, digits, ``_ - . / space``) as ``_``."""
    return re.sub(r"[^a-z0-9_\-./ ]", "_", metric.lower().replace("@", "_at_"))


@dataclass
class MlflowRun:
    """What one MLflow run records."""

    name: str
    params: dict[str, str] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    per_case: list[dict[str, Any]] = field(default_factory=list)
    json_artifacts: dict[str, Any] = field(default_factory=dict)


def runs_of(report: Mapping[str, Any], where: str = "report") -> list[MlflowRun]:
    """The runs of ``report`` (kind ``eval`` or ``benchmark``); any other kind is an :class:`InputError`."""
    kind = str(report.get("kind", "eval"))
    shared = _shared_params(report)
    if kind == "eval":
        return [_eval_run(report, shared)]
    if kind == "benchmark":
        report = with_own_bench_in_sample(report)  # deleted or edited marks: its records say them
        return [_bench_run(report, p, shared) for p in report.get("pipelines", [])]
    raise InputError(
        where,
        None,
        f"a {kind!r} report has no pipeline runs to export",
        "export an eval report (ragaudit eval --out) or a benchmark report (ragaudit bench --out)",
    )


def _shared_params(report: Mapping[str, Any]) -> dict[str, str]:
    params: dict[str, str] = {"ragaudit.kind": str(report.get("kind", "eval"))}
    dataset, corpus = report.get("dataset"), report.get("corpus")
    if isinstance(dataset, Mapping):
        params.update(_flat("dataset", dataset, ("path", "sha256", "cases", "format")))
    if isinstance(corpus, Mapping):
        params.update(_flat("corpus", corpus, ("path", "sha256", "documents")))
    provenance = report.get("provenance")
    if isinstance(provenance, Mapping):  # a benchmark report's hashes live here only
        for section in ("dataset", "corpus"):
            digest = provenance.get(f"{section}_sha256")
            if digest and f"{section}.sha256" not in params:
                params[f"{section}.sha256"] = str(digest)
    policy = report.get("policy")
    if isinstance(policy, Mapping):
        params.update({f"policy.{k}": _text(v) for k, v in policy.items()})
    if report.get("ragaudit_version"):
        params["ragaudit.version"] = str(report["ragaudit_version"])
    return params


def _eval_run(report: Mapping[str, Any], shared: dict[str, str]) -> MlflowRun:
    pipeline = report.get("pipeline")
    named = pipeline.get("name") if isinstance(pipeline, Mapping) else None
    name = str(named) if named else _run_name(report)
    run = MlflowRun(name, params=dict(shared), per_case=list(report.get("per_case", [])))
    run.params["pipeline.name"] = name
    if isinstance(pipeline, Mapping):
        run.params.update(_flat("pipeline", pipeline, ("config_sha256", "chunks")))
        _config(run, pipeline.get("config"))
    source = report.get("source")
    if isinstance(source, Mapping):
        run.params.update({f"source.{k}": _text(v) for k, v in source.items()})
    run.metrics = _metrics(report.get("metrics"))
    counts = report.get("counts")
    if isinstance(counts, Mapping):
        run.metrics.update({f"cases_{k}": float(v) for k, v in counts.items() if _number(v)})
    security = report.get("security")
    isolation = security.get("isolation") if isinstance(security, Mapping) else None
    _verdict_tags(run, isolation, report.get("gate"))
    _fitted_tag(run, with_own_in_sample(report).get("in_sample"))  # a deleted section: its records say it
    return run


def _bench_run(report: Mapping[str, Any], pipeline: Mapping[str, Any], shared: dict[str, str]) -> MlflowRun:
    name = str(pipeline.get("name"))
    run = MlflowRun(name, params={**shared, "pipeline.name": name})
    if report.get("baseline"):
        run.params["benchmark.baseline"] = str(report["baseline"])
    run.metrics = _metrics(pipeline.get("metrics"))
    if _number(pipeline.get("index_build_seconds")):
        run.metrics["index_build_seconds"] = float(pipeline["index_build_seconds"])
    counts = pipeline.get("counts")
    if isinstance(counts, Mapping):
        run.metrics.update({f"cases_{k}": float(v) for k, v in counts.items() if _number(v)})
    _verdict_tags(run, pipeline.get("isolation"), report.get("gate"))
    _fitted_tag(run, pipeline.get("in_sample") or _named_in_sample(report, name))
    return run


def _named_in_sample(report: Mapping[str, Any], name: str) -> Mapping[str, Any] | None:
    """A benchmark written before each pipeline carried its own ``in_sample``: the report-level section
    when it names ``name`` (in ``systems``, else ``system``)."""
    section = report.get("in_sample")
    if not isinstance(section, Mapping):
        return None
    systems = section.get("systems")
    named = systems if isinstance(systems, list) else [section.get("system")]
    return section if f"pipeline {name}" in named else None


def _fitted_tag(run: MlflowRun, section: Any) -> None:
    """``ragaudit.in_sample``: ``in_sample`` (a fitted stage scored on cases it was fitted on: the
    figures flatter it), ``held_out`` or ``unknown``; absent when the pipeline has no fitted stage."""
    if isinstance(section, Mapping) and section.get("state"):
        run.tags["ragaudit.in_sample"] = str(section["state"])


def _verdict_tags(run: MlflowRun, isolation: Any, gate: Any) -> None:
    verdict = golden_question_isolation(isolation)  # a recorded pass of golden questions earns nothing
    run.tags["ragaudit.isolation"] = verdict.state if verdict is not None else "not_verified"
    gates = gate_verdict(gate) if isinstance(gate, Mapping) else None
    if isinstance(gate, Mapping) and gates is not None:  # earned from its gates, as the pages show it
        run.tags["ragaudit.gate"] = gate_state(gate, *gates)


def _config(run: MlflowRun, config: Any) -> None:
    if config is None:
        return
    run.json_artifacts["pipeline.json"] = config
    text = json.dumps(config, sort_keys=True)
    if len(text) <= PARAM_LIMIT:
        run.params["pipeline.config"] = text


def _metrics(metrics: Any) -> dict[str, float]:
    if not isinstance(metrics, Mapping):
        return {}
    return {mlflow_name(k): float(v) for k, v in metrics.items() if _number(v)}


def _flat(prefix: str, section: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, str]:
    return {f"{prefix}.{k}": _text(section[k]) for k in keys if section.get(k) is not None}


def _text(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return text[:PARAM_LIMIT]


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _run_name(report: Mapping[str, Any]) -> str:
    run = report.get("run")
    return str(run.get("name")) if isinstance(run, Mapping) and run.get("name") else "ragaudit"
