"""k-sweep: Recall@k, Precision@k and context tokens for k = 1..K from one run; nothing is re-queried.

A larger k finds more of the relevant set and costs more context. The sweep scores one ranking at
every cut-off, with :func:`~ragaudit.evaluation.evaluate.evaluate` (same policy as any report:
unanswerable cases are kept out of the averages, a case the system did not answer scores 0), and adds
the mean context size:

``tokens@k = mean over answered cases of Σ_{i<=k} count_tokens(content_i)``

(as :func:`ragaudit.experiments.benchmark.context_tokens`: every case the system answered counts,
unanswerable ones included, since their context is sent too; a repeated id costs its tokens again).

Sources:

- an eval report (``ragaudit eval --out``): the ranking is each case's ``retrieved`` list, which a report
  keeps to its deepest metric cut-off; past that depth nothing is known and the sweep refuses. The
  dataset is the report's own (its sha256 is checked). A report from a chunked pipeline names its
  chunking: the labels are projected onto those chunks again, which needs the corpus (the report's own
  or ``--corpus``).
- a run file (TREC or JSONL) with a dataset: complete rankings. JSONL runs may carry each item's
  ``content``.

Contents for the token counts come from the run where it has them, else from the corpus by chunk id
(chunked with the report's or the given chunking). Items with no content anywhere count 0 tokens and
are reported: the figure is then a lower bound.

A non-local executor (``--executor ray``) runs the scoring (every cut-off, the token counts) as one
task on the cluster, after the inputs were read and checked on the driver. Nothing is queried or
embedded, so this is no faster than a local sweep; the result is the same (the report adds
``provenance.executor``).
"""

from __future__ import annotations

import asyncio
import functools
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ragaudit.artifacts.envelope import envelope, utc_timestamp, write_artifact
from ragaudit.corpus.chunkers import chunk_corpus, count_tokens, make_chunker
from ragaudit.corpus.loading import Corpus, load_corpus
from ragaudit.corpus.projection import project_cases
from ragaudit.data.loading import DatasetFormat, load_dataset
from ragaudit.data.run import CaseRun, RankedItem, Run
from ragaudit.data.schema import Dataset
from ragaudit.errors import InputError, MetricNameError
from ragaudit.evaluation.evaluate import evaluate
from ragaudit.metrics.names import parse_metric
from ragaudit.metrics.policy import Policy
from ragaudit.pipelines.config import ChunkingConfig
from ragaudit.runner.executor import Executor, run_once

DEFAULT_MAX_K = 20
DEFAULT_FAMILIES = ("R", "P")


@dataclass
class KSweep:
    """One row per k: the mean of each metric family at k, and the mean context tokens."""

    rows: list[dict[str, Any]]
    families: tuple[str, ...]
    dataset: dict[str, Any]
    policy: Policy
    source: dict[str, Any]
    cases: dict[str, int]
    contents: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    created_at: str = field(default_factory=utc_timestamp)
    executor: dict[str, Any] | None = None
    """Where the sweep ran (``--executor ray``: the cluster); ``None`` for a local run."""
    in_sample: dict[str, Any] | None = None
    """The swept report's ``in_sample`` section (a fitted stage scored on the cases it was fitted on)."""

    @property
    def max_k(self) -> int:
        return len(self.rows)

    def to_dict(self) -> dict[str, Any]:
        pipeline = self.source.get("pipeline")
        return {
            **envelope(
                "k-sweep",
                created_at=self.created_at,
                dataset=self.dataset,
                policy=self.policy.to_dict(),
                context={
                    "pipeline": pipeline if isinstance(pipeline, Mapping) else None,
                    "executor": self.executor,
                },
            ),
            "dataset": self.dataset,
            "policy": self.policy.to_dict(),
            "source": self.source,
            "max_k": self.max_k,
            "families": list(self.families),
            "cases": self.cases,
            "contents": self.contents,
            "notes": self.notes,
            "rows": self.rows,
            **({"in_sample": self.in_sample} if self.in_sample is not None else {}),
        }

    def write_json(self, path: str | Path) -> None:
        """The artifact as strict JSON (an undefined value, NaN, is written as ``null``)."""
        write_artifact(self.to_dict(), path)


