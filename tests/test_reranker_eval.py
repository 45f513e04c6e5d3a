"""Reranker evaluation on the demo KB: BM25's top 10 reranked by the packaged bi-encoder."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from conftest import KB, write_lines
from ragaudit.cli.main import main
from ragaudit.corpus.loading import load_corpus
from ragaudit.data.loading import load_dataset
from ragaudit.data.run import RankedItem
from ragaudit.errors import InputError
from ragaudit.evaluation.evaluate import evaluate
from ragaudit.experiments.reranker_eval import (
    RerankerEvaluation,
    evaluate_reranker,
    first_stage_order,
    oracle_order,
    split_rerank,
)
from ragaudit.metrics.names import parse_metrics
from ragaudit.metrics.policy import Policy
from ragaudit.pipelines.config import parse_pipeline, preset
from ragaudit.pipelines.prepare import prepare_pipeline
from ragaudit.runner.execute import run_cases


def schema_errors(report: dict[str, Any]) -> list[str]:
    """The report schema's complaints about ``report`` (the shared envelope every kind carries)."""
    pytest.importorskip("jsonschema")
    artifact = pytest.importorskip("ragaudit.artifacts.envelope")
    errors: list[str] = artifact.schema_errors(report)
    return errors


SPECS = parse_metrics("nDCG@5,MRR,nDCG@10")
CONFIG = parse_pipeline(
    {"name": "bm25-rerank", "retriever": {"type": "bm25"}, "rerank": {"type": "bi-encoder", "top_n": 30}}
)


@pytest.fixture(scope="module")
def evaluated() -> RerankerEvaluation:
    dataset = load_dataset(KB / "golden.jsonl")
    return asyncio.run(
        evaluate_reranker(
            dataset, load_corpus(KB / "corpus.jsonl"), CONFIG, SPECS, Policy(), top_n=10, resamples=2000
        )
    )


def test_before_is_the_first_stage_alone_and_the_candidates_are_kept(evaluated: RerankerEvaluation) -> None:
    dataset = load_dataset(KB / "golden.jsonl")
    prepared = prepare_pipeline(dataset, KB / "corpus.jsonl", preset("bm25"))
    run = asyncio.run(run_cases(prepared.pipeline.retriever, prepared.dataset.cases, 10, progress=False))
    alone = evaluate(prepared.dataset, run, (*SPECS, *parse_metrics("R@10")), Policy())
    for name in ("nDCG@5", "MRR", "nDCG@10"):
        assert evaluated.before.metrics[name] == pytest.approx(alone.metrics[name], abs=1e-12)
    assert evaluated.top_n == 10 and evaluated.recall_metric == "R@10"
    assert evaluated.first_stage_recall == pytest.approx(alone.metrics["R@10"], abs=1e-12)
    for before, after in zip(evaluated.before.per_case, evaluated.after.per_case, strict=True):
        assert before.id == after.id
        assert sorted(r.chunk_id for r in before.retrieved) == sorted(r.chunk_id for r in after.retrieved)
    assert evaluated.after.metrics != evaluated.before.metrics  # the reranker did reorder


def test_the_oracle_bounds_both_orders_per_case(evaluated: RerankerEvaluation) -> None:
    for b, a, o in zip(
        evaluated.before.per_case, evaluated.after.per_case, evaluated.ceiling.per_case, strict=True
    ):
        for name in ("nDCG@5", "nDCG@10", "MRR"):
            if name in o.metrics:
                assert o.metrics[name] >= max(a.metrics[name], b.metrics[name]) - 1e-12, (o.id, name)
    rows = {r["metric"]: r for r in evaluated.summary()}
    ndcg = rows["nDCG@5"]
    assert ndcg["before"] <= ndcg["ceiling"] and ndcg["after"] <= ndcg["ceiling"]
    assert ndcg["delta"] == pytest.approx(ndcg["after"] - ndcg["before"])
    expected = (ndcg["after"] - ndcg["before"]) / (ndcg["ceiling"] - ndcg["before"])
    assert ndcg["headroom_captured"] == pytest.approx(expected)
    assert all(r["p_value_corrected"] >= r["p_value"] for r in rows.values())


