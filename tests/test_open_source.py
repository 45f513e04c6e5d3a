"""One open_source() for every command and the pytest plugin: pipeline, endpoint, retriever, run file."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path
from typing import Any

import pytest

from conftest import KB
from ragaudit.corpus.loading import load_corpus
from ragaudit.data.loading import load_dataset
from ragaudit.errors import InputError
from ragaudit.pipelines.sources import SourceSpec, open_source
from servers import LocalServer, echo_handler

SRC = Path(__file__).resolve().parents[1] / "src" / "ragaudit"


class _Fixed:
    async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[dict[str, Any]]:
        return [{"chunk_id": "c1", "score": 1.0, "content": "x", "source_id": "d1", "tenant_id": tenant_id}]


def _ids(found: Any) -> list[str]:
    """Chunk ids of a retriever's raw answer (protocol objects or plain dicts)."""
    return [c["chunk_id"] if isinstance(c, dict) else c.chunk_id for c in found]


def make_fixed() -> _Fixed:
    """A ``module:factory`` retriever for ``--retriever test_open_source:make_fixed``."""
    return _Fixed()


def test_a_pipeline_is_built_over_the_corpus_and_projects_the_labels() -> None:
    corpus = load_corpus(KB / "corpus.jsonl")
    dataset = load_dataset(KB / "golden.jsonl")
    source = open_source(SourceSpec(pipeline="bm25"), corpus=corpus, dataset=dataset)
    assert source.label == "bm25" and source.chunks and source.pipeline is not None
    assert set(source.provenance()) == {"pipeline", "corpus"}
    assert source.context == {"pipeline": source.pipeline.info()}
    assert source.scored_on(dataset).cases == dataset.cases  # bm25 indexes whole documents
    found = asyncio.run(source.retriever.search(tenant_id="acme", query="API limit", top_k=3))
    assert 0 < len(found) <= 3


def test_a_pipeline_without_a_corpus_says_what_to_add() -> None:
    with pytest.raises(InputError) as err:
        open_source(SourceSpec(pipeline="bm25"))
    assert err.value.problem.fix == "add --corpus corpus.jsonl"


def test_an_endpoint_is_queried_with_the_credential_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPEN_SOURCE_TOKEN", "s3cret")
    with LocalServer(echo_handler()) as server:
        url = server.url.replace("http://", "http://user:pw@")
        source = open_source(
            SourceSpec(endpoint=url, auth_env="OPEN_SOURCE_TOKEN", timeout_s=5, concurrency=2)
        )

        async def ask() -> list[Any]:
            await source.retriever.start_session(concurrency=2)  # type: ignore[attr-defined]
            try:
                return list(await source.retriever.search(tenant_id="acme", query="q", top_k=2))
            finally:
                await source.retriever.end_session()  # type: ignore[attr-defined]

        found = asyncio.run(ask())
    assert _ids(found) == ["q#0", "q#1"]
    assert server.hits[0].headers["authorization"] == "Bearer s3cret"
    assert source.label == server.url.split("://")[1].rstrip("/") and "pw" not in str(source.provenance())
    assert "pw" not in source.label and "user" not in source.label
    assert source.provenance() == {"source": source.context} and source.chunks == []


def test_a_python_retriever_and_a_run_file() -> None:
    source = open_source(SourceSpec(retriever="test_open_source:make_fixed"))
    assert source.label == "test_open_source:make_fixed"
    assert source.provenance() == {"source": {"retriever": "test_open_source:make_fixed"}}
    dataset = load_dataset(KB / "golden.jsonl")
    case = dataset.cases[0]
    run_path = Path(__file__).resolve().parent / "data" / "open_source_run.trec"
    run_path.parent.mkdir(exist_ok=True)
    run_path.write_text(f"{case.id} Q0 doc-a 1 2.0 sys\n{case.id} Q0 doc-b 2 1.0 sys\n")
    try:
        replay = open_source(SourceSpec(run=str(run_path)), dataset=dataset)
        found = asyncio.run(
            replay.retriever.search(tenant_id=case.tenant_id or "", query=case.query, top_k=1)
        )
    finally:
        run_path.unlink()
    assert _ids(found) == ["doc-a"]
    assert replay.context == {"run": str(run_path)}
    with pytest.raises(InputError):
        open_source(SourceSpec(run=str(run_path)))  # a replay needs the dataset


def test_no_source_names_every_flag() -> None:
    with pytest.raises(InputError) as err:
        open_source(SourceSpec())
    assert "--pipeline" in err.value.problem.fix and "--run" in err.value.problem.fix


def _imports(package: str) -> set[str]:
    out: set[str] = set()
    for path in (SRC / package).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                out.add(node.module)
            elif isinstance(node, ast.Import):
                out.update(alias.name for alias in node.names)
    return out


def test_commands_open_sources_in_one_place() -> None:
    assert not (SRC / "security" / "sources.py").exists()
    assert not any(m.startswith("ragaudit.experiments") for m in _imports("context"))
    for module in (
        "cli/cmd_eval.py",
        "cli/cmd_audit_tenants.py",
        "cli/cmd_audit_stale.py",
        "pytest_plugin/sources.py",
    ):
        text = (SRC / module).read_text()
        assert "open_source(" in text, module
        assert "HttpRetriever(" not in text and "load_plugin(" not in text and "build_pipeline(" not in text


def test_evaluate_retriever_is_the_cli_live_path_with_its_defaults(tmp_path: Path) -> None:
    import json

    import ragaudit
    from ragaudit.cli.main import main

    out = tmp_path / "cli.json"
    code = main(
        ["eval", "--dataset", str(KB / "golden.jsonl"), "--retriever", "test_open_source:make_fixed", "--tenant",
         "acme", "--no-history", "--no-progress", "--out", str(out)]
    )  # fmt: skip
    assert code in (0, 1)
    cli = json.loads(out.read_text())
    api = asyncio.run(
        ragaudit.evaluate_retriever(make_fixed(), KB / "golden.jsonl", tenant_id="acme")
    ).to_dict()
    assert api["metrics"] == cli["metrics"]
    assert list(api["metrics"]) == ["nDCG@10", "R@5", "R@10", "R@100", "P@5", "MRR@10", "MAP@100", "Hit@5"]
    assert api["retrieval"]["top_k"] == cli["retrieval"]["top_k"] == 100