def check_families(families: Sequence[str]) -> tuple[str, ...]:
    """Canonical metric families that take a cut-off (``recall`` -> ``R``); MetricNameError otherwise."""
    out: list[str] = []
    for name in families:
        if not name.strip():
            continue
        if "@" in name:
            raise MetricNameError(f"give metric families without a cut-off (got {name!r}); e.g. R,P,nDCG")
        family = parse_metric(f"{name.strip()}@1").family
        if family not in out:
            out.append(family)
    if not out:
        raise MetricNameError("no metric family given; e.g. R,P")
    return tuple(out)


def _token_matrix(
    cases: Sequence[CaseRun], max_k: int, contents: Mapping[str, str] | None
) -> tuple[np.ndarray, int, int]:
    """Tokens of each case's item at each rank (cases x max_k), items counted, items without content."""
    sizes = np.zeros((len(cases), max_k), dtype=np.float64)
    memo: dict[str, int] = {}
    counted = missing = 0
    for row, case in enumerate(cases):
        for col, item in enumerate(case.items[:max_k]):
            counted += 1
            text = item.content if item.content is not None else (contents or {}).get(item.chunk_id)
            if text is None:
                missing += 1
                continue
            if item.content is not None:
                sizes[row, col] = count_tokens(text)
            else:
                if item.chunk_id not in memo:
                    memo[item.chunk_id] = count_tokens(text)
                sizes[row, col] = memo[item.chunk_id]
    return sizes, counted, missing


def sweep(
    dataset: Dataset,
    run: Run,
    max_k: int,
    policy: Policy,
    *,
    families: Sequence[str] = DEFAULT_FAMILIES,
    contents: Mapping[str, str] | None = None,
    source: Mapping[str, Any] | None = None,
    executor: Executor | None = None,
) -> KSweep:
    """Each family at k = 1..``max_k`` and the mean context tokens (see the module docstring).

    ``contents`` maps chunk ids to texts for items the run carries no content for. A non-local
    ``executor`` computes the sweep as one task on its workers, after the arguments were checked
    here (a bad ``max_k`` or family is the same error either way).
    """
    if isinstance(max_k, bool) or max_k <= 0:
        raise InputError("--max-k", None, f"must be a positive integer (got {max_k})", "e.g. --max-k 20")
    names = check_families(families)
    if executor is not None and executor.name != "local":
        job = functools.partial(
            asyncio.to_thread,
            sweep,
            dataset,
            run,
            max_k,
            policy,
            families=names,
            contents=contents,
            source=source,
        )
        return replace(asyncio.run(run_once(executor, job)), executor=executor.info())
    specs = tuple(parse_metric(f"{f}@{k}") for k in range(1, max_k + 1) for f in names)
    result = evaluate(dataset, run, specs, policy)
    answered = [run.cases[c.id] for c in dataset.cases if c.id in run.cases and run.cases[c.id].error is None]
    has_content = contents is not None or any(it.content is not None for c in answered for it in c.items)
    sizes, counted, missing = _token_matrix(answered, max_k, contents)
    tokens = np.cumsum(sizes, axis=1).mean(axis=0) if answered else np.full(max_k, math.nan)
    rows: list[dict[str, Any]] = []
    for k in range(1, max_k + 1):
        row: dict[str, Any] = {"k": k, **{f: result.metrics[f"{f}@{k}"] for f in names}}
        row["context_tokens"] = float(tokens[k - 1]) if has_content else None
        rows.append(row)
    notes = list(result.notes)
    if not has_content:
        notes.append("the run carries no contents: pass --corpus to count context tokens")
    elif missing:
        notes.append(
            f"{missing} of {counted} retrieved items have no content (neither in the run nor the corpus) "
            "and count 0 tokens: the token figures are lower bounds"
        )
    deepest = max((len(c.items) for c in answered), default=0)
    if deepest < max_k:
        notes.append(f"no case returned more than {deepest} results; rows past k = {deepest} add nothing")
    c = result.counts
    cases = {
        "cases": c.cases,
        "answerable": c.answerable,
        "answered": len(answered),
        "missing": c.missing,
        "errors": c.errors,
    }
    content_info = {
        "counted_items": counted,
        "items_without_content": missing if has_content else counted,
        "tokenizer": "ragaudit.corpus.chunkers.count_tokens",
    }
    return KSweep(rows, names, dict(result.dataset), policy, dict(source or {}), cases, content_info, notes)


# ---- inputs: eval reports, run files, corpora ---------------------------------------------------