def test_latency_split_and_artifact(evaluated: RerankerEvaluation) -> None:
    latency = evaluated.latency()
    assert latency["cases"] == 84
    for part in ("first_stage", "reranked_total", "rerank_added"):
        assert 0 <= latency[part]["p50"] <= latency[part]["p95"]
    added = evaluated.added_ms()
    for case in evaluated.after.per_case:
        assert case.latency_ms is not None
        assert added[case.id] == pytest.approx(max(0.0, case.latency_ms - evaluated.first_stage_ms[case.id]))
    assert set(latency["reranker_cache"]) == {"hits", "misses"}
    out = json.loads(json.dumps(evaluated.to_dict()))
    assert out["kind"] == "reranker-eval" and out["schema_version"] == 1
    assert out["dataset"]["cases"] == 84 and out["policy"]["gain"] == "exponential"
    assert out["pipeline"]["config"]["rerank"] == {"type": "bi-encoder", "top_n": 10}
    assert out["pipeline"]["models"]["reranker"].startswith("bi-encoder:")
    assert out["first_stage_recall"]["metric"] == "R@10"
    assert len(out["per_case"]) == 84 and {"before", "after", "ceiling"} <= set(out["per_case"][0])
    unanswerable = [r for r in out["per_case"] if r["status"] == "unanswerable"]
    assert unanswerable and all("before" not in r for r in unanswerable)
    assert [c["metric"] for c in out["comparisons"]] == ["nDCG@5", "MRR", "nDCG@10"]
    assert schema_errors(out) == []


def test_oracle_and_first_stage_orders() -> None:
    items = [
        RankedItem("a", metadata={"first_stage_rank": 3}),
        RankedItem("b", metadata={"first_stage_rank": 1}),
        RankedItem("c", metadata={"first_stage_rank": 2}),
    ]
    assert [i.chunk_id for i in first_stage_order(items)] == ["b", "c", "a"]
    ranked = [RankedItem(x) for x in ("x", "a", "b", "a", "c", "d")]
    grades = {"a": 1, "b": 3, "c": 0, "d": 1}
    # grade desc; among grade 1, relevant first then first-stage order; the repeated "a" goes last
    order = oracle_order(ranked, grades, frozenset({"d", "b"}))
    assert [i.chunk_id for i in order] == ["b", "d", "a", "x", "c", "a"]


def test_a_pipeline_without_a_rerank_stage_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(InputError, match="no rerank stage"):
        split_rerank(preset("bm25"), None)
    with pytest.raises(InputError, match="positive"):
        split_rerank(CONFIG, 0)
    first, stage = split_rerank(CONFIG, None)
    assert first.rerank is None and stage.params["top_n"] == 30
    code = main(
        [
            "eval-reranker",
            "--dataset",
            str(KB / "golden.jsonl"),
            "--corpus",
            str(KB / "corpus.jsonl"),
            "--pipeline",
            "bm25",
        ]
    )
    assert code == 2 and "--pipeline hybrid-rerank" in capsys.readouterr().err


def test_cli_writes_the_artifact(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = write_lines(
        tmp_path / "p.toml",
        ['name = "bm25-rerank"', "[retriever]", 'type = "bm25"', "[rerank]", 'type = "bi-encoder"'],
    )
    out = tmp_path / "rr.json"
    code = main(
        [
            "eval-reranker",
            "--dataset",
            str(KB / "golden.jsonl"),
            "--corpus",
            str(KB / "corpus.jsonl"),
            "--pipeline",
            str(config),
            "--top-n",
            "5",
            "--resamples",
            "200",
            "--no-progress",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    text = capsys.readouterr().out
    assert "oracle" in text and "first-stage R@5" in text and "the reranker adds" in text
    data = json.loads(out.read_text())
    assert data["top_n"] == 5 and data["kind"] == "reranker-eval"
    assert any("nDCG@10 looks past the 5 reranked candidates" in n for n in data["notes"])
