"""The Python API fails loudly (issue 23 item 5): a retriever outside the protocol is an InputError
before any query, with the CLI's words; a run whose cases failed raises RunFailedError (by default) or
on ``raise_for_errors()``; a ``{case: {id: score}}`` run is ranked by score with trec_eval's tie rule,
a list by position. docs/python-api.md's examples run here, as written."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

import ragaudit
from ragaudit.cli.main import main

DOC = Path(__file__).resolve().parents[1] / "docs" / "python-api.md"
GOLDEN = (
    '{"id": "q1", "query": "refund window", "tenant_id": "acme", "relevance": {"d2": 2, "d1": 1}}\n'
    '{"id": "q2", "query": "api limit", "tenant_id": "acme", "relevance": {"d3": 1}}\n'
)


def test_the_documented_examples_run_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.DOTALL)
    assert len(blocks) >= 4
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {"__name__": "python_api_doc"}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)  # the page's own examples
    printed = capsys.readouterr().out
    assert "retriever: SyncSearch.search is not async" in printed
    assert (
        "WrongKeywords.search does not take the keyword(s) tenant_id, query, top_k (it takes: q, k)"
        in printed
    )
    assert "Flaky: 1 of 3 cases failed (33.3%; max_error_rate allows 0.0%)" in printed
    assert "first failures: q2: RuntimeError: index offline" in printed
    assert "StandIn object with invoke() but no search method" in printed
    # the fix names the adapter that sends the tenant filter, not a hand-written wrapper without one
    assert "LangChainRetriever(retriever) from ragaudit.retrieval.adapters.langchain" in printed
    assert "tenant acme: nDCG@10 0.79 < floor 0.90; worst queries: acme-refund-002 (0.31)" in printed


class _Sync:
    def search(self, *, tenant_id: str, query: str, top_k: int) -> list[Any]:
        return []


class _Positional:
    async def search(self, q: str, k: int) -> list[Any]:
        return []


class _NoSearch:
    pass


class _OnlyInvoke:
    def invoke(self, query: str) -> list[Any]:
        return []


def make_sync() -> _Sync:
    return _Sync()


def make_positional() -> _Positional:
    return _Positional()


def make_no_search() -> _NoSearch:
    return _NoSearch()


def make_only_invoke() -> _OnlyInvoke:
    return _OnlyInvoke()


def _api_error(retriever: object, golden: Path) -> str:
    with pytest.raises(ragaudit.InputError) as caught:
        asyncio.run(ragaudit.evaluate_retriever(retriever, golden))  # type: ignore[arg-type]
    return str(caught.value.problem.message)


@pytest.mark.parametrize(
    ("factory", "words"),
    [
        ("make_sync", "_Sync.search is not async"),
        ("make_positional", "_Positional.search does not take the keyword(s) tenant_id, query, top_k"),
        ("make_no_search", "got a _NoSearch object without a search method"),
        ("make_only_invoke", "got a _OnlyInvoke object with invoke() but no search method"),
    ],
)
def test_a_retriever_outside_the_protocol_is_refused_before_any_query_in_the_cli_s_words(
    factory: str,
    words: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    golden = tmp_path / "g.jsonl"
    golden.write_text(GOLDEN, encoding="utf-8")
    message = _api_error(globals()[factory](), golden)
    assert words in message
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    code = main(
        ["eval", "--dataset", str(golden), "--retriever", f"test_python_api:{factory}", "--no-history"]
    )
    assert code == 2
    assert message in capsys.readouterr().err  # the same words from the command line


def test_a_class_instead_of_an_instance_is_refused(tmp_path: Path) -> None:
    golden = tmp_path / "g.jsonl"
    golden.write_text(GOLDEN, encoding="utf-8")
    assert "is a class, not a retriever" in _api_error(_Sync, golden)


class _Broken:
    async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[Any]:
        raise KeyError("index")


def test_every_case_failing_raises_with_the_result_and_none_opts_out(tmp_path: Path) -> None:
    golden = tmp_path / "g.jsonl"
    golden.write_text(GOLDEN, encoding="utf-8")
    with pytest.raises(ragaudit.RunFailedError, match=r"2 of 2 cases failed \(100.0%") as caught:
        asyncio.run(ragaudit.evaluate_retriever(_Broken(), golden))
    assert "no case could be scored" in str(caught.value)
    assert caught.value.result.counts.errors == 2  # type: ignore[attr-defined]
    result = asyncio.run(ragaudit.evaluate_retriever(_Broken(), golden, max_error_rate=None))
    assert result.metrics["nDCG@10"] == 0.0
    with pytest.raises(ragaudit.RunFailedError):
        result.raise_for_errors(max_error_rate=1.0)  # nothing scored: a tolerance does not earn a pass


def test_a_scored_dict_run_is_ranked_by_score_with_trec_eval_ties_and_a_list_by_position(
    tmp_path: Path,
) -> None:
    golden = tmp_path / "g.jsonl"
    golden.write_text(GOLDEN, encoding="utf-8")
    a = ragaudit.evaluate(golden, {"q1": {"d1": 0.2, "d2": 0.9, "d9": 0.5}}, metrics="nDCG@10")
    b = ragaudit.evaluate(golden, {"q1": {"d9": 0.5, "d2": 0.9, "d1": 0.2}}, metrics="nDCG@10")
    assert a.per_case[0].metrics == b.per_case[0].metrics
    assert [r.chunk_id for r in a.per_case[0].retrieved] == ["d2", "d9", "d1"]
    tie = ragaudit.evaluate(golden, {"q2": {"d3": 1.0, "d4": 1.0}}, metrics="MRR")
    assert [r.chunk_id for r in tie.per_case[1].retrieved] == ["d4", "d3"]  # docno descending
    listed = ragaudit.evaluate(golden, {"q1": ["d1", "d2"]}, metrics="MRR")
    assert [r.chunk_id for r in listed.per_case[0].retrieved] == ["d1", "d2"]
    with pytest.raises(ragaudit.InputError, match="not a number"):
        ragaudit.evaluate(golden, {"q1": {"d1": "high"}})
