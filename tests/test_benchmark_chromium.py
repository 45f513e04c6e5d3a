"""The page ``ragaudit demo`` names last, in a real headless Chromium (Debian's /usr/bin/chromium, driven
by playwright), at a 1366 px laptop width and a 390 px phone width: no console error, no network
request, nothing cut off on the right (the ranking and the Queries table fit or become cards), the
recommendation and the ranking are there, and each pipeline's page opens from its link.

``RAGAUDIT_SCREENSHOTS=docs/img`` also saves the screenshots of the README and docs/reports.md
(``demo-after.png``, ``demo-phone-after.png``, ``queries-phone-after.png``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ragaudit
from chromium import CHROMIUM
from conftest import DemoBuild
from ragaudit.cli.main import main

LAPTOP, PHONE = 1366, 390

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason=f"{CHROMIUM} not installed (apt-get install chromium)"
)


@pytest.fixture(scope="module")
def demo(demo_build: DemoBuild) -> Path:
    """The demo's folder (every pipeline's report and page, and report.html; conftest's one demo run, exit
    0 checked there, built off the thread of the shared browser's event loop)."""
    return demo_build.folder


class Opened:
    """A page at a viewport width, with console messages, page errors and requests recorded."""

    def __init__(self, browser: Any, path: Path, width: int) -> None:
        self.page = browser.new_page(viewport={"width": width, "height": 900})
        self.console: list[str] = []
        self.requests: list[str] = []
        self.page.on("console", lambda m: self.console.append(f"{m.type}: {m.text}"))
        self.page.on("pageerror", lambda e: self.console.append(f"pageerror: {e}"))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.goto(path.as_uri())

    def overflow(self, selector: str) -> dict[str, float]:
        """How far the element's content and its last cell reach past its box, and the page's width."""
        found: dict[str, float] = self.page.locator(selector).first.evaluate(
            """(el) => {
                const box = el.getBoundingClientRect();
                const cells = el.querySelectorAll('tr:first-child > *');
                const last = cells.length ? cells[cells.length - 1].getBoundingClientRect() : box;
                return {content: el.scrollWidth - el.clientWidth, last: last.right - box.right,
                        page: document.documentElement.scrollWidth - document.documentElement.clientWidth};
            }"""
        )
        return found

    def phone_view(self) -> dict[str, Any]:
        """The page's width past the viewport, the smallest chart text as rendered (font size times the
        chart's scale, px) and the table cells that reach past the screen's right edge."""
        found: dict[str, Any] = self.page.evaluate(
            """() => {
                const de = document.documentElement, vw = de.clientWidth;
                let font = 1e9;
                for (const t of document.querySelectorAll('svg.chart text')) {
                    const ctm = t.getScreenCTM();
                    if (!t.getBoundingClientRect().height || !ctm) continue;
                    font = Math.min(font, parseFloat(getComputedStyle(t).fontSize) * ctm.a);
                }
                const cut = [];
                for (const c of document.querySelectorAll('section table td, section table th')) {
                    const r = c.getBoundingClientRect();
                    if (r.width && r.right > vw + 0.5) cut.push(c.closest('section').id + ': ' + c.innerText);
                }
                return {page: de.scrollWidth - vw, font: font, cut: cut};
            }"""
        )
        return found

    def shot(self, name: str, full: bool = True) -> None:
        folder = os.environ.get("RAGAUDIT_SCREENSHOTS")
        if folder:
            self.page.screenshot(path=str(Path(folder) / name), full_page=full)


@pytest.fixture
def opened(browser: Any) -> Iterator[list[Opened]]:
    pages: list[Opened] = []
    yield pages
    for o in pages:
        o.page.close()


