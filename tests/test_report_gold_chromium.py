"""Each kind that builds a document, its HTML page opened in a real headless Chromium (Debian's
/usr/bin/chromium, driven by playwright; skipped when either is absent, as in test_report_chromium; conftest's shared ``browser``):
its findings are on screen (every section's title, the first row of every table and the first item of
every list), no console error, no request beyond the file, and the hostile ids stay text. The tenant
audit's page besides: a failed audit's shows the verdict and every leak row on screen (chunk id, owner,
request mutation, JSON path); a clean audit's shows the pass with the checked counts and no leak table."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from chromium import CHROMIUM
from ragaudit.report.document import Document, Items, Table, Verdict
from ragaudit.report.draw.cells import cell
from ragaudit.report.html import render_html
from ragaudit.report.kinds import report_kind
from ragaudit.report.view import build_view
from test_report_gold import MIGRATED, _report
from test_tenant_audit_page import gold_audit, run_audit

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason=f"{CHROMIUM} not installed (apt-get install chromium)"
)


def _findings(kind_name: str) -> list[tuple[str, str, list[str]]]:
    """``(anchor, title, texts that must be visible in it)`` of each section of the kind's document
    for its gold report: the first row of every table, the intro and first item of every list, every
    verdict's reason."""
    kind = report_kind(kind_name)
    assert kind is not None
    document = kind.document(kind.from_json(_report(kind_name)))
    assert document is not None
    found = []
    for section in document.sections:
        texts: list[str] = []
        for block in Document((section,)).blocks():
            if isinstance(block, Table) and block.rows:
                texts += [cell(v, c) for v, c in zip(block.rows[0], block.columns, strict=True)][:2]
            elif isinstance(block, Items):
                texts += [block.intro, *(lead for lead, _ in block.items[:1])]
            elif isinstance(block, Verdict):
                texts.append(block.reason)
        found.append((section.anchor, section.title, [t for t in texts if t]))
    return found


@pytest.mark.parametrize("kind", MIGRATED)
def test_the_page_shows_the_kind_s_findings(browser: Any, tmp_path: Path, kind: str) -> None:
    page_file = tmp_path / f"{kind}.html"
    page_file.write_text(render_html(build_view(_report(kind))), encoding="utf-8")
    page = browser.new_page(viewport={"width": 1360, "height": 900})
    console: list[str] = []
    requests: list[str] = []
    page.on("console", lambda m: console.append(f"{m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: console.append(f"pageerror: {e}"))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(page_file.as_uri())
    sections = _findings(kind)
    assert any(texts for _, _, texts in sections), f"{kind}: no table, list or verdict to look for"
    for anchor, title, texts in sections:
        assert page.locator(f"section#{anchor} > h2").inner_text() == title
        assert page.locator(f"section#{anchor} > h2").is_visible(), (kind, title)
        for text in texts:  # in the section's own text (not an SVG tooltip), on screen
            shown = page.locator(f"section#{anchor}").locator("td, th, li, p", has_text=text).first
            assert shown.is_visible(), (kind, anchor, text)
    assert page.title().startswith("ragaudit") and "pwned" not in page.title()
    assert not console, console
    assert requests == [page_file.as_uri()], requests
    page.close()


# ------------------------------------------------------------------------------------ tenant audit


def _open(browser: Any, report: dict[str, Any], path: Path) -> tuple[Any, list[str]]:
    path.write_text(render_html(build_view(report)), encoding="utf-8")
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"{m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
    page.on("request", lambda r: problems.append(r.url) if r.url != path.as_uri() else None)
    page.goto(path.as_uri())
    return page, problems


def _cell(row: Any, column: str) -> str:
    text: str = row.locator(f'td[data-label="{column}"]').inner_text()
    return text.strip()


def test_a_failed_audit_page_shows_the_verdict_and_every_leak_row(browser: Any, tmp_path: Path) -> None:
    report = gold_audit()
    records = report["leaks"]["records"]
    page, problems = _open(browser, report, tmp_path / "failed.html")
    section = page.locator("section#tenant-audit")
    verdict = section.locator("p.bad-line")
    assert verdict.is_visible() and verdict.inner_text().startswith(
        "✗ tenant isolation: FAIL: 125 foreign chunk"
    )
    assert section.locator("p.advice", has_text="LEAK (release blocker)").is_visible()
    assert section.locator("p", has_text="the report lists the first 14 of 125 leak records").is_visible()
    rows = section.locator("table.leaks tbody tr")
    assert rows.count() == len(records) == 14
    for i, record in enumerate(records):
        row = rows.nth(i)
        row.scroll_into_view_if_needed()
        assert row.is_visible(), i
        assert _cell(row, "chunk") == record["chunk_id"]  # the hostile chunk id as text, not markup
        assert _cell(row, "owner") == ", ".join(record["owner"])
        assert _cell(row, "mutation") == (record["asked"].get("mutation") or "–")
        paths = list(dict.fromkeys(f["path"] for f in record.get("fields", [])))
        assert all(p in _cell(row, "JSON path") for p in paths[:3]), (i, paths)
    assert page.title().startswith("ragaudit") and "pwned" not in page.title()
    mutations = page.locator("section#audit-mutations")
    assert mutations.locator("li", has_text="offset=10 (body): 18 foreign chunk(s)").is_visible()
    assert mutations.locator("li", has_text="6 of 6 requests rejected").is_visible()
    assert not problems, problems
    page.close()


def test_a_clean_audit_page_shows_the_checked_counts_and_no_leak_table(browser: Any, tmp_path: Path) -> None:
    with ThreadPoolExecutor(1) as pool:  # its own thread: playwright's event loop runs in this one
        audit = pool.submit(
            run_audit, tmp_path / "clean.json", "ragaudit.security.leaky:demo_response_honest"
        )
        code, report = audit.result()
    assert code == 0
    checked = report["checked_chunks"]
    page, problems = _open(browser, report, tmp_path / "clean.html")
    section = page.locator("section#tenant-audit")
    verdict = section.locator("p.ok-line")
    assert verdict.is_visible()
    assert f"{checked} returned chunk(s) checked, {checked} attributed by the corpus" in verdict.inner_text()
    assert section.locator("p", has_text=f"chunks checked {checked}, unattributed 0").is_visible()
    assert page.locator("table.leaks").count() == 0 and page.locator("text=LEAKS:").count() == 0
    assert page.locator("p.bad-line, p.warn-line").count() == 0
    assert not problems, problems
    page.close()


@pytest.mark.parametrize("kind", MIGRATED)
def test_the_page_fits_a_phone(browser: Any, tmp_path: Path, kind: str) -> None:
    """At 390 px: no sideways scrolling of the page (a hostile id without spaces in the title once
    widened the eval page to 604 px) and no table cell past the screen's right edge."""
    page_file = tmp_path / f"{kind}.html"
    page_file.write_text(render_html(build_view(_report(kind))), encoding="utf-8")
    page = browser.new_page(viewport={"width": 390, "height": 900})
    page.goto(page_file.as_uri())
    found = page.evaluate(
        """() => {
            const de = document.documentElement, vw = de.clientWidth, cut = [];
            for (const c of document.querySelectorAll('section table td, section table th')) {
                const r = c.getBoundingClientRect();
                if (r.width && r.right > vw + 0.5) cut.push(c.closest('section').id + ': ' + c.innerText);
            }
            return {page: de.scrollWidth - vw, cut: cut.slice(0, 5)};
        }"""
    )
    assert found == {"page": 0, "cut": []}, (kind, found)
    page.close()
