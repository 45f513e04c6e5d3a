"""Pipelines end to end on the demo knowledge base: presets, stages, chunking, CLI eval, bench, demo."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from conftest import KB, DemoBuild
from ragaudit.cli.main import main
from ragaudit.corpus.loading import load_corpus
from ragaudit.data.loading import load_dataset
from ragaudit.pipelines.build import ComponentCache, build_pipeline
from ragaudit.pipelines.config import PRESETS, parse_pipeline, preset
from ragaudit.pipelines.prepare import prepare_pipeline


@pytest.fixture(scope="module")
def corpus():  # type: ignore[no-untyped-def]
    return load_corpus(KB / "corpus.jsonl")


@pytest.fixture(scope="module")
def shared() -> ComponentCache:
    return ComponentCache()


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_serves_only_the_callers_tenant(name: str, corpus, shared: ComponentCache) -> None:  # type: ignore[no-untyped-def]
    built = build_pipeline(preset(name), corpus, cache=shared)
    owner = {d.doc_id: d.tenant_id for d in corpus.documents}
    for tenant in corpus.tenants:
        hits = asyncio.run(
            built.retriever.search(
                tenant_id=tenant, query="What are the confidential severance clauses?", top_k=50
            )
        )
        assert hits, (name, tenant)
        assert {owner[h["chunk_id"]] for h in hits} == {tenant}
    assert asyncio.run(built.retriever.search(tenant_id="ACME", query="severance", top_k=5)) == []
    assert built.info()["config_sha256"] == preset(name).sha256()


def test_stage_order_rerank_sees_the_original_query(corpus, shared: ComponentCache) -> None:  # type: ignore[no-untyped-def]
    config = parse_pipeline(
        {
            "name": "full",
            "retriever": {"type": "bm25"},
            "rewrite": {"type": "synonyms", "mapping": {"pro": "professional"}},
            "rerank": {"type": "bi-encoder", "top_n": 10},
        }
    )
    built = build_pipeline(config, corpus, cache=shared)
    hits = asyncio.run(built.retriever.search(tenant_id="acme", query="pro plan api limit", top_k=3))
    meta = hits[0]["metadata"]
    assert "professional" in meta["rewritten_query"]
    assert "first_stage_rank" in meta
    assert set(built.models) == {"embedding", "rewriter", "reranker"}


def test_chunked_pipeline_projects_span_labels(corpus) -> None:  # type: ignore[no-untyped-def]
    dataset = load_dataset(KB / "golden.jsonl")
    config = parse_pipeline(
        {
            "name": "bm25-chunks",
            "chunking": {"strategy": "recursive", "size": 48, "overlap": 8},
            "retriever": {"type": "bm25"},
        }
    )
    prepared = prepare_pipeline(dataset, corpus, config)
    assert len(prepared.pipeline.chunks) > len(corpus.documents)
    labelled = {cid for case in prepared.dataset.cases for cid in case.relevant_chunk_ids or ()}
    assert labelled and all("#" in cid for cid in labelled)
    assert sum(c.is_answerable() for c in prepared.dataset.cases) == sum(
        c.is_answerable() for c in dataset.cases
    )


def test_eval_cli_with_a_pipeline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "bm25.json"
    code = main(
        [
            "eval",
            "--dataset",
            str(KB / "golden.jsonl"),
            "--corpus",
            str(KB / "corpus.jsonl"),
            "--pipeline",
            "bm25",
            "--no-progress",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    assert "answerable 75" in capsys.readouterr().out
    report = json.loads(out.read_text())
    assert report["pipeline"]["name"] == "bm25"
    assert len(report["pipeline"]["config_sha256"]) == 64
    assert report["corpus"]["sha256"] and report["retrieval"]["top_k"] == 100
    assert len(report["per_case"]) == 84
    assert report["security"]["leaks"] == 0
    assert report["metrics"]["nDCG@10"] > 0.6


def test_demo_exits_1_when_its_gate_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No false green: the demo's exit code is the gate's, not 0 whatever the verdict."""
    from ragaudit.cli.cmd_demo import report_and_gate

    assert main(["demo", "--pipelines", "bm25", "--no-progress", "--out-dir", str(tmp_path)]) == 0
    assert json.loads((tmp_path / "verdict.json").read_text())["passed"] is True
    report_path = tmp_path / "bm25.json"
    report = json.loads(report_path.read_text())
    report["metrics"] = dict.fromkeys(report["metrics"], 0.01)  # under the policy's quality floors
    report_path.write_text(json.dumps(report))
    capsys.readouterr()
    assert report_and_gate(str(tmp_path)) == 1
    out = capsys.readouterr().out
    assert "ragaudit gate: FAIL" in out and "[FAIL] quality" in out
    assert json.loads((tmp_path / "verdict.json").read_text())["passed"] is False
    assert (tmp_path / "report.html").is_file()  # the pages are still written


