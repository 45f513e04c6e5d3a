"""Each kind that builds a document, its HTML page opened in a real headless Chromium (Debian's
/usr/bin/chromium, driven by playwright; skipped when either is absent, as in test_report_chromium):
its findings are on screen (every section's title, the first row of every table and the first item of
every list), no console error, no request beyond the file, and the hostile ids stay text."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragaudit.report.document import Document, Items, Table, Verdict
from ragaudit.report.draw.cells import cell
from ragaudit.report.html import render_html
from ragaudit.report.kinds import report_kind
from ragaudit.report.view import build_view
from test_report_chromium import ARGS, CHROMIUM
from test_report_gold import MIGRATED, _report

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason=f"{CHROMIUM} not installed (apt-get install chromium)"
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield chromium
        chromium.close()


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