def parse_chunking(spec: str) -> ChunkingConfig:
    """``STRATEGY[:SIZE[:OVERLAP]]`` (``whole``, ``recursive:256:32``) as a :class:`ChunkingConfig`."""
    parts = spec.split(":")
    fix = "e.g. --chunking whole or --chunking recursive:256:32 (STRATEGY[:SIZE[:OVERLAP]])"
    if len(parts) > 3 or not all(p.strip() for p in parts) or not all(p.strip().isdigit() for p in parts[1:]):
        raise InputError("--chunking", None, f"cannot read {spec!r}", fix)
    numbers = [int(p) for p in parts[1:]]
    config = ChunkingConfig(parts[0].strip(), *numbers)
    make_chunker(config.strategy, config.size, config.overlap)  # refuses an unknown strategy or bad sizes
    return config


def corpus_contents(corpus: Corpus, chunking: ChunkingConfig) -> dict[str, str]:
    """Chunk id -> chunk text for ``corpus`` chunked as a pipeline with ``chunking`` does."""
    chunks = chunk_corpus(corpus, make_chunker(chunking.strategy, chunking.size, chunking.overlap))
    return {c.chunk_id: c.text for c in chunks}


def _project(dataset: Dataset, corpus: Corpus, chunking: ChunkingConfig, threshold: int) -> Dataset:
    if chunking.strategy == "whole":
        return dataset
    chunks = chunk_corpus(corpus, make_chunker(chunking.strategy, chunking.size, chunking.overlap))
    return replace(dataset, cases=project_cases(dataset.cases, chunks, threshold))


def run_from_report(report: Mapping[str, Any]) -> tuple[Run, int | None]:
    """The ranking an eval report kept for each case, and the depth past which it is unknown
    (``None`` when every kept list ended before the report's depth, i.e. is complete)."""
    cut_offs = []
    for name in report.get("metrics", {}):
        try:
            k = parse_metric(str(name)).k
        except MetricNameError:
            continue
        if k is not None:
            cut_offs.append(k)
    depth = max(cut_offs) if cut_offs else 100  # evaluate() keeps this many results per case
    cases: dict[str, CaseRun] = {}
    for case in report.get("per_case", []):
        case_id = str(case["id"])
        latency = case.get("latency_ms")
        if case.get("error") is not None:
            cases[case_id] = CaseRun([], str(case["error"]), latency)
        elif case.get("answered", True):
            items = [
                RankedItem(str(r["chunk_id"]), r.get("score"), r.get("tenant_id"))
                for r in case.get("retrieved", [])
            ]
            cases[case_id] = CaseRun(items, None, latency, tenant_id=case.get("tenant_id"))
    cut = any(len(c.items) >= depth for c in cases.values())
    name = str(report.get("run", {}).get("name") or "report")
    return Run(cases, name=name), depth if cut else None


def _load_report(path: str | Path) -> dict[str, Any]:
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(str(p), None, "report not found", "check the path") from None
    except json.JSONDecodeError as exc:
        raise InputError(
            str(p), exc.lineno, f"not valid JSON: {exc.msg}", "pass a report from 'ragaudit eval --out'"
        ) from None
    if not isinstance(data, dict) or data.get("kind", "eval") != "eval" or "per_case" not in data:
        raise InputError(
            str(p),
            None,
            "not a ragaudit eval report (kind 'eval' with per_case)",
            "pass a report written by 'ragaudit eval --out', or a run file with --run",
        )
    return data


def _policy_of(report: Mapping[str, Any]) -> Policy:
    raw = report.get("policy", {})
    return Policy(
        gain=raw.get("gain", "exponential"), relevance_threshold=int(raw.get("relevance_threshold", 1))
    )


def _checked(loaded_sha: str, expected: Any, path: str, what: str, report: str) -> None:
    if isinstance(expected, str) and expected and loaded_sha != expected:
        raise InputError(
            path,
            None,
            f"is not the {what} {report} was made on (sha256 {loaded_sha[:12]} vs {expected[:12]})",
            f"pass the {what} the report was evaluated on",
        )


def _report_dataset(
    report: Mapping[str, Any], report_path: str, dataset: str | None, threshold: int
) -> Dataset:
    info = report.get("dataset", {})
    path = dataset or info.get("path")
    if not path:
        raise InputError(report_path, None, "the report does not name its dataset", "pass --dataset")
    if dataset is None and not Path(path).exists():
        raise InputError(report_path, None, f"its dataset {path} is no longer there", "pass --dataset PATH")
    fmt: DatasetFormat = "auto"
    if dataset is None and info.get("format") in ("jsonl", "beir", "qrels"):
        fmt = info["format"]  # the report's own format (a BEIR folder, a qrels file, ...)
    loaded = load_dataset(path, fmt, threshold=threshold)
    _checked(loaded.sha256, info.get("sha256"), str(path), "dataset", report_path)
    return loaded


