"""A tenant audit's report in terminal, Markdown and HTML (issue 24): findings first (the verdict with
its reason and how much was checked, the counts per class, the leak table with the request mutation and
the JSON path, cut with a true "first N of M"), then the mutations that found leaks or were rejected,
then errors, unverified requests and hostile tenant ids; a clean audit shows no leak table, and no
format shows a check mark the report does not earn."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest

from ragaudit.cli.main import main
from ragaudit.report.html import render_html
from ragaudit.report.markdown import render_markdown
from ragaudit.report.terminal import render_terminal
from ragaudit.report.view import build_view

KB = Path(__file__).resolve().parents[1] / "src" / "ragaudit" / "demo_data" / "kb"
GOLD_AUDIT = Path(__file__).parent / "gold" / "inputs" / "tenant-audit.json"
"""A real audit with leaks of several classes (tests/gold/make_tenant_audit_input.py)."""
SMALL = ["--probes-per-tenant", "2", "--top-k-values", "10", "--concurrency-levels", "4", "--budget", "0"]


def run_audit(out: Path, retriever: str, *extra: str) -> tuple[int, dict[str, Any]]:
    """``ragaudit audit-tenants`` of ``retriever`` over the demo KB, small: its exit code and report."""
    args = ["audit-tenants", "--corpus", str(KB / "corpus.jsonl"), "--retriever", retriever,
            "--out", str(out), "--no-progress", *SMALL, *extra]  # fmt: skip
    code = main(args)
    return code, json.loads(out.read_text(encoding="utf-8"))


def gold_audit() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(GOLD_AUDIT.read_text(encoding="utf-8"))
    return data


def page_text(page: str) -> str:
    """The page's ``<main>`` as text (tags dropped, entities read)."""
    main = page.split("<main>")[1].split("</main>")[0]
    return html.unescape(re.sub(r"<[^>]+>", "", main))


def page_section(page: str, anchor: str) -> str:
    return page.split(f'<section id="{anchor}">')[1].split("</section>")[0]


