"""``ragaudit pool`` on the demo KB: real BM25 plus a run file, grades carried over, new queries, effort."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import KB
from label_fixtures import small_golden, trec_run
from ragaudit.cli.main import main
from ragaudit.labeling.pool import load_pool

pytest.importorskip("bm25s")


def test_pool_unions_bm25_and_a_run_file_with_ranks_and_carried_over_grades(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    golden = small_golden(tmp_path)
    run = trec_run(
        tmp_path, "manual", {"acme-pricing-001": ["acme-contract-severance", "acme-pricing-professional-v3"]}
    )
    out = tmp_path / "pool.jsonl"
    args = ["pool", "--dataset", str(golden), "--corpus", str(KB / "corpus.jsonl")]
    code = main(
        [*args, "--pipelines", "bm25", "--runs", str(run), "--depth", "5", "--out", str(out), "--no-progress"]
    )
    assert code == 0
    pool = load_pool(out)
    assert pool.header["systems"] == ["bm25", "manual"]
    assert pool.header["depth"] == 5
    assert [c.case_id for c in pool.cases] == [
        "acme-pricing-001",
        "acme-warranty-001",
        "globex-pricing-001",
        "initech-unanswerable-001",
    ]
    case = pool.cases[0]
    by_id = {c.chunk_id: c for c in case.candidates}
    bm25_top = [c.chunk_id for c in case.candidates if "bm25" in c.found_by]
    assert len(bm25_top) == 5
    assert sorted(c.found_by["bm25"] for c in case.candidates if "bm25" in c.found_by) == [1, 2, 3, 4, 5]
    # the run's own candidates are pooled with the run's ranks, text from the corpus
    assert by_id["acme-contract-severance"].found_by["manual"] == 1
    assert by_id["acme-pricing-professional-v3"].found_by["manual"] == 2
    assert "Professional" in by_id["acme-pricing-professional-v3"].text.title
    assert by_id["acme-pricing-professional-v3"].text.start == 0
    assert by_id["acme-pricing-professional-v3"].text.doc_id == "acme-pricing-professional-v3"
    # grades the golden set already has are carried over, the rest are to judge
    assert by_id["acme-pricing-professional-v3"].prior_grade == 3
    assert by_id["acme-contract-severance"].prior_grade is None
    assert case.judged["acme-pricing-professional-v2"] == 0
    assert pool.cases[3].unanswerable is True
    # every tenant's candidates come from its own documents (bm25 filters by tenant)
    for c in pool.cases:
        for cand in c.candidates:
            if "bm25" in cand.found_by:
                assert cand.chunk_id.startswith(c.tenant_id or "")
    printed = capsys.readouterr().out
    assert f"{pool.unjudged} to judge" in printed
    assert f"pooled {pool.candidates} candidates for 4 cases from bm25, manual (depth 5)" in printed
    shares = pool.judged_share()
    manual = [c for c in pool.cases if any("manual" in cand.found_by for cand in c.candidates)]
    assert shares["manual"] == 0.5  # one of its two pooled candidates is graded in the golden set
    assert len(manual) == 1
    assert (
        f"judged@5 before labeling (share of each system's pool already graded): bm25 {shares['bm25']:.0%}, manual 50%"
        in printed
    )
    assert (
        "warning: under 80% judged: " in printed
        and "manual" in printed.split("warning: under 80% judged: ")[1]
    )
    row = next(line for line in printed.splitlines() if line.startswith("acme-pricing-001"))
    assert row.split()[-1] == str(case.unjudged)


def test_pool_new_queries_without_labels(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    queries = tmp_path / "queries.jsonl"
    queries.write_text(
        json.dumps({"id": "new-1", "query": "how long is the hardware warranty", "tenant_id": "acme"})
        + "\n"
        + json.dumps({"id": "new-2", "query": "refund window annual plan", "tenant_id": "globex"})
        + "\n",
        encoding="utf-8",
    )
    out = tmp_path / "pool.jsonl"
    args = ["pool", "--queries", str(queries), "--corpus", str(KB / "corpus.jsonl"), "--pipelines", "bm25"]
    assert main([*args, "--depth", "4", "--out", str(out), "--no-progress"]) == 0
    pool = load_pool(out)
    assert [len(c.candidates) for c in pool.cases] == [4, 4]
    assert pool.unjudged == 8
    assert all(cand.chunk_id.startswith("globex") for cand in pool.cases[1].candidates)
    assert any("warranty" in cand.chunk_id for cand in pool.cases[0].candidates)
    assert "8 to judge" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--runs", "x.trec"], "nothing to pool for"),
        (["--dataset", "GOLDEN"], "no system to pool"),
        (["--dataset", "GOLDEN", "--pipelines", "bm25"], "pipelines need a corpus"),
        (["--dataset", "GOLDEN", "--runs", "RUN", "--depth", "0"], "--depth"),
    ],
)
def test_pool_usage_errors_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    golden = small_golden(tmp_path)
    run = trec_run(tmp_path, "r", {"acme-pricing-001": ["acme-faq-api"]})
    extra = [str(golden) if a == "GOLDEN" else str(run) if a == "RUN" else a for a in extra]
    assert main(["pool", *extra, "--out", str(tmp_path / "p.jsonl")]) == 2
    assert message in capsys.readouterr().err


def test_pool_from_a_live_endpoint_takes_its_texts(tmp_path: Path) -> None:
    """A real HTTP service on 127.0.0.1: its results are pooled with the content and offsets it sends."""
    from servers import LocalServer, Reply, Request

    def handler(request: Request) -> Reply:
        body = request.json()
        tenant = body["tenant_id"]
        return Reply(
            body=[
                {
                    "chunk_id": f"{tenant}-doc#{i}",
                    "score": 1.0 - i / 10,
                    "tenant_id": tenant,
                    "content": f"chunk {i} of {tenant} for {body['query'][:10]}",
                    "metadata": {"doc_id": f"{tenant}-doc", "start": 100 * i, "title": "Doc"},
                }
                for i in range(body["top_k"])
            ]
        )

    golden = small_golden(tmp_path)
    out = tmp_path / "pool.jsonl"
    with LocalServer(handler) as server:
        args = ["pool", "--dataset", str(golden), "--endpoint", server.url, "--depth", "3", "--out", str(out)]
        assert main([*args, "--no-progress"]) == 0
        assert {hit.json()["top_k"] for hit in server.hits} == {3}
    pool = load_pool(out)
    assert pool.header["systems"] == ["endpoint"]
    assert pool.header["endpoint"] == server.url
    cand = pool.cases[0].candidates[2]
    assert (cand.chunk_id, cand.found_by, cand.text.doc_id, cand.text.start) == (
        "acme-doc#2",
        {"endpoint": 3},
        "acme-doc",
        200,
    )
    assert cand.text.text.startswith("chunk 2 of acme for ")