@pytest.mark.parametrize("width", [LAPTOP, PHONE])
def test_the_comparison_page_fits_and_loads_offline(
    demo: Path, browser: Any, opened: list[Opened], width: int
) -> None:
    o = Opened(browser, demo / "report.html", width)
    opened.append(o)
    page = o.page
    bench = json.loads((demo / "benchmark.json").read_text())
    winner = bench["ranking"]["winner"]
    advice = page.inner_text("p.advice")
    assert advice.startswith(f"{winner}: ") and "nDCG@10" in advice
    assert page.locator("table.ranking tbody tr").count() == len(bench["pipelines"])
    assert winner in page.locator("table.ranking tbody tr.win").inner_text()
    assert page.locator("span.badge", has_text="gate passed").count() == 1
    fit = o.overflow("table.ranking")
    assert fit["page"] <= 0 and fit["content"] <= 0, fit  # nothing cut off, no sideways scrolling
    if width == LAPTOP:
        assert fit["last"] <= 0.5, fit  # the last column (tenant isolation) is inside the table's box
    view = o.phone_view()  # issue 26.5: readable charts, every table's p and verdict on screen
    assert view["page"] <= 0 and view["cut"] == [], view
    assert view["font"] >= 9, view  # the charts' text was 3.6 px at 390 px before
    if width == LAPTOP:  # a laptop shows tables as tables
        assert page.locator("table.rowcards").first.evaluate("(t) => getComputedStyle(t).display") == "table"
    if width == PHONE:  # the significance, Judged and Power tables are cards: p and its verdict on screen
        card = page.locator("section#comparisons table tbody tr").first
        assert card.locator("td[data-label='p (Holm)']").is_visible()
        assert page.locator("section#holes td[data-label='scores']").first.is_visible()
    assert o.console == [] and o.requests == [(demo / "report.html").as_uri()]
    o.shot("demo-after.png" if width == LAPTOP else "demo-phone-after.png", full=width == LAPTOP)


@pytest.mark.parametrize("width", [LAPTOP, PHONE])
def test_each_pipeline_page_opens_from_its_link_and_its_queries_fit(
    demo: Path, browser: Any, opened: list[Opened], width: int
) -> None:
    o = Opened(browser, demo / "report.html", width)
    opened.append(o)
    page = o.page
    winner = json.loads((demo / "benchmark.json").read_text())["ranking"]["winner"]
    page.locator("p.pages a", has_text=winner).first.click()
    page.wait_for_selector("#cases tbody tr.case")
    assert page.url == (demo / f"{winner}.html").as_uri()
    assert page.locator("#cases tbody tr.case").count() == 84
    page.locator("#cases tbody tr.case").first.click()  # a drill-down open must not widen the table
    assert page.locator("tr.detail").count() == 1
    fit = o.overflow("#cases")
    wrap = o.overflow(".tablewrap")
    assert fit["page"] <= 0 and wrap["content"] <= 0, (fit, wrap)
    assert fit["last"] <= 0.5, fit  # the last column (ms) is not cut off
    if width == PHONE:  # rows are cards there: every cell says what it is
        labels = page.locator("#cases tbody tr.case").first.locator("td[data-label]")
        assert labels.count() >= 8 and labels.first.get_attribute("data-label") == "query"
    latency = page.inner_text("#latency")
    assert "(per query, one at a time)" in latency  # how latency was measured
    assert o.console == [] and all(url.startswith("file://") for url in o.requests)
    if width == PHONE:
        o.shot("queries-phone-after.png", full=False)


def test_a_wide_queries_table_fits_1366_px(browser: Any, opened: list[Opened], tmp_path: Path) -> None:
    """Ten metrics, a baseline delta and latency: the query column gives way, nothing is cut off."""
    from report_fixtures import build_reports

    reports = build_reports(tmp_path)
    metrics = "nDCG@10,nDCG@5,R@5,R@10,R@20,MRR@10,P@5,P@10,MAP@100,Hit@5"
    for name in ("base", "better"):
        run = tmp_path / f"{name}.run.jsonl"
        ragaudit.evaluate(reports["golden"], ragaudit.load_run(run, name=name), metrics).write_json(
            tmp_path / f"{name}-wide.json"
        )
    out = tmp_path / "wide.html"
    args = ["--baseline", str(tmp_path / "base-wide.json"), "--dataset", str(reports["golden"])]
    assert main(["report", str(tmp_path / "better-wide.json"), *args, "--resamples", "200", "--out", str(out),
                 "--format", "html"]) == 0  # fmt: skip
    for width in (LAPTOP, PHONE):
        o = Opened(browser, out, width)
        opened.append(o)
        o.page.wait_for_selector("#cases tbody tr.case")
        o.page.locator("#cases tbody tr.case").first.click()
        headers = o.page.locator("#cases > thead th").all_inner_texts()
        assert len(headers) == 4 + 10 + 2 and headers[-1].startswith("ms")
        fit, wrap = o.overflow("#cases"), o.overflow(".tablewrap")
        assert fit["page"] <= 0 and wrap["content"] <= 0 and fit["last"] <= 0.5, (width, fit, wrap)
        assert o.console == []
