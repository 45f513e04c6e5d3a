"""Tenant isolation is verified only by what was checked (issue 22, items 3-6).

- every command that sees returned chunks (``eval``, ``bench``, ``context``) exits 1 on a
  cross-tenant chunk, with the SECURITY line;
- shared documents (``--shared-tenant``, ``[security] shared_tenants``): a public help centre served to
  every tenant is a leak without the flag, shared with it; another tenant's document still leaks;
- semantic attribution (``--attribute semantic``): summaries of the caller's own documents pass, summaries
  of other tenants' documents are a leak; exact attribution alone says *not verified* for both;
- the demo's gate is verified by a cross-tenant audit, and says "by corpus".
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from conftest import KB, write_lines
from ragaudit.cli.main import main
from ragaudit.corpus.chunkers import chunk_corpus, make_chunker
from ragaudit.corpus.loading import Corpus, load_corpus
from ragaudit.corpus.model import Chunk
from ragaudit.evaluation.compare import LoadedReport
from ragaudit.gates.checks import security_gate
from ragaudit.gates.policy import GatePolicy
from ragaudit.retrieval.bm25 import BM25Retriever
from ragaudit.retrieval.protocol import RetrievedChunk
from ragaudit.security.leaky import LEAKY, REWRITTEN_LEAKS, make_leaky
from ragaudit.security.leaky_rewritten import SummarisingRetriever
from ragaudit.security.leaky_shared import SharedHelpCentreRetriever
from ragaudit.security.ownership import OwnershipIndex
from ragaudit.security.probes import Probe, generate_probes
from ragaudit.security.tenant_audit import AuditOptions, TenantAudit, audit_tenants

ONE_PASS: dict[str, Any] = {"top_k_values": (10,), "concurrency_levels": (8,), "rounds": 1}
HELP_CENTRE = [
    ("public-help-login", "How to reset your password", "Open the sign-in page and choose forgot password. "
     "A reset link arrives by email within five minutes and stays valid for one hour."),
    ("public-help-invoices", "Where to find your invoices", "Invoices are listed under account settings, "
     "billing history. Each invoice can be downloaded as a PDF file or sent again by email."),
    ("public-help-contact", "How to contact support", "Support answers tickets on weekdays from eight to "
     "six. Urgent outages can be reported by phone at any hour of the day or night."),
]  # fmt: skip


def audit(retriever: Any, index: OwnershipIndex, probes: list[Probe], **options: Any) -> TenantAudit:
    return asyncio.run(audit_tenants(retriever, index, probes, AuditOptions(progress=False, **options)))


# ---------------------------------------------------------------- every command exits 1 on a leak


@pytest.fixture
def leaking_bm25(monkeypatch: pytest.MonkeyPatch) -> None:
    """The built-in BM25 retriever with a bug: every answer to ``acme`` also holds globex's best match."""
    search, search_many = BM25Retriever.search, BM25Retriever.search_many

    def many(self: BM25Retriever, tenant_id: str, queries: Sequence[str], top_k: int) -> list[Any]:
        answers = search_many(self, tenant_id, queries, top_k)
        if tenant_id != "acme":
            return answers
        foreign = search_many(self, "globex", queries, 1)
        return [[*a, *f] for a, f in zip(answers, foreign, strict=True)]

    async def one(self: BM25Retriever, *, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        answer = await search(self, tenant_id=tenant_id, query=query, top_k=top_k)
        if tenant_id == "acme":
            answer += await search(self, tenant_id="globex", query=query, top_k=1)
        return answer

    monkeypatch.setattr(BM25Retriever, "search_many", many)
    monkeypatch.setattr(BM25Retriever, "search", one)


DATA = ["--dataset", str(KB / "golden.jsonl"), "--corpus", str(KB / "corpus.jsonl")]


@pytest.mark.parametrize(
    "command",
    [
        ["eval", *DATA, "--pipeline", "bm25", "--metrics", "R@5", "--no-history", "--no-progress"],
        ["bench", *DATA, "--pipelines", "bm25", "--metrics", "R@5", "--no-history", "--no-progress"],
        ["context", *DATA, "--pipeline", "bm25"],
    ],
    ids=["eval", "bench", "context"],
)
def test_every_command_that_sees_chunks_exits_1_on_a_cross_tenant_chunk(
    command: list[str], leaking_bm25: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    extra = ["--out-dir", str(tmp_path)] if command[0] == "bench" else []
    assert main([*command, *extra]) == 1
    err = capsys.readouterr().err
    assert "SECURITY: " in err and "cross-tenant chunk(s) returned in" in err and "a release blocker" in err
    assert "exit 1: the run failed" in err


def test_an_honest_pipeline_exits_0_and_says_no_leak_seen_not_verified(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert (
        main(["eval", *DATA, "--pipeline", "bm25", "--metrics", "R@5", "--no-history", "--no-progress"]) == 0
    )
    out = capsys.readouterr().out
    assert "tenant isolation: NOT VERIFIED - no leak seen on 84 own-tenant queries (" in out
    assert "by corpus))" in out and "audit-tenants" in out


# ---------------------------------------------------------------- shared documents


@pytest.fixture(scope="module")
def with_help_centre(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo corpus plus a public help centre (tenant ``public``)."""
    lines = (KB / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    lines += [
        json.dumps({"doc_id": d, "tenant_id": "public", "title": t, "text": x}) for d, t, x in HELP_CENTRE
    ]
    return write_lines(tmp_path_factory.mktemp("shared") / "corpus.jsonl", lines)


@pytest.fixture(scope="module")
def shared_kb(with_help_centre: Path) -> tuple[Corpus, list[Chunk], OwnershipIndex, list[Probe]]:
    corpus = load_corpus(with_help_centre)
    chunks = chunk_corpus(corpus, make_chunker("whole"))
    probes = generate_probes(corpus.documents, per_tenant=6)
    return corpus, chunks, OwnershipIndex.build(corpus.documents, chunks), probes


def test_a_public_help_centre_is_a_leak_without_the_flag_and_shared_with_it(
    shared_kb: tuple[Corpus, list[Chunk], OwnershipIndex, list[Probe]],
) -> None:
    _, chunks, index, probes = shared_kb
    honest = SharedHelpCentreRetriever(chunks)
    unflagged = audit(honest, index, probes, **ONE_PASS)
    assert unflagged.verdict() == "leak" and {o for leak in unflagged.leaks for o in leak.owners} == {
        "public"
    }
    flagged = audit(honest, index, probes, shared_tenants=frozenset({"public"}), **ONE_PASS)
    assert flagged.verdict() == "clean" and flagged.shared_chunks > 0
    report = flagged.to_dict()
    assert report["shared_tenants"] == {"tenants": ["public"], "chunks": flagged.shared_chunks}
    assert (
        f"{flagged.shared_chunks} chunk(s) of shared tenants (public), allowed"
        in report["isolation"]["reason"]
    )
    assert not any(p.tenant_id == "public" for p in flagged.probes)  # its own probes are not asked as leaks
    leaky = SharedHelpCentreRetriever(chunks, also_from="globex")
    still = audit(leaky, index, probes, shared_tenants=frozenset({"public"}), **ONE_PASS)
    assert still.verdict() == "leak" and all("globex" in leak.owners for leak in still.leaks)


def _help_centre_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, corpus: Path) -> str:
    module = tmp_path / "help_centre_service.py"
    module.write_text(
        "from ragaudit.corpus.chunkers import chunk_corpus, make_chunker\n"
        "from ragaudit.corpus.loading import load_corpus\n"
        "from ragaudit.security.leaky_shared import SharedHelpCentreRetriever\n\n\n"
        "def _chunks():\n"
        f"    return chunk_corpus(load_corpus({str(corpus)!r}), make_chunker('whole'))\n\n\n"
        "def honest():\n    return SharedHelpCentreRetriever(_chunks())\n\n\n"
        "def leaky():\n    return SharedHelpCentreRetriever(_chunks(), also_from='globex')\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("help_centre_service", None)
    return "help_centre_service"


def test_shared_tenants_on_eval_audit_tenants_and_the_gate_policy(
    with_help_centre: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    module = _help_centre_module(tmp_path, monkeypatch, with_help_centre)
    data = ["--dataset", str(KB / "golden.jsonl"), "--corpus", str(with_help_centre)]
    quiet = ["--metrics", "R@5", "--no-history", "--no-progress"]
    shared = ["--shared-tenant", "public"]
    report = tmp_path / "eval.json"
    assert main(["eval", *data, "--retriever", f"{module}:honest", *quiet]) == 1  # public chunks: leaks
    assert "SECURITY: " in capsys.readouterr().err
    assert (
        main(["eval", *data, "--retriever", f"{module}:honest", *quiet, *shared, "--out", str(report)]) == 0
    )
    assert main(["eval", *data, "--retriever", f"{module}:leaky", *quiet, *shared]) == 1
    capsys.readouterr()
    base = ["audit-tenants", "--corpus", str(with_help_centre), "--no-progress", "--probes-per-tenant", "4",
            "--rounds", "1", "--top-k-values", "10", "--max-top-k", "10"]  # fmt: skip
    audit_path = tmp_path / "audit.json"
    assert main([*base, "--retriever", f"{module}:honest"]) == 1
    assert main([*base, "--retriever", f"{module}:honest", *shared, "--out", str(audit_path)]) == 0
    assert main([*base, "--retriever", f"{module}:leaky", *shared]) == 1
    capsys.readouterr()
    # the gate accepts shared chunks only when its policy lists the tenant as shared
    eval_report = LoadedReport("eval", str(report), json.loads(report.read_text(encoding="utf-8")))
    audited = [(str(audit_path), json.loads(audit_path.read_text(encoding="utf-8")))]
    assert eval_report.data["retrieval"]["shared_tenants"] == ["public"]
    strict = security_gate(eval_report, GatePolicy(), audited)
    assert strict.status == "not_verified" and "treated public as shared" in strict.summary
    alone = security_gate(eval_report, GatePolicy(), [])  # the eval report says what it allowed, too
    assert any("eval report" in n and "treated public as shared" in n for n in alone.notes)
    policy = GatePolicy(shared_tenants=("public",), min_audit_requests=0, min_probes_per_tenant=0)  # said so
    assert security_gate(eval_report, policy, audited).status == "pass"


# ---------------------------------------------------------------- semantic attribution


@pytest.fixture(scope="module")
def demo() -> Iterator[tuple[list[Chunk], OwnershipIndex, list[Probe], Any]]:
    from ragaudit.retrieval.embedder import Embedder
    from ragaudit.retrieval.embedding_cache import EmbeddingCache
    from ragaudit.security.semantic_attribution import SemanticAttributor

    corpus = load_corpus(KB / "corpus.jsonl")
    chunks = chunk_corpus(corpus, make_chunker("whole"))
    probes = generate_probes(corpus.documents, per_tenant=4)
    # the session's embedding cache, as `--attribute semantic` uses it: the CLI tests below embed no
    # passage again (the same model's vectors either way)
    with EmbeddingCache(Embedder(), progress=False) as encoder:
        yield (
            chunks,
            OwnershipIndex.build(corpus.documents, chunks),
            probes,
            SemanticAttributor.build(corpus.documents, encoder=encoder),
        )


def test_semantic_attribution_passes_own_summaries_and_catches_foreign_ones(
    demo: tuple[list[Chunk], OwnershipIndex, list[Probe], Any],
) -> None:
    chunks, index, probes, semantic = demo
    options = {**ONE_PASS, "hostile_probes": 1}
    own, foreign = SummarisingRetriever(chunks), SummarisingRetriever(chunks, foreign=True)
    exact = audit(own, index, probes, **options)  # exact attribution alone: rewritten text is never clean
    assert exact.verdict() == "not-verified" and exact.unattributed_count == exact.checked_chunks > 0
    exact = audit(foreign, index, probes, **options)  # some summaries keep 8+ words of a foreign document
    assert exact.verdict() == "leak" and 0 < exact.unattributed_count < exact.checked_chunks
    assert all("content" in leak.attributed_by for leak in exact.leaks)
    honest = asyncio.run(
        audit_tenants(own, index, probes, AuditOptions(progress=False, **options), semantic=semantic)
    )
    assert honest.verdict() == "clean" and honest.unattributed_count == 0
    report = honest.to_dict()
    assert report["semantic"]["chunks"] == honest.checked_chunks and report["semantic"]["leaks"] == 0
    assert f"semantic: {honest.checked_chunks} chunks, margin >= 0.05" in report["isolation"]["reason"]
    leaky = asyncio.run(
        audit_tenants(foreign, index, probes, AuditOptions(progress=False, **options), semantic=semantic)
    )
    # the summaries that keep 8 consecutive words of a foreign document are leaks by content already
    placed = [leak for leak in leaky.leaks if leak.attributed_by.startswith("semantic (cosine")]
    assert leaky.verdict() == "leak" and leaky.to_dict()["semantic"]["leaks"] == len(placed) > 0
    assert all(leak in placed or "content" in leak.attributed_by for leak in leaky.leaks)
    assert all(leak.caller not in leak.owners for leak in leaky.leaks if not leak.hostile)


def test_the_summarising_leak_is_in_the_registry() -> None:
    assert set(REWRITTEN_LEAKS) <= set(LEAKY)
    assert isinstance(make_leaky("foreign-summaries", []), SummarisingRetriever)


def test_cli_attribute_semantic(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["audit-tenants", "--corpus", str(KB / "corpus.jsonl"), "--no-progress", "--probes-per-tenant", "3",
            "--rounds", "1", "--top-k-values", "5", "--max-top-k", "5", "--hostile-probes", "0"]  # fmt: skip
    leaky = ["--retriever", "ragaudit.security.leaky:demo_foreign_summaries"]
    honest = ["--retriever", "ragaudit.security.leaky:demo_own_summaries"]
    assert main([*base, *honest]) == 1 and "NOT VERIFIED" in capsys.readouterr().out
    assert main([*base, *honest, "--attribute", "semantic"]) == 0
    assert "semantic: " in capsys.readouterr().out
    assert main([*base, *leaky, "--attribute", "semantic"]) == 1
    assert "semantic (cosine" in capsys.readouterr().out


# ---------------------------------------------------------------- the demo


def test_the_demo_gate_is_verified_by_a_cross_tenant_audit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["demo", "--pipelines", "bm25", "--no-progress", "--out-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if "[pass] security" in line)
    assert f"verified by audit {tmp_path / 'audit-bm25.json'}" in line and "by corpus" in line
    assert "no leak seen on 84 own-tenant queries" in line and "by response tenant_id" not in out
    assert "do not test isolation" not in line  # the eval's own advice is moot once an audit verified it
    assert json.loads((tmp_path / "audit-bm25.json").read_text())["verdict"] == "clean"


def test_eval_attribute_semantic(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["eval", *DATA, "--metrics", "R@5", "--no-history", "--no-progress"]
    own = ["--retriever", "ragaudit.security.leaky:demo_own_summaries"]
    foreign = ["--retriever", "ragaudit.security.leaky:demo_foreign_summaries"]
    out = tmp_path / "own.json"
    assert main([*base, *own, "--out", str(out)]) == 0  # no leak found, but nothing verified
    exact = json.loads(out.read_text())["security"]["isolation"]
    assert exact["state"] == "not_verified" and exact["verified"] == 0 < exact["total"]
    assert main([*base, *own, "--attribute", "semantic", "--out", str(out)]) == 0
    placed = json.loads(out.read_text())["security"]["isolation"]
    assert placed["methods"] == {"semantic": placed["total"]} and placed["verified"] == placed["total"]
    assert f"no leak seen on 84 own-tenant queries ({placed['total']} of" in placed["reason"]
    capsys.readouterr()
    assert main([*base, *foreign, "--attribute", "semantic"]) == 1
    assert "SECURITY: " in capsys.readouterr().err
    assert main(["eval", "--dataset", str(KB / "golden.jsonl"), *own, "--attribute", "semantic"]) == 2


def test_a_built_in_pipelines_chunks_are_checked_by_id_and_content() -> None:
    from ragaudit.data.run import RankedItem
    from ragaudit.runner.chunk_owners import PipelineChunkOwnership

    chunks = chunk_corpus(load_corpus(KB / "corpus.jsonl"), make_chunker("whole"))
    acme = next(c for c in chunks if c.tenant_id == "acme")
    owners = PipelineChunkOwnership(chunks)
    own = owners.attribute_item(RankedItem(acme.chunk_id, content=acme.text, tenant_id="acme"))
    assert own.attributed and not own.foreign_owners("acme") and own.foreign_owners("globex") == {"acme"}
    spaced = owners.attribute_item(RankedItem(acme.chunk_id, content="  " + acme.text.replace(" ", "\n")))
    assert spaced.attributed  # whitespace aside
    other = owners.attribute_item(RankedItem(acme.chunk_id, content="some other text", tenant_id="acme"))
    assert not other.attributed and other.text_unfound  # the id does not vouch for text that is not its
    unknown = owners.attribute_item(RankedItem("no-such-chunk", content=acme.text, tenant_id="acme"))
    assert not unknown.attributed and not unknown.text_unfound and not unknown.foreign_owners("acme")