@pytest.fixture(scope="module")
def capped(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A failed audit whose report lists 3 of its leaks (--max-records 3)."""
    out = tmp_path_factory.mktemp("audit") / "leaky.json"
    code, report = run_audit(out, "ragaudit.security.leaky:demo_relabeling", "--max-records", "3")
    assert code == 1
    return report


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("audit") / "clean.json"
    code, report = run_audit(out, "ragaudit.security.leaky:demo_response_honest")
    assert code == 0 and report["verdict"] == "clean"
    return report


def test_the_leak_table_is_on_the_page_and_in_markdown_with_a_true_cut_note(capped: dict[str, Any]) -> None:
    total, records = capped["leaks"]["count"], capped["leaks"]["records"]
    first = records[0]
    assert total > 3 and len(records) == 3
    page = render_html(build_view(capped))
    section = page_section(page, "tenant-audit")
    for header in ("probe", "asked as", "how asked", "mutation", "chunk", "rank", "owner", "labelled",
                   "attributed by", "JSON path"):  # fmt: skip
        assert f"<th>{header}</th>" in section, header
    assert section.count('<td data-label="chunk">') == 3 and first["chunk_id"] in section
    assert first["probe"]["id"] in section and ", ".join(first["owner"]) in section
    paths = list(dict.fromkeys(f["path"] for f in first.get("fields", [])))
    assert all(p in section for p in paths[:3])
    listed = f"the report lists the first 3 of {total} leak records (--max-records)"
    assert listed in section and f"all {total} are in the JSON report" not in page  # never a false claim
    markdown = render_markdown(build_view(capped))
    assert first["chunk_id"].replace("_", "\\_") in markdown and "| how asked | mutation |" in markdown
    assert listed.replace("_", "\\_") in markdown and f"all {total} are in" not in markdown


def test_findings_come_first_in_every_format() -> None:
    report = gold_audit()
    terminal = render_terminal(report).splitlines()
    assert terminal[0].startswith(
        "tenant isolation: FAIL - 125 foreign chunk(s) served; 1608 returned chunk(s)"
    )
    assert terminal[1] == "verdict: LEAK (release blocker)"
    assert (
        terminal.index("Foreign chunks served")
        < terminal.index("found by:")
        < terminal.index("hostile tenant ids: 464 requests (452 refused, 0 empty, 12 served data)")
    )
    markdown = render_markdown(build_view(report))
    order = ["**❌ tenant isolation: FAIL**", "| leak class", "| probe | asked as", "#### Request mutations",
             "- offset=10 (body): 18 foreign chunk(s)", "rejected mutations", "errors: 9 of 153",
             "UNVERIFIED: 9", "| hostile id |", "<summary>Provenance</summary>"]  # fmt: skip
    at = [markdown.index(text) for text in order]
    assert at == sorted(at), list(zip(order, at, strict=True))
    page = render_html(build_view(report))
    sections = re.findall(r'<section id="([^"]+)"', page)
    assert sections == ["tenant-audit", "audit-mutations", "audit-asking", "provenance"]
    findings = page_section(page, "tenant-audit")
    assert findings.index('<p class="bad-line">✗ tenant isolation: FAIL') < findings.index(
        'class="stack rowcards leaks"'
    )


def test_mutations_json_paths_and_hostile_ids_in_every_format() -> None:
    report = gold_audit()
    terminal = render_terminal(report)
    markdown = render_markdown(build_view(report))
    page = render_html(build_view(report))
    for text in (terminal, markdown, page_text(page)):
        assert "offset=10 (body): 18 foreign chunk(s)" in text and "OR: 35 foreign chunk(s)" in text
        assert "$.related[0], $.related[1], $.related[3] (+1 more)" in text.replace("\\[", "[").replace(
            "\\]", "]"
        )
        assert "accented (combining mark, NFD) of" in text and "results:canary+content+id" in text
    assert "header X-Tenant: <owner>: 6 of 6 requests rejected" in terminal
    assert "header X-Tenant: &lt;owner&gt;</code>: 6 of 6 requests rejected" in page
    assert "<script>document" not in page and "<img src=x" not in page  # hostile ids stay text
    assert "the report lists the first 4:" in terminal  # 9 unverified, 4 listed: said, not hidden


def test_a_clean_audit_shows_what_it_checked_and_no_leak_table(clean: dict[str, Any]) -> None:
    checked = clean["checked_chunks"]
    page = render_html(build_view(clean))
    section = page_section(page, "tenant-audit")
    assert (
        f'<p class="ok-line">✓ tenant isolation: pass: no foreign chunk served; {checked} returned' in section
    )
    assert f"chunks checked {checked}, unattributed 0" in section
    assert "rowcards leaks" not in page and "LEAKS:" not in page and "Foreign chunks served" not in page
    markdown = render_markdown(build_view(clean))
    assert f"**✅ tenant isolation: pass**: no foreign chunk served; {checked} returned" in markdown
    assert "| probe | asked as" not in markdown
    assert render_terminal(clean).splitlines()[:2] == [
        f"tenant isolation: pass - {clean['isolation']['reason']}",
        "verdict: clean (no foreign chunk served)",
    ]


def _no_green(report: dict[str, Any]) -> None:
    body = render_html(build_view(report)).split("<main>")[1].split("</main>")[0]
    markdown = render_markdown(build_view(report))
    for text in (body, markdown, render_terminal(report)):
        assert "NOT VERIFIED" in text and "✓" not in text and "✅" not in text and "ok-line" not in text


def test_never_a_check_mark_the_report_does_not_earn(clean: dict[str, Any]) -> None:
    checked = clean["checked_chunks"]
    below = {**clean, "verdict": "not-verified", "isolation": {
        **clean["isolation"], "state": "not_verified",
        "reason": f"verified 1 of {checked} returned chunks (0.4%), below --min-attributed 0.95: NOT VERIFIED",
    }, "unattributed": {"count": checked - 1, "share": 0.99, "allowed": True, "min_attributed": 0.95,
                        "records": [{"probe_id": "acme/entity/1", "caller": "globex", "chunk_id": "opaque-7",
                                     "rank": 1, "containment": 0.1, "excerpt": "stemmed text"}]}}  # fmt: skip
    _no_green(below)
    page = render_html(build_view(below))
    assert "verified 1 of" in page and "opaque-7" in page and "stemmed text" in page
    older = {k: v for k, v in clean.items() if k != "isolation"}  # an older report: "clean", never judged
    _no_green(older)
    assert "clean as the audit wrote it, but tenant isolation is NOT VERIFIED" in render_terminal(older)