def test_eval_cli_refuses_a_pipeline_without_corpus(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "--dataset", str(KB / "golden.jsonl"), "--pipeline", "bm25"]) == 2
    assert "--corpus" in capsys.readouterr().err


def test_demo_prints_the_side_by_side_table(demo_build: DemoBuild) -> None:
    tmp_path, text = demo_build.folder, demo_build.out  # conftest's one demo run (its exit 0 checked there)
    table = text.split("\n-  ", 1)[1].split("\nevery pipeline:", 1)[0]  # the ranked rows
    ranked = [line.split()[1] for line in table.splitlines()[1:]]
    assert sorted(ranked) == sorted(PRESETS)
    assert "reports written to" in text
    bench = json.loads((tmp_path / "benchmark.json").read_text())
    assert [p["name"] for p in bench["pipelines"]] == list(PRESETS)
    assert bench["invariants"]["cases"] == 84
    by_name = {p["name"]: p for p in bench["pipelines"]}
    assert by_name["hybrid"]["metrics"]["nDCG@10"] > by_name["bm25"]["metrics"]["nDCG@10"]
    assert all(p["leaks"] == 0 for p in bench["pipelines"])
    assert {c["system"] for c in bench["comparisons"]} == {"dense", "hybrid"}
    # hybrid-rerank needs a fitted model (ragaudit fit-fusion), so the demo does not pretend to rerank
    assert (tmp_path / "hybrid.json").is_file() and not (tmp_path / "hybrid-rerank.json").exists()
    # ranked by the first metric: the winner is the best nDCG@10, the table lists the ranking's order
    ranking = bench["ranking"]
    best = max(p["metrics"]["nDCG@10"] for p in bench["pipelines"])
    assert ranking["metric"] == "nDCG@10" and by_name[ranking["winner"]]["metrics"]["nDCG@10"] == best
    assert ranked == ranking["order"] and ranking["runner_up"] == ranking["order"][1]
    assert {c["system"] for c in ranking["against_winner"]} == set(PRESETS) - {ranking["winner"]}
    assert all(c["baseline"] == ranking["winner"] for c in ranking["against_winner"])
    # latency measured one query at a time, build time beside the embedding cache's state
    assert {p["latency_basis"] for p in bench["pipelines"]} == {"per query, one at a time"}
    assert "embeddings" not in by_name["bm25"] and "embeddings" in by_name["dense"]
    for entry in bench["pipelines"]:  # every pipeline with a dense part says what its build embedded
        if "embeddings" in entry:
            assert entry["embeddings"]["cached"] + entry["embeddings"]["computed"] == 90  # 90 documents
    assert bench["invariants"]["latency_timed"] == "pipelines taking turns query by query"
    assert "\nlatency: per query, one at a time; pipelines taking turns query by query\n" in text
    assert "embeddings: " in text
    assert f"recommendation: {ranking['winner']}: " in text
    # one page per pipeline, and the page comparing them all, named last
    last = text.rstrip().splitlines()[-1]
    assert (
        last.endswith(str((tmp_path / "report.html").resolve())) and "comparison of all 3 pipelines" in last
    )
    page = (tmp_path / "report.html").read_text()
    for name in PRESETS:
        assert (tmp_path / f"{name}.html").is_file() and f'href="{name}.html"' in page
    assert "Recommendation" in page and "gate passed" in page
