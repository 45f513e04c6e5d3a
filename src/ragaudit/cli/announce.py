"""What a command is about to run, said before it starts (stderr, silent with ``--quiet``).

``ragaudit eval`` and every experiment name the pipeline(s) (retriever, chunking, rerank, rewrite,
models), the cases and the depth before they query anything; how it went is said after by the exit
rule (:func:`ragaudit.cli.outcome.exit_code`: one ``done`` line per source) and by ``main`` (the time).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ragaudit.cli.console import note


def stage_text(stage: Any) -> str:
    """A stage (``StageConfig`` or its ``to_dict()``): ``bm25``, ``rrf(bm25, dense)``, ``rm3``."""
    if hasattr(stage, "to_dict"):
        stage = stage.to_dict()
    kind = str(stage.get("type", "?"))
    if stage.get("target"):  # a framework's retriever: langchain my_app.rag:retriever
        return f"{kind} {stage['target']}"
    parts = stage.get("components")
    if isinstance(parts, list) and parts:
        inner = ", ".join(stage_text(p) for p in parts if isinstance(p, Mapping))
        return f"{stage.get('method', kind)}({inner})"
    return kind


def chunking_text(chunking: Any) -> str:
    """A chunking (``ChunkingConfig`` or its dict): ``chunking whole documents``, ``chunking fixed 256
    tokens, overlap 64``."""
    get = (
        chunking.get
        if isinstance(chunking, Mapping)
        else lambda key, default=None: getattr(chunking, key, default)
    )
    strategy = get("strategy", "whole")
    if strategy == "whole":
        return "chunking whole documents"
    return f"chunking {strategy} {get('size')} tokens, overlap {get('overlap')}"


def _models(config: Mapping[str, Any]) -> list[str]:
    """The models a pipeline config names, with the defaults its dense and bi-encoder stages use."""
    from ragaudit.retrieval.embedder import DEFAULT_MODEL

    found: dict[str, None] = {}

    def walk(stage: Any) -> None:
        if not isinstance(stage, Mapping):
            return
        if "model" in stage:
            found[str(stage["model"])] = None
        elif stage.get("type") in ("dense", "bi-encoder"):
            found[DEFAULT_MODEL] = None
        for part in stage.get("components") or []:
            walk(part)

    for key in ("retriever", "rerank", "rewrite"):
        walk(config.get(key))
    return list(found)


def pipeline_text(config: Any, models: Mapping[str, Any] | None = None) -> str:
    """One line for a pipeline config (a ``PipelineConfig`` or its ``to_dict()``): name, retriever,
    chunking, rerank and rewrite stages, models (``models``: a built pipeline's own, when known)."""
    from ragaudit.pipelines.external import is_external

    d: Mapping[str, Any] = config.to_dict() if hasattr(config, "to_dict") else config
    retriever = d.get("retriever") or {}
    own_index = is_external(str(retriever.get("type", "")))
    parts = [
        f"{d.get('name')} = {stage_text(retriever)}",
        "its own index" if own_index else chunking_text(d.get("chunking") or {}),
    ]
    for key in ("rerank", "rewrite"):
        stage = d.get(key)
        if isinstance(stage, Mapping):
            top = f" top {stage['top_n']}" if stage.get("top_n") else ""
            parts.append(f"{key} {stage.get('type')}{top}")
    named = [str(m) for ms in (models or {}).values() for m in (ms if isinstance(ms, list) else [ms])]
    shown = named or _models(d)
    parts.append("models " + ", ".join(shown) if shown else "no model")
    return ", ".join(parts)


def cases_text(dataset: Any, threshold: int = 1) -> str:
    """``84 cases (75 answerable, 9 unanswerable) of golden.jsonl``."""
    total = len(dataset.cases)
    answerable = sum(1 for case in dataset.cases if case.is_answerable(threshold))
    return f"{total} cases ({answerable} answerable, {total - answerable} unanswerable) of {dataset.path}"


def plan(command: str, what: Iterable[str], dataset: Any = None, threshold: int = 1, **settings: Any) -> None:
    """Say what ``command`` is about to run: one line per system in ``what``, then the cases and the
    settings that were given (``None`` values are left out)."""
    lines = [f"{command}: {line}" for line in what]
    tail = [cases_text(dataset, threshold)] if dataset is not None else []
    tail += [f"{key} {value}" for key, value in settings.items() if value is not None]
    if tail:
        lines.append(f"{command}: on " + ", ".join(tail))
    for line in lines:
        note(line)


def source_text(args: Any) -> str:
    """The source of the retrieval options, as the user named it."""
    if getattr(args, "run", None):
        return f"run file {args.run}"
    if isinstance(getattr(args, "report", None), str):
        return f"the rankings of the eval report {args.report}"
    if getattr(args, "endpoint", None):
        from ragaudit.retrieval.http import display_url

        return f"endpoint {display_url(args.endpoint)}"
    if getattr(args, "retriever", None):
        return f"Python retriever {args.retriever}"
    pipeline = getattr(args, "pipeline", None) or getattr(args, "config", None)
    if isinstance(pipeline, str):
        from ragaudit.pipelines.config import resolve_pipeline

        return "pipeline " + pipeline_text(resolve_pipeline(pipeline))
    if isinstance(pipeline, Sequence) and pipeline:
        from ragaudit.pipelines.config import resolve_pipeline

        return "; ".join("pipeline " + pipeline_text(resolve_pipeline(p)) for p in pipeline)
    return "the given source"
