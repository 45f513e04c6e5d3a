"""ragaudit.evaluate: the semantics policy on hand-made datasets and runs."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

import ragaudit
from conftest import write_lines
from ragaudit.data.run import CaseRun, RankedItem, Run
from ragaudit.errors import InputError
from ragaudit.metrics.policy import Policy
from ragaudit.metrics.pure import ndcg_at_k

CASES = [
    {"id": "a", "query": "qa", "tenant_id": "t1", "relevant_chunk_ids": ["x"], "relevance": {"x": 3, "y": 1}},
    {"id": "b", "query": "qb", "tenant_id": "t1", "relevant_chunk_ids": ["z"]},
    {"id": "c", "query": "qc", "tenant_id": "t2", "relevant_chunk_ids": ["w"]},
    {"id": "u", "query": "qu", "tenant_id": "t1", "relevant_chunk_ids": []},
]


@pytest.fixture
def golden(tmp_path: Path) -> Path:
    return write_lines(tmp_path / "golden.jsonl", [json.dumps(c) for c in CASES])


def test_every_case_is_accounted_for(golden: Path) -> None:
    run = Run(
        {
            "a": CaseRun([RankedItem("y"), RankedItem("x")]),
            "c": CaseRun([], "timeout after 1s"),
            "u": CaseRun([RankedItem("x")]),
            "stray": CaseRun([RankedItem("x")]),
        }
    )
    result = ragaudit.evaluate(golden, run, "R@1,R@2,MRR,nDCG@2")
    status = {c.id: c.status for c in result.per_case}
    assert status == {"a": "ok", "b": "missing", "c": "error", "u": "unanswerable"}
    c = result.counts
    assert (c.cases, c.answerable, c.unanswerable, c.missing, c.errors, c.not_in_dataset) == (
        4,
        3,
        1,
        1,
        1,
        1,
    )
    # means over the three answerable cases; missing and error cases score 0
    assert result.metrics["R@2"] == pytest.approx(1 / 3)
    assert result.metrics["MRR"] == pytest.approx(0.5 / 3)
    assert result.metrics["nDCG@2"] == pytest.approx(ndcg_at_k(["y", "x"], {"x": 3, "y": 1}, 2) / 3)
    assert result.missing == ["b"] and [e.id for e in result.errors] == ["c"]
    assert any("stray" in note for note in result.notes)
    unanswerable = next(p for p in result.per_case if p.id == "u")
    assert unanswerable.metrics == {} and unanswerable.answered


def test_gain_and_threshold_policies_change_the_numbers(tmp_path: Path) -> None:
    qrels = write_lines(tmp_path / "qrels", ["q 0 a 1", "q 0 b 3", "q 0 c 2"])
    run = {"q": ["a", "c", "b"]}
    exp = ragaudit.evaluate(qrels, run, "nDCG@3,R@1")
    lin = ragaudit.evaluate(qrels, run, "nDCG@3,R@1", Policy(gain="linear"))
    strict = ragaudit.evaluate(qrels, run, "R@1,R@3", Policy(relevance_threshold=3))
    assert exp.metrics["nDCG@3"] < lin.metrics["nDCG@3"] < 1.0
    assert exp.metrics["R@1"] == pytest.approx(1 / 3)
    assert strict.metrics["R@1"] == 0.0 and strict.metrics["R@3"] == 1.0
    assert lin.to_dict()["policy"]["gain"] == "linear"
    with pytest.raises(ValueError, match="relevance_threshold"):
        Policy(relevance_threshold=0)


def test_report_json_shape(golden: Path, tmp_path: Path) -> None:
    run = Run(
        {
            "a": CaseRun([RankedItem("x", 2.0, "t1")], latency_ms=10.0),
            "b": CaseRun([RankedItem("q")], latency_ms=30.0),
        }
    )
    result = ragaudit.evaluate(golden, run, "nDCG@10,R@5")
    out = tmp_path / "r" / "report.json"
    result.write_json(out)
    report = json.loads(out.read_text())
    assert report["schema_version"] == 1 and report["kind"] == "eval"
    assert report["dataset"]["sha256"] == result.dataset["sha256"] and report["dataset"]["cases"] == 4
    assert set(report["policy"]) >= {
        "gain",
        "relevance_threshold",
        "unanswerable",
        "missing",
        "duplicates",
        "ties",
    }
    assert set(report["metrics"]) == {"nDCG@10", "R@5"}
    assert [c["id"] for c in report["per_case"]] == ["a", "b", "c", "u"]
    first = report["per_case"][0]
    assert first["retrieved"] == [
        {"chunk_id": "x", "score": 2.0, "grade": 3, "relevant": True, "tenant_id": "t1"}
    ]
    assert report["latency_ms"]["p50"] == pytest.approx(20.0)
    assert report["missing"] == ["c"]


def test_no_answerable_case_is_an_input_error_not_nan_means(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "g.jsonl", [json.dumps({"id": "u", "query": "q", "relevant_chunk_ids": []})]
    )
    with pytest.raises(InputError, match="no case can be scored") as caught:
        ragaudit.evaluate(path, {"u": ["x"]}, "R@5")
    assert "relevant" in caught.value.problem.fix


class DictRetriever:
    """A tiny in-memory retriever: returns the tenant's chunks whose text shares a word with the query."""

    def __init__(self, chunks: dict[str, tuple[str, str]]) -> None:
        self.chunks = chunks

    async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[ragaudit.RetrievedChunk]:
        words = set(query.split())
        hits = [
            cid
            for cid, (tenant, text) in sorted(self.chunks.items())
            if tenant == tenant_id and words & set(text.split())
        ]
        if query == "boom":
            raise RuntimeError("backend exploded")
        return [
            {
                "chunk_id": cid,
                "score": 1.0,
                "content": self.chunks[cid][1],
                "source_id": cid,
                "tenant_id": tenant_id,
            }
            for cid in hits[:top_k]
        ]