def _report_corpus(report: Mapping[str, Any], report_path: str, corpus: str | None) -> Corpus | None:
    info = report.get("corpus", {})
    path = corpus or info.get("path")
    if not path or (corpus is None and not Path(path).exists()):
        return None
    loaded = load_corpus(path)
    _checked(loaded.sha256, info.get("sha256"), str(path), "corpus", report_path)
    return loaded


def sweep_report(
    path: str | Path,
    *,
    dataset: str | None = None,
    corpus: str | None = None,
    max_k: int | None = None,
    families: Sequence[str] = DEFAULT_FAMILIES,
    executor: Executor | None = None,
) -> KSweep:
    """Sweep the ranking kept in an eval report (see the module docstring for what it needs);
    ``executor`` runs the scoring (default: in this process)."""
    report = _load_report(path)
    where = str(path)
    policy = _policy_of(report)
    run, known_depth = run_from_report(report)
    raw_chunking = report.get("pipeline", {}).get("config", {}).get("chunking") or {}
    chunking = ChunkingConfig(
        **{k: raw_chunking[k] for k in ("strategy", "size", "overlap") if k in raw_chunking}
    )
    the_corpus = _report_corpus(report, where, corpus)
    if the_corpus is None and chunking.strategy != "whole":
        raise InputError(
            where,
            None,
            f"the report comes from a {chunking.strategy} chunking and its corpus is not at hand: "
            "labels cannot be projected onto the chunks",
            "pass --corpus (the corpus the pipeline indexed)",
        )
    ds = _report_dataset(report, where, dataset, policy.relevance_threshold)
    if the_corpus is not None:
        ds = _project(ds, the_corpus, chunking, policy.relevance_threshold)
    deepest = max((len(c.items) for c in run.cases.values()), default=0)
    k = max_k if max_k is not None else max(1, min(DEFAULT_MAX_K, deepest))
    if known_depth is not None and k > known_depth:
        raise InputError(
            where,
            None,
            f"the report keeps the top {known_depth} results per case, so k = {k} is not known",
            f"use --max-k {known_depth} or less, or sweep the run itself (--run)",
        )
    contents = corpus_contents(the_corpus, chunking) if the_corpus is not None else None
    source = {"kind": "report", "path": where, "run": report.get("run", {}), "known_depth": known_depth}
    if report.get("pipeline"):
        source["pipeline"] = {key: report["pipeline"].get(key) for key in ("name", "config_sha256")}
    swept = sweep(ds, run, k, policy, families=families, contents=contents, source=source, executor=executor)
    from ragaudit.evaluation.in_sample_integrity import with_own_in_sample

    section = with_own_in_sample(report).get("in_sample")  # a section deleted or edited: its records say it
    if isinstance(section, Mapping) and section.get("state") == "in_sample":  # say so, as the report does
        swept.in_sample = dict(section)
    return swept


def sweep_run(
    run: Run,
    dataset: Dataset,
    policy: Policy,
    *,
    corpus: Corpus | None = None,
    chunking: ChunkingConfig | None = None,
    max_k: int | None = None,
    families: Sequence[str] = DEFAULT_FAMILIES,
    executor: Executor | None = None,
) -> KSweep:
    """Sweep a complete run. With a non-whole ``chunking`` the labels are projected onto the corpus's
    chunks (the corpus is needed); the corpus also supplies contents the run does not carry.
    ``executor`` runs the scoring (default: in this process)."""
    shape = chunking or ChunkingConfig()
    if shape.strategy != "whole":
        if corpus is None:
            raise InputError(
                "--chunking", None, "projecting labels onto chunks needs the corpus", "add --corpus"
            )
        dataset = _project(dataset, corpus, shape, policy.relevance_threshold)
    deepest = max((len(c.items) for c in run.cases.values()), default=0)
    k = max_k if max_k is not None else max(1, min(DEFAULT_MAX_K, deepest))
    contents = corpus_contents(corpus, shape) if corpus is not None else None
    source = {"kind": "run", **run.info()}
    return sweep(
        dataset, run, k, policy, families=families, contents=contents, source=source, executor=executor
    )
