"""Stale-version audit: superseded versions in the top k, per pipeline, with the offending cases."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import MappingProxyType

import pytest

from conftest import KB
from ragaudit.cli.main import main
from ragaudit.corpus.loading import load_corpus
from ragaudit.corpus.model import Document
from ragaudit.data.loading import load_dataset
from ragaudit.data.run import CaseRun, RankedItem, Run
from ragaudit.data.schema import GoldenCase
from ragaudit.pipelines.build import build_pipeline
from ragaudit.pipelines.config import preset
from ragaudit.runner.execute import run_cases
from ragaudit.security.ownership import OwnershipIndex
from ragaudit.security.stale_audit import active_versions, audit_stale


def doc(doc_id: str, status: str = "active", **meta: str) -> Document:
    return Document(doc_id, "t", f"text of {doc_id} " * 3, "", MappingProxyType({"status": status, **meta}))


INDEX = OwnershipIndex.build(
    [
        doc("a-v1", "superseded", superseded_by="a-v2", source_id="a"),
        doc("a-v2", source_id="a"),
        doc("b-v1", "superseded", source_id="b"),  # no superseded_by: found through source_id
        doc("b-v2", source_id="b"),
        doc("c"),
    ]
)


def case_run(*ids: str) -> CaseRun:
    return CaseRun([RankedItem(i) for i in ids])


def test_figures_follow_the_formulas() -> None:
    cases = [GoldenCase(f"q{i}", f"query {i}", ()) for i in range(5)]
    run = Run(
        {
            "q0": case_run("a-v1", "a-v2", "c"),  # stale at 1, active at 2: above it
            "q1": case_run("b-v2", "b-v1#3"),  # a chunk of b-v1, below its active version
            "q2": case_run("c"),
            "q3": CaseRun([], "HTTP 500"),  # failed: counted apart, not scored
            "q4": case_run(),
        }
    )
    audit = audit_stale(run, cases, INDEX, k=2)
    assert (audit.scored, audit.failed, audit.superseded_in_corpus) == (4, 1, 2)
    assert audit.share == pytest.approx((1 / 2 + 1 / 2 + 0 + 0) / 4)
    assert audit.rate == pytest.approx(2 / 4) and audit.above_active == pytest.approx(1 / 4)
    first, second = audit.offending
    assert [(s.rank, s.doc_id, s.active_doc_id, s.active_rank, s.above_active) for s in first.stale] == [
        (1, "a-v1", "a-v2", 2, True)
    ]
    assert [(s.chunk_id, s.doc_id, s.active_doc_id, s.active_rank) for s in second.stale] == [
        ("b-v1#3", "b-v1", "b-v2", 1)
    ]
    assert audit.metrics() == {
        "stale_share@2": audit.share,
        "stale_rate@2": audit.rate,
        "stale_above_active@2": audit.above_active,
    }


def test_content_attributes_an_unknown_id_and_the_active_version_may_be_missing() -> None:
    items = [RankedItem("opaque", content="text of b-v1 text of b-v1 text of b-v1")]
    audit = audit_stale(Run({"q": CaseRun(items)}), [GoldenCase("q", "x", ())], INDEX, k=5)
    stale = audit.offending[0].stale[0]
    assert (stale.doc_id, stale.active_rank, stale.above_active) == ("b-v1", None, True)
    assert active_versions(INDEX.documents) == {"a-v1": "a-v2", "b-v1": "b-v2"}


def test_demo_kb_bm25(tmp_path: Path) -> None:
    corpus = load_corpus(KB / "corpus.jsonl")
    dataset = load_dataset(KB / "golden.jsonl")
    built = build_pipeline(preset("bm25"), corpus)
    run = asyncio.run(run_cases(built.retriever, dataset.cases, 5, progress=False))
    audit = audit_stale(run, dataset.cases, OwnershipIndex.build(corpus.documents, built.chunks), 5, "bm25")
    assert audit.superseded_in_corpus == 15 and audit.scored == 84 and audit.failed == 0
    by_hand = [
        sum(corpus.by_id[i.chunk_id].status == "superseded" for i in c.items[:5]) / len(c.items[:5])
        for c in run.cases.values()
        if c.items
    ]
    assert audit.share == pytest.approx(sum(by_hand) / 84)
    assert 0 < audit.share < audit.rate <= 1
    trap = {c.id for c in dataset.cases if "superseded-trap" in c.tags}
    offending = {c.case_id for c in audit.offending}
    assert offending & trap  # the KB's superseded-version traps do catch BM25
    for case in audit.offending:
        for stale in case.stale:
            assert corpus.by_id[stale.doc_id].status == "superseded"
            assert corpus.by_id[stale.active_doc_id or ""].status == "active"


def test_cli_per_pipeline_and_run_file_with_gate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_file = tmp_path / "run.jsonl"
    run_file.write_text(
        json.dumps(
            {
                "id": "acme-pricing-001",
                "retrieved": ["acme-pricing-professional-v2", "acme-pricing-professional-v3"],
            }
        )
        + "\n",
        encoding="utf-8",
    )
    out = tmp_path / "stale.json"
    argv = [
        "audit-stale",
        "--dataset", str(KB / "golden.jsonl"),
        "--corpus", str(KB / "corpus.jsonl"),
        "--pipeline", "bm25",
        "--run", str(run_file),
        "--k", "3",
        "--out", str(out),
        "--no-progress",
    ]  # fmt: skip
    assert main(argv) == 1  # the run file answers one case of 84: the exit rule fails the run
    captured = capsys.readouterr()
    printed = captured.out
    assert "stale_share@3" in printed and "offending cases" in printed
    assert "83 of 84 cases failed" in captured.err and "83 missing" in captured.err
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["kind"] == "stale-audit" and [s["name"] for s in report["sources"]] == ["bm25", "run"]
    bm25, from_file = report["sources"]
    assert bm25["superseded_documents_in_corpus"] == 15 and bm25["errors"]["failed"] == 0
    assert from_file["errors"]["by_kind"] == {"missing": 83}  # the run file answers one case of 84
    assert from_file["offending_cases"][0]["stale"][0]["doc_id"] == "acme-pricing-professional-v2"
    tolerant = [*argv, "--max-error-rate", "1"]  # the gaps of the run file tolerated: only staleness gates
    assert main([*tolerant, "--max-stale-share", "0.05"]) == 1
    assert "above 0.05: bm25" in capsys.readouterr().out
    assert main([*tolerant, "--max-stale-share", "0.9"]) == 0


def test_cli_needs_a_source(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["audit-stale", "--dataset", str(KB / "golden.jsonl"), "--corpus", str(KB / "corpus.jsonl")])
    assert code == 2 and "nothing to audit" in capsys.readouterr().err


def test_a_corpus_marking_nothing_superseded_is_not_verified_and_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without superseded versions no stale chunk can be served: a stale share of 0 checks nothing, so
    the audit says NOT VERIFIED and exits 1 (whatever --max-stale-share and --max-error-rate allow)."""
    corpus = tmp_path / "corpus.jsonl"
    lines = []
    for line in (KB / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        record.pop("metadata", None)  # no version information at all
        lines.append(json.dumps(record))
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "stale.json"
    argv = [
        "audit-stale", "--dataset", str(KB / "golden.jsonl"), "--corpus", str(corpus),
        "--pipeline", "bm25", "--no-progress", "--out", str(out),
    ]  # fmt: skip
    assert main([*argv, "--max-stale-share", "0.9", "--max-error-rate", "1"]) == 1
    captured = capsys.readouterr()
    assert "stale versions: NOT VERIFIED - the corpus marks no document superseded" in captured.err
    assert "stale versions: NOT VERIFIED" in captured.out  # the table says it too, beside its zeros
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["sources"][0]["superseded_documents_in_corpus"] == 0
    assert report["sources"][0]["not_verified"].startswith("the corpus marks no document superseded")