def test_evaluate_retriever_survives_unanswerable_and_failing_cases(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "g.jsonl",
        [
            json.dumps(
                {"id": "1", "query": "refund policy", "relevant_chunk_ids": ["r"], "relevance": {"r": 3}}
            ),
            json.dumps({"id": "2", "query": "ceo shoe size", "relevant_chunk_ids": []}),
            json.dumps({"id": "3", "query": "boom", "relevant_chunk_ids": ["r"]}),
            json.dumps({"id": "4", "query": "refund", "tenant_id": "other", "relevant_chunk_ids": ["r"]}),
        ],
    )
    retriever = DictRetriever({"r": ("acme", "refund policy text"), "s": ("other", "refund elsewhere")})
    with pytest.raises(ragaudit.RunFailedError, match="1 of 4 cases failed"):  # the CLI's rule, by default
        asyncio.run(ragaudit.evaluate_retriever(retriever, path, tenant_id="acme", top_k=5))
    result = asyncio.run(
        ragaudit.evaluate_retriever(retriever, path, tenant_id="acme", top_k=5, max_error_rate=None)
    )
    assert isinstance(result, ragaudit.EvalResult)
    # the CLI live path's defaults (were R@5,P@5,MRR,nDCG@5 at top_k=5 before issue 11)
    assert set(result.metrics) == {"nDCG@10", "R@5", "R@10", "R@100", "P@5", "MRR@10", "MAP@100", "Hit@5"}
    assert result.to_dict()["retrieval"]["top_k"] == 5
    by_id = {c.id: c for c in result.per_case}
    assert by_id["1"].metrics["R@5"] == 1.0 and by_id["1"].latency_ms is not None
    assert by_id["2"].status == "unanswerable"
    assert by_id["3"].status == "error" and "backend exploded" in (by_id["3"].error or "")
    assert [r.chunk_id for r in by_id["4"].retrieved] == ["s"]  # the case's own tenant wins
    assert result.metrics["R@5"] == pytest.approx(1 / 3)


def test_evaluate_retriever_without_any_tenant_records_an_error(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "g.jsonl", [json.dumps({"id": "1", "query": "refund", "relevant_chunk_ids": ["r"]})]
    )
    result = asyncio.run(ragaudit.evaluate_retriever(DictRetriever({}), path, top_k=3, max_error_rate=None))
    assert result.per_case[0].status == "error" and "no tenant" in (result.per_case[0].error or "")


def test_leaks_recorded_by_the_runner_survive_a_round_trip_through_the_results_file(
    golden: Path, tmp_path: Path
) -> None:
    line = {
        "id": "a",
        "retrieved": [{"chunk_id": "x", "tenant_id": "t9"}],
        "tenant_id": "t1",
        "attempts": 2,
        "leaks": [{"chunk_id": "x", "rank": 1, "claimed_tenant": "t9", "caller_tenant": "t1"}],
    }
    run_path = write_lines(tmp_path / "results.jsonl", [json.dumps(line)])
    result = ragaudit.evaluate(golden, run_path, "R@5")
    assert result.to_dict()["security"]["leaks"] == 1
    assert result.leaks()[0] == {
        "case_id": "a",
        "chunk_id": "x",
        "rank": 1,
        "claimed_tenant": "t9",
        "caller_tenant": "t1",
    }
