"""A TREC qrels file has judgments and no questions: a live source (pipeline, endpoint, retriever) asked
"" for every case returned nothing, and eval printed nDCG@10 0.0000 over "75 of 75 answerable scored",
exit 0. Now the run is refused before a query is sent (exit 2), naming the cases and the fix."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import ragaudit
from ragaudit.cli.main import main
from ragaudit.errors import InputError


class Echo:
    async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[dict[str, object]]:
        return [{"chunk_id": "d1", "score": 1.0, "tenant_id": tenant_id}]


def _qrels(folder: Path) -> Path:
    path = folder / "judgments.qrels"
    path.write_text("q1 0 d1 1\nq2 0 d2 2\n", encoding="utf-8")
    return path


def test_the_python_api_refuses_cases_without_a_question(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"2 of 2 case\(s\) have no question to send \('q1', 'q2'\)"):
        asyncio.run(ragaudit.evaluate_retriever(Echo(), _qrels(tmp_path), tenant_id="acme"))


def test_eval_with_a_pipeline_on_a_qrels_file_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"doc_id": "d1", "tenant_id": "default", "text": "refund window"}\n', encoding="utf-8")
    code = main(["eval", "--dataset", str(_qrels(tmp_path)), "--corpus", str(corpus), "--pipeline", "bm25",
                 "--no-history"])  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert "a TREC qrels file holds judgments, not queries" in err and "score a run file with --run" in err


def test_a_run_file_on_the_same_qrels_is_still_scored(tmp_path: Path) -> None:
    result = ragaudit.evaluate(_qrels(tmp_path), {"q1": ["d1"], "q2": ["d2"]}, metrics="MRR")
    assert result.metrics["MRR"] == 1.0
