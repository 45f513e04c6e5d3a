"""Tenant isolation as a three-state verdict, end to end through real local HTTP services.

A service whose responses carry no ``tenant_id`` cannot be shown to isolate tenants: ``eval`` records
"not verified" with the reason, and the terminal, JSON, Markdown, HTML, history and gate all say so
(no check mark anywhere). With ``--corpus`` every returned chunk is attributed by id and content: an
honest service shows "no leak seen on N own-tenant queries", which is still not an isolation test
(only a clean cross-tenant audit given to the gate verifies it), a leaky one fails (exit 1), one that
relabels foreign chunks as the caller's fails too, and output the corpus cannot attribute leaves the
verdict "not verified" with the counts.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import write_lines
from ragaudit.artifacts.envelope import schema_errors
from ragaudit.artifacts.history import query_runs
from ragaudit.cli.main import main
from ragaudit.verdict import CheckVerdict, decide
from servers import LocalServer, Reply, Request
from test_gate_forged_audits import SIZED

DOCS = {
    "acme": [
        ("acme-refunds", "Refunds at Acme are paid within fourteen days of a written request to billing."),
        ("acme-shipping", "Acme ships every order from the Leeds warehouse by tracked courier overnight."),
    ],
    "globex": [
        ("globex-refunds", "Globex never refunds annual plans but credits unused months to the account."),
        ("globex-shipping", "Globex ships hardware from Rotterdam with a three day delivery promise."),
    ],
}
TEXT = {doc_id: text for docs in DOCS.values() for doc_id, text in docs}
OWNER = {doc_id: tenant for tenant, docs in DOCS.items() for doc_id, _ in docs}


@pytest.fixture
def kb(tmp_path: Path) -> dict[str, Path]:
    corpus = write_lines(
        tmp_path / "corpus.jsonl",
        [
            json.dumps({"doc_id": d, "tenant_id": OWNER[d], "title": d, "text": text})
            for d, text in TEXT.items()
        ],
    )
    cases = [
        {"id": f"{tenant}-{i}", "query": f"{topic} policy", "tenant_id": tenant, "relevance": {doc: 3}}
        for tenant, docs in DOCS.items()
        for i, (doc, _) in enumerate(docs)
        for topic in [doc.split("-")[1]]
    ]
    golden = write_lines(tmp_path / "golden.jsonl", [json.dumps(c) for c in cases])
    return {"corpus": corpus, "golden": golden, "dir": tmp_path}


def _service(style: str) -> Callable[[Request], Reply]:
    """``honest``: the caller's own documents, no tenant_id; ``leaky``: plus another tenant's document,
    no tenant_id; ``relabel``: another tenant's document labelled as the caller's; ``opaque``: the
    caller's documents plus a chunk with an opaque id and text no corpus document holds."""

    def handle(request: Request) -> Reply:
        caller = request.json()["tenant_id"]
        own = [{"chunk_id": d, "score": 1.0, "content": TEXT[d]} for d, _ in DOCS[caller]]
        other = next(t for t in DOCS if t != caller)
        foreign = {"chunk_id": DOCS[other][0][0], "score": 0.5, "content": DOCS[other][0][1]}
        if style == "leaky":
            own.append(foreign)
        elif style == "relabel":
            own.append({**foreign, "tenant_id": caller})
        elif style == "opaque":
            own.append({"chunk_id": "x-91af", "score": 0.1, "content": "zebra quartz lantern violet"})
        return Reply(body=own)

    return handle


def _eval(kb: dict[str, Path], style: str, name: str, *, corpus: bool) -> dict[str, Any]:
    out = kb["dir"] / f"{name}.json"
    with LocalServer(_service(style)) as server:
        args = ["eval", "--dataset", str(kb["golden"]), "--endpoint", server.url, "--metrics", "R@5"]
        args += ["--out", str(out), "--no-history", "--no-progress", "--name", name]
        args += ["--corpus", str(kb["corpus"])] if corpus else []
        assert main(args) != 2
    report: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    assert schema_errors(report) == []
    return report


def _render(kb: dict[str, Path], name: str, fmt: str) -> str:
    out = kb["dir"] / f"{name}.{fmt}"
    assert main(["report", str(kb["dir"] / f"{name}.json"), "--format", fmt, "--out", str(out)]) == 0
    return out.read_text(encoding="utf-8")


