"""The plugin's configuration: its options, markers and the :class:`Settings` its fixtures use.

Most specific last wins over earlier: ini options (``[tool.pytest.ini_options]``, ``ragaudit_dataset``
...), then the closest ``@pytest.mark.ragaudit(...)`` marker, then the command line
(``--ragaudit-dataset`` ...). Relative paths resolve against the ini file's folder, the test file's
folder and the invocation folder respectively; ``demo:NAME`` names a file of the bundled demo knowledge
base. A configuration error fails the test's setup with a one-line message (:func:`usage`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NoReturn

import pytest

OPTIONS: dict[str, str] = {
    "dataset": "golden dataset: JSONL, BEIR folder or TREC qrels (demo:golden.jsonl = the bundled demo)",
    "corpus": "corpus JSONL or BEIR folder the pipeline indexes (demo:corpus.jsonl = the bundled demo)",
    "pipeline": "built-in pipeline over the corpus: bm25, dense, hybrid, hybrid-rerank:MODEL.json or a TOML file",
    "retriever": "your own retriever instead of a pipeline: module:factory",
    "metrics": "comma-separated metrics of eval_result (default nDCG@10,R@5,R@10,R@100,P@5,MRR@10,MAP@100,Hit@5)",
    "top_k": "results requested per query (default: the largest metric cut-off)",
    "tenant": "tenant for golden cases that name none",
    "tenant_aliases": "YOUR_TENANT=INDEX_TENANT pairs (one per line, or comma-separated)",
    "report": "write eval_result's JSON report here (then 'ragaudit gate' can read it)",
    "audit_report": "write tenant_audit's JSON report here (then 'ragaudit gate --audit' can read it: only "
    "the cross-tenant audit verifies isolation)",
    "history": "record eval_result in this run-history file ('auto': .ragaudit/history.sqlite at the git top-level)",
}


PATH_KEYS = ("dataset", "corpus", "report", "audit_report", "history")


MARKERS = (
    "security: a tenant-isolation test (select with -m security)",
    "retrieval_eval: a retrieval-quality test on the golden set (select with -m retrieval_eval)",
    "ragaudit(**options): configure ragaudit's fixtures for this test (dataset, corpus, pipeline, "
    "retriever, metrics, top_k, tenant, tenant_aliases, report, audit_report, history)",
)


DEMO_PREFIX = "demo:"


@dataclass(frozen=True)
class Settings:
    """Resolved configuration of the fixtures (paths absolute)."""

    dataset: str | None = None
    corpus: str | None = None
    pipeline: str | None = None
    retriever: str | None = None
    metrics: str | None = None
    top_k: int | None = None
    tenant: str | None = None
    tenant_aliases: tuple[tuple[str, str], ...] = ()
    report: str | None = None
    audit_report: str | None = None
    history: str | None = None


def usage(message: str) -> NoReturn:
    pytest.fail(f"ragaudit: {message}", pytrace=False)


def demo_file(name: str) -> Path:
    """A file of the bundled demo knowledge base."""
    from importlib.resources import files

    path = Path(str(files("ragaudit") / "demo_data" / "kb" / name))
    if not path.exists():
        usage(f"no demo file {name!r}; use demo:golden.jsonl or demo:corpus.jsonl")
    return path


def _path(value: str, base: Path) -> str:
    if value.startswith(DEMO_PREFIX):
        return str(demo_file(value[len(DEMO_PREFIX) :]))
    return str((base / Path(value).expanduser()).resolve())


def _aliases(value: object) -> tuple[tuple[str, str], ...]:
    if isinstance(value, Mapping):
        pairs = [(str(k), str(v)) for k, v in value.items()]
    else:
        items = value if isinstance(value, (list, tuple)) else str(value).replace(",", "\n").splitlines()
        pairs = []
        for item in items:
            text = str(item).strip()
            if not text:
                continue
            ours, eq, theirs = text.partition("=")
            if not eq or not ours.strip() or not theirs.strip():
                usage(f"tenant alias {text!r} is not YOUR_TENANT=INDEX_TENANT, e.g. tenant_acme=acme")
            pairs.append((ours.strip(), theirs.strip()))
    targets = [theirs for _, theirs in pairs]
    if len(set(targets)) != len(targets) or len({o for o, _ in pairs}) != len(pairs):
        usage(f"tenant aliases must map one-to-one (got {pairs})")
    return tuple(pairs)


def _apply(settings: Settings, values: Mapping[str, Any], base: Path, where: str) -> Settings:
    changes: dict[str, Any] = {}
    for key, value in values.items():
        if key not in OPTIONS:
            usage(f"unknown option {key!r} in {where}; valid: {', '.join(OPTIONS)}")
        if value is None or value == "" or value == []:
            continue
        if key == "history" and value == "auto":
            changes[key] = "auto"
        elif key in PATH_KEYS or (key == "pipeline" and str(value).endswith(".toml")):
            changes[key] = _path(str(value), base)
        elif key == "top_k":
            try:
                changes[key] = int(value)
            except ValueError:
                usage(f"top_k in {where} must be a positive integer (got {value!r})")
            if changes[key] < 1:
                usage(f"top_k in {where} must be a positive integer (got {value!r})")
        elif key == "tenant_aliases":
            changes[key] = _aliases(value)
        else:
            changes[key] = str(value)
    return replace(settings, **changes)


def resolve_settings(request: pytest.FixtureRequest) -> Settings:
    """ini options, then the closest ``ragaudit`` marker, then command-line options."""
    config = request.config
    ini_base = config.inipath.parent if config.inipath else config.rootpath
    settings = _apply(
        Settings(), {k: config.getini(f"ragaudit_{k}") for k in OPTIONS}, ini_base, "the ini file"
    )
    marker = request.node.get_closest_marker("ragaudit")
    if marker is not None:
        if marker.args:
            usage(
                "the ragaudit marker takes keyword options only, e.g. @pytest.mark.ragaudit(pipeline='bm25')"
            )
        settings = _apply(settings, marker.kwargs, request.node.path.parent, "@pytest.mark.ragaudit")
    cli = {k: config.getoption(f"ragaudit_{k}") for k in OPTIONS}
    return _apply(settings, cli, config.invocation_params.dir, "the command line")
