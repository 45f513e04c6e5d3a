"""A live run that asks for fewer results than a metric's cut-off (``--top-k 5`` with ``nDCG@10``)
says so: those figures are of a shorter list than their name says, and a report, a benchmark and the
terminal carry the note instead of passing them off as the system's nDCG@10."""

from __future__ import annotations

import asyncio
from pathlib import Path

import ragaudit
from ragaudit.evaluation.evaluate import cut_by_top_k, evaluate
from ragaudit.metrics.names import parse_metrics

GOLDEN = (
    '{"id": "q1", "query": "refund window", "tenant_id": "acme", "relevance": {"d7": 1}}\n'
    '{"id": "q2", "query": "api limit", "tenant_id": "acme", "relevance": {"d1": 1}}\n'
)


class SevenDeep:
    """Returns d1..d7 (q1's relevant chunk d7 sits at rank 7), truncated at ``top_k``."""

    async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[dict[str, object]]:
        ids = [f"d{i}" for i in range(1, 8)]
        return [
            {"chunk_id": d, "score": 1.0 / r, "tenant_id": tenant_id} for r, d in enumerate(ids[:top_k], 1)
        ]


def test_the_note_names_each_metric_deeper_than_top_k() -> None:
    specs = parse_metrics("nDCG@10,R@5,MRR,R@100")
    note = cut_by_top_k(specs, {"retrieval": {"top_k": 5}})
    assert note is not None
    assert note.startswith("nDCG@10, R@100 scored on the top 5 only")
    assert "--top-k 100" in note
    assert cut_by_top_k(specs, {"retrieval": {"top_k": 100}}) is None
    assert cut_by_top_k(specs, None) is None  # a run file: no top_k was asked


def test_a_shallow_live_run_carries_the_note_in_its_report(tmp_path: Path) -> None:
    golden = tmp_path / "golden.jsonl"
    golden.write_text(GOLDEN, encoding="utf-8")
    shallow = asyncio.run(ragaudit.evaluate_retriever(SevenDeep(), golden, metrics="R@10,R@5", top_k=5))
    deep = asyncio.run(ragaudit.evaluate_retriever(SevenDeep(), golden, metrics="R@10,R@5", top_k=10))
    # the same system: R@10 is 1.0 at full depth and 0.5 when only 5 results were asked for
    assert deep.metrics["R@10"] == 1.0 and shallow.metrics["R@10"] == 0.5
    assert deep.notes == ()
    assert len(shallow.notes) == 1 and shallow.notes[0].startswith("R@10 scored on the top 5 only")
    assert shallow.notes[0] in shallow.to_dict()["notes"]
    assert "note: R@10 scored on the top 5 only" in shallow.terminal()


def test_evaluate_with_a_retrieval_context_adds_the_note(tmp_path: Path) -> None:
    golden = tmp_path / "golden.jsonl"
    golden.write_text(GOLDEN, encoding="utf-8")
    run = {"q1": ["d1", "d2", "d3"], "q2": ["d1", "d2", "d3"]}
    result = evaluate(golden, run, "nDCG@10,P@3", context={"retrieval": {"top_k": 3}})
    assert [n.split(" scored")[0] for n in result.notes] == ["nDCG@10"]


def test_a_shallow_benchmark_says_so_once() -> None:
    kb = Path(ragaudit.__file__).parent / "demo_data" / "kb"
    shallow = ragaudit.bench(
        kb / "golden.jsonl", kb / "corpus.jsonl", ["bm25"], metrics="nDCG@10,R@5", top_k=5, resamples=200
    )
    notes = shallow.to_dict()["notes"]
    assert [n for n in notes if "scored on the top 5 only" in n] == [
        n for n in notes if n.startswith("nDCG@10 scored on the top 5 only")
    ]
    assert len([n for n in notes if "scored on the top 5 only" in n]) == 1
    deep = ragaudit.bench(
        kb / "golden.jsonl", kb / "corpus.jsonl", ["bm25"], metrics="nDCG@10,R@5", top_k=10, resamples=200
    )
    assert not [n for n in deep.to_dict()["notes"] if "scored on the top" in n]


class Greedy:
    """Ignores ``top_k``: always returns d1..d20."""

    async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[dict[str, object]]:
        return [{"chunk_id": f"d{i}", "score": 1.0 / i, "tenant_id": tenant_id} for i in range(1, 21)]


def test_a_source_that_returned_longer_lists_than_asked_gets_no_cut_note(tmp_path: Path) -> None:
    golden = tmp_path / "golden.jsonl"
    golden.write_text(GOLDEN, encoding="utf-8")
    result = asyncio.run(ragaudit.evaluate_retriever(Greedy(), golden, metrics="R@10", top_k=5))
    assert result.metrics["R@10"] == 1.0  # d7 at rank 7 was returned and counted: nothing was cut
    assert not [n for n in result.notes if "scored on the top" in n]