def test_no_tenant_id_and_no_corpus_is_not_verified_everywhere(
    kb: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    report = _eval(kb, "honest", "unlabelled", corpus=False)
    terminal = capsys.readouterr().out
    isolation = report["security"]["isolation"]
    assert isolation["state"] == "not_verified"
    assert (isolation["verified"], isolation["total"]) == (0, 8)
    assert "--corpus" in isolation["reason"]
    assert "tenant isolation: NOT VERIFIED - 8 of 8 not verified: no --corpus was given" in terminal
    markdown = _render(kb, "unlabelled", "md")
    assert "**⚠️ tenant isolation: NOT VERIFIED**" in markdown and "no --corpus was given" in markdown
    assert "✅" not in markdown and "no cross-tenant leaks" not in markdown.lower()
    html = _render(kb, "unlabelled", "html")
    security = html[html.index('<section id="security">') :]
    security = security[: security.index("</section>")]
    assert "tenant isolation: NOT VERIFIED" in security and "no --corpus was given" in security
    page = html[: html.index("<script")]  # the rendered page (the script marks relevant chunks only)
    assert "✓" not in page and "No cross-tenant leaks" not in page
    assert ">not verified<" in page  # the summary card


def test_with_the_corpus_an_honest_service_shows_no_leak_and_a_leaky_one_fails(
    kb: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    honest = _eval(kb, "honest", "honest", corpus=True)["security"]
    assert honest["isolation"]["state"] == "not_verified" and honest["leaks"] == 0
    assert honest["isolation"]["methods"] == {"corpus": 8} and honest["isolation"]["verified"] == 8
    expected = "no leak seen on 4 own-tenant queries (8 of 8 returned chunks checked (8 by corpus))"
    assert f"tenant isolation: NOT VERIFIED - {expected}" in capsys.readouterr().out
    markdown = _render(kb, "honest", "md")
    assert expected in markdown and "✅" not in markdown and "audit-tenants" in markdown
    assert "✓ Tenant isolation verified" not in _render(kb, "honest", "html")
    for style in ("leaky", "relabel"):  # a foreign chunk relabelled as the caller's is caught too
        leaky = _eval(kb, style, style, corpus=True)["security"]
        assert leaky["isolation"]["state"] == "fail" and leaky["leaks"] == 4, style
        assert {r["claimed_tenant"] for r in leaky["records"]} == {"acme", "globex"}
        markdown = _render(kb, style, "md")
        assert "**❌ tenant isolation: FAIL**" in markdown and "✅" not in markdown
        assert "SECURITY: 4 cross-tenant chunk(s) returned in 4 case(s)" in markdown


def test_output_the_corpus_cannot_attribute_is_counted_as_not_verified(kb: dict[str, Path]) -> None:
    isolation = _eval(kb, "opaque", "opaque", corpus=True)["security"]["isolation"]
    assert isolation["state"] == "not_verified"
    assert (isolation["verified"], isolation["unverified"], isolation["total"]) == (8, 4, 12)
    assert isolation["reason"].startswith("4 of 12 not verified: the corpus (by id or content) does not")
    assert "no cross-tenant chunk(s) among the 8 checked" in isolation["reason"]


def test_history_keeps_three_states_and_the_gate_reads_them(
    kb: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    names = {"honest": ("honest", True), "leaky": ("leaky", True), "unlabelled": ("honest", False)}
    for name, (style, corpus) in names.items():
        _eval(kb, style, name, corpus=corpus)
    history = tmp_path / "history.sqlite"
    reports = [str(kb["dir"] / f"{n}.json") for n in names]
    assert main(["history", "--history", str(history), "--record", *reports]) == 0
    states = {run.pipeline: run.isolation for run in query_runs(history)}
    assert states == {"honest": "not_verified", "leaky": "fail", "unlabelled": "not_verified"}
    reasons = {run.pipeline: run.isolation_reason for run in query_runs(history)}
    assert "no --corpus was given" in str(reasons["unlabelled"])
    capsys.readouterr()

    policy = tmp_path / "gates.toml"
    policy.write_text("[security]\nmax_leaks = 0\n", encoding="utf-8")
    verdict = tmp_path / "verdict.json"
    code = main(["gate", reports[2], "--policy", str(policy), "--out", str(verdict)])
    text = capsys.readouterr().out
    assert code == 1 and text.startswith("ragaudit gate: NOT VERIFIED (security: not verified")
    assert "[NOT VERIFIED] security" in text and "no --corpus was given" in text
    written = json.loads(verdict.read_text())
    assert written["verdict"] == "not_verified" and written["passed"] is False
    assert written["gates"][2]["status"] == "not_verified"
    carried = {**json.loads(Path(reports[2]).read_text()), "gate": written}
    (tmp_path / "carried.json").write_text(json.dumps(carried), encoding="utf-8")
    assert main(["report", str(tmp_path / "carried.json"), "--out", str(tmp_path / "carried.md")]) == 0
    markdown = (tmp_path / "carried.md").read_text()
    assert "**Gate: ⚠️ NOT VERIFIED** (blocks the release)" in markdown and "- ⚠️ security" in markdown

    assert main(["gate", reports[0], "--policy", str(policy)]) == 1  # own-tenant queries: no isolation test
    text = capsys.readouterr().out
    assert "[NOT VERIFIED] security" in text and "no leak seen on 4 own-tenant queries" in text
    assert "only a cross-tenant audit verifies isolation" in text
    assert main(["gate", reports[1], "--policy", str(policy)]) == 1
    policy.write_text("[security]\nmax_leaks = 0\nallow_unverified = true\n", encoding="utf-8")
    assert main(["gate", reports[2], "--policy", str(policy)]) == 0  # waived, but still not called a pass
    text = capsys.readouterr().out
    assert "allowed by the policy" in text and "[NOT VERIFIED] security" in text and "PASS" not in text


def test_a_clean_tenant_audit_verifies_what_the_eval_report_could_not(
    kb: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    evaluated = _eval(kb, "honest", "unlabelled", corpus=False)
    policy = tmp_path / "gates.toml"
    policy.write_text("[security]\nmax_leaks = 0\n", encoding="utf-8")
    audit = tmp_path / "audit.json"
    passed = {
        "check": "tenant isolation",
        "state": "pass",
        "reason": "no foreign chunk served",
        "verified": 9,
    }
    audit.write_text(
        json.dumps(
            {
                "kind": "tenant-audit",
                "passed": True,
                "verdict": "clean",
                "leaks": {"count": 0},
                "isolation": passed,
                "source": {"endpoint": evaluated["source"]["endpoint"]},  # the service the report evaluated
                **SIZED,
            }
        )
    )
    report = str(kb["dir"] / "unlabelled.json")
    capsys.readouterr()
    assert main(["gate", report, "--policy", str(policy), "--audit", str(audit)]) == 0
    assert "verified by audit" in capsys.readouterr().out
    bare = tmp_path / "bare.json"  # says clean, but records no isolation check and no checked chunk
    bare.write_text(
        json.dumps({"kind": "tenant-audit", "passed": True, "verdict": "clean", "leaks": {"count": 0}})
    )
    assert main(["gate", report, "--policy", str(policy), "--audit", str(bare)]) == 1
    assert "it checked no returned chunk" in capsys.readouterr().out
    incomplete = tmp_path / "incomplete.json"
    incomplete.write_text(
        json.dumps({"kind": "tenant-audit", "passed": False, "verdict": "incomplete", "leaks": {"count": 0}})
    )
    assert main(["gate", report, "--policy", str(policy), "--audit", str(incomplete)]) == 1


def test_the_verdict_rules() -> None:
    def verdict(total: int, verified: int, failures: int) -> CheckVerdict:
        return decide(
            "x", total=total, verified=verified, failures=failures, found="bad", unverified_because="why"
        )

    assert verdict(5, 5, 0).state == "pass"
    assert verdict(5, 4, 0).state == "not_verified" and verdict(5, 4, 0).reason.startswith(
        "1 of 5 not verified: why"
    )
    assert verdict(5, 2, 1).state == "fail" and "3 not verified: why" in verdict(5, 2, 1).reason
    assert verdict(0, 0, 0).state == "not_verified"  # nothing to check is not a pass
    assert CheckVerdict.from_json(verdict(5, 4, 0).to_json()) == verdict(5, 4, 0)
    assert CheckVerdict.from_json({"state": "clean"}) is None


def test_a_run_file_is_checked_by_its_labels_or_from_the_corpus(kb: dict[str, Path]) -> None:
    lines = [json.dumps({"id": "acme-0", "retrieved": ["acme-refunds", "globex-refunds"]})]
    lines += [
        json.dumps({"id": "globex-0", "retrieved": [{"chunk_id": "globex-refunds", "tenant_id": "globex"}]})
    ]
    run = write_lines(kb["dir"] / "run.jsonl", lines)

    def isolation(*extra: str) -> dict[str, Any]:
        out = kb["dir"] / "run-report.json"
        args = ["eval", "--dataset", str(kb["golden"]), "--run", str(run), "--metrics", "R@5"]
        assert main([*args, "--no-history", "--out", str(out), *extra]) != 2
        verdict: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))["security"]["isolation"]
        return verdict

    unlabelled = isolation()  # a tenant_id naming the caller is a claim: nothing is checked
    assert unlabelled["state"] == "not_verified" and (unlabelled["verified"], unlabelled["total"]) == (0, 3)
    assert "1 carry a tenant_id naming the caller, but a label is the service's claim" in unlabelled["reason"]
    from_corpus = isolation("--corpus", str(kb["corpus"]))
    assert from_corpus["state"] == "fail" and from_corpus["failures"] == 1
    assert from_corpus["methods"] == {"corpus": 3}


def test_experiment_tables_never_show_an_unchecked_zero_or_check_mark() -> None:
    from ragaudit.report.html import render_html
    from ragaudit.report.markdown import render_markdown
    from ragaudit.report.view import build_view

    unverified = decide(
        "tenant isolation", total=5, verified=0, failures=0, found="x", unverified_because="why"
    )
    pipeline = {"name": "svc", "metrics": {"R@5": 0.5}, "leaks": 0, "isolation": unverified.to_json()}
    bench = {"kind": "benchmark", "pipelines": [pipeline], "comparisons": []}
    assert "| 1 | svc | **0.5000** | – | – | – | – | – | ? not verified |" in render_markdown(
        build_view(bench)
    )
    section = render_html(build_view(bench)).split('<section id="benchmark">')[1].split("</section>")[0]
    assert '<span class="badge small warn" title="5 of 5 not verified: why">? not verified</span>' in section
    assert "✓" not in section
    cons = {"cases": 10, "checked": 6, "rewritten": 6, "flagged": 0}
    rewrite = {"kind": "rewrite-eval", "rewriter": "r", "constraints": cons, "metrics": {}, "comparisons": []}
    markdown = render_markdown(build_view(rewrite))
    assert "**⚠️ constraint preservation: NOT VERIFIED**: 4 of 10 not verified" in markdown
    assert "✅" not in markdown
    html = render_html(build_view(rewrite))
    assert '<p class="warn-line">? constraint preservation: NOT VERIFIED: 4 of 10 not verified' in html
    assert "✓" not in html.split("<main>")[1].split("</main>")[0]
    checked = render_markdown(build_view({**rewrite, "constraints": {**cons, "checked": 10}}))
    assert "**✅ constraint preservation: pass**: no rewrite(s) that lost" in checked


@pytest.mark.parametrize("kind", ["context", "check-answers"])
def test_a_recorded_pass_of_golden_questions_is_read_as_not_verified_everywhere(kind: str) -> None:
    """A report of golden questions that says ``pass`` (an older ragaudit, a hand-edited file; the gold
    inputs are such reports) never reaches a page, the gate or an MLflow tag as green: questions asked
    by their own tenants test no isolation."""
    from ragaudit.report.html import render_html
    from ragaudit.report.markdown import render_markdown
    from ragaudit.report.mlflow_runs import runs_of
    from ragaudit.report.terminal import render_terminal
    from ragaudit.report.view import build_view
    from ragaudit.verdict import isolation_of

    report = json.loads((Path(__file__).parent / "gold" / "inputs" / f"{kind}.json").read_text())
    recorded = report["security"]["isolation"]
    assert recorded["state"] == "pass"  # what the file records
    read = isolation_of(report)
    assert read is not None and read.state == "not_verified"
    assert "recorded as a pass" in read.reason and "audit-tenants" in read.reason
    assert read.verified == read.total > 0 and read.methods
    terminal, markdown = render_terminal(report), render_markdown(build_view(report))
    page = render_html(build_view(report))
    for drawn in (terminal, markdown, page):
        assert "NOT VERIFIED" in drawn and "recorded as a pass" in drawn
        assert "✅" not in drawn and "tenant isolation: pass" not in drawn
    evaluated = json.loads((Path(__file__).parent / "gold" / "inputs" / "eval.json").read_text())
    evaluated["security"] = {**evaluated["security"], "leaks": 0, "records": [], "isolation": recorded}
    assert [run.tags["ragaudit.isolation"] for run in runs_of(evaluated)] == ["not_verified"]
