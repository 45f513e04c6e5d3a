"""Curation aids: version siblings and drafted unanswerable probes, through pool, workbench state and merge."""

from __future__ import annotations

import json
from pathlib import Path
from types import MappingProxyType

import pytest

from conftest import KB
from label_fixtures import small_golden, trec_run
from ragaudit.cli.main import main
from ragaudit.corpus.loading import load_corpus
from ragaudit.corpus.model import Document
from ragaudit.labeling.drafts import unanswerable_drafts
from ragaudit.labeling.judgments import JudgmentLog
from ragaudit.labeling.pool import load_pool
from ragaudit.labeling.session import LabelSession
from ragaudit.labeling.siblings import version_siblings
from ragaudit.text.words import normalize_text


def _doc(doc_id: str, title: str, tenant: str = "t", **meta: object) -> Document:
    return Document(doc_id, tenant, "text", title, MappingProxyType(dict(meta)))


def test_demo_kb_version_groups_match_its_superseded_documents() -> None:
    docs = load_corpus(KB / "corpus.jsonl").documents
    versions = version_siblings(docs)
    superseded = {d.doc_id for d in docs if d.status == "superseded"}
    # every superseded document has a newer sibling, and no active one does
    assert {d for d, v in versions.items() if v.newer} == superseded
    assert versions["acme-warranty-policy-v1"].newer == ("acme-warranty-policy-v2",)
    assert versions["acme-warranty-policy-v2"].older == ("acme-warranty-policy-v1",)


def test_sibling_rules_links_ids_titles_and_tenants() -> None:
    docs = [
        _doc("refund-2022", "Refund policy for annual plans (2022)", version="1"),
        _doc("refund-current", "Refund policy for annual plans", version="2"),
        _doc("sla-a", "Service level agreement", supersedes="sla-old"),
        _doc("sla-old", "SLA (old text)"),
        _doc("guide-v1", "Guide"),
        _doc("guide-v2", "Guide"),
        _doc("other-tenant-v1", "Guide", tenant="u"),
        _doc("faq", "Frequently asked questions about billing"),
        _doc("faq-copy", "Frequently asked questions about billing"),  # same title, no marker: not versions
    ]
    v = version_siblings(docs)
    assert v["refund-2022"].newer == ("refund-current",)
    assert v["sla-old"].newer == ("sla-a",)
    assert v["guide-v1"].newer == ("guide-v2",)
    assert "other-tenant-v1" not in v
    assert "faq" not in v and "faq-copy" not in v


def test_unanswerable_drafts_name_no_entity_of_the_asking_tenant() -> None:
    docs = load_corpus(KB / "corpus.jsonl").documents
    drafts = unanswerable_drafts(docs, per_tenant=4)
    assert {d.tenant_id for d in drafts} == {"acme", "globex", "initech"}
    assert all(sum(d.tenant_id == t for d in drafts) == 4 for t in ("acme", "globex", "initech"))
    for draft in drafts:
        entity = draft.query.removeprefix("What does ").split(" cover,")[0]
        own = [normalize_text(f"{d.title} {d.text}") for d in docs if d.tenant_id == draft.tenant_id]
        assert not any(normalize_text(entity) in text for text in own), draft
        theirs = [normalize_text(f"{d.title} {d.text}") for d in docs if d.tenant_id != draft.tenant_id]
        assert any(normalize_text(entity) in text for text in theirs), draft


def test_pool_carries_versions_and_drafts_and_merge_keeps_only_accepted_drafts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    golden = small_golden(tmp_path)
    run = trec_run(
        tmp_path, "sys", {"acme-warranty-001": ["acme-warranty-policy-v2", "acme-warranty-policy-v1"]}
    )
    out = tmp_path / "pool.jsonl"
    args = ["pool", "--dataset", str(golden), "--corpus", str(KB / "corpus.jsonl"), "--runs", str(run)]
    assert main([*args, "--draft-unanswerable", "1", "--out", str(out)]) == 0
    assert "3 drafted unanswerable probes included" in capsys.readouterr().out
    pool = load_pool(out)
    drafts = [c for c in pool.cases if c.draft]
    assert [c.tenant_id for c in drafts] == ["acme", "globex", "initech"]
    assert not any(c.unanswerable for c in drafts)
    warranty = next(c for c in pool.cases if c.case_id == "acme-warranty-001")
    old = next(c for c in warranty.candidates if c.chunk_id == "acme-warranty-policy-v1")
    assert old.versions is not None and old.versions.newer == ("acme-warranty-policy-v2",)
    raw = json.loads(out.read_text().splitlines()[2])
    assert raw["candidates"][1]["versions"]["newer"] == ["acme-warranty-policy-v2"]
    # accept one draft, leave the others: merge keeps the accepted one only
    log = JudgmentLog(tmp_path / "ana.jsonl", "ana", {"pool": str(out)})
    session = LabelSession(pool, log)
    session.unanswerable({"case_id": drafts[0].case_id, "value": True})
    log.close()
    golden_out = tmp_path / "golden.jsonl"
    assert main(["label", "merge", str(tmp_path / "ana.jsonl"), "--into", str(golden_out)]) == 0
    assert "2 drafted unanswerable probes not accepted (dropped)" in capsys.readouterr().out
    merged = {json.loads(line)["id"]: json.loads(line) for line in golden_out.read_text().splitlines()}
    assert merged[drafts[0].case_id]["relevant_chunk_ids"] == []
    assert merged[drafts[0].case_id]["tags"] == ["unanswerable", "drafted-probe"]
    assert drafts[1].case_id not in merged and drafts[2].case_id not in merged
