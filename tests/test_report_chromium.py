"""The HTML report in a real headless Chromium (Debian's /usr/bin/chromium, driven by playwright).

It loads offline with no console error and no network request, the drill-down opens on click and on
Enter, the search box and the status filter select rows, the columns sort, and hostile content stays
text. Skipped when /usr/bin/chromium or the playwright package is absent (``apt-get install chromium``;
never ``playwright install``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ragaudit
from chromium import CHROMIUM
from ragaudit.cli.main import main
from report_fixtures import EVIL_CHUNK, SCRIPT_QUERY, build_reports, load, with_extras

ROWS = "#cases tbody tr.case"

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason=f"{CHROMIUM} not installed (apt-get install chromium)"
)


@pytest.fixture(scope="module")
def report_html(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("chromium")
    reports = build_reports(folder)
    report = folder / "better-extras.json"
    report.write_text(json.dumps(with_extras(load(reports["better"]))), encoding="utf-8")
    out = folder / "report.html"
    args = ["--baseline", str(reports["base"]), "--dataset", str(reports["golden"]), "--resamples", "500"]
    assert main(["report", str(report), *args, "--format", "html", "--out", str(out)]) == 0
    return out


class Watched:
    """A page with every console message, page error, dialog and network request recorded."""

    def __init__(self, browser: Any, path: Path) -> None:
        self.page = browser.new_page(viewport={"width": 1360, "height": 900})
        self.console: list[str] = []
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.page.on("console", lambda m: self.console.append(f"{m.type}: {m.text}"))
        self.page.on("pageerror", lambda e: self.console.append(f"pageerror: {e}"))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("dialog", self._dialog)
        self.page.goto(path.as_uri())
        self.page.wait_for_selector(ROWS)

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def ids(self) -> list[str]:
        texts: list[str] = self.page.locator(f"{ROWS} td:first-child").all_inner_texts()
        return texts

    def row(self, case_id: str) -> Any:
        return self.page.locator(f'{ROWS}[data-id="{case_id}"]')


@pytest.fixture
def watched(browser: Any, report_html: Path) -> Iterator[Watched]:
    w = Watched(browser, report_html)
    yield w
    w.page.close()


def test_loads_offline_without_errors_and_saves_a_screenshot(
    watched: Watched, report_html: Path, tmp_path: Path
) -> None:
    page = watched.page
    assert len(watched.ids()) == 40
    assert page.inner_text("#shown") == "showing 40 of 40 queries"
    assert page.title().startswith("ragaudit · better on golden.jsonl")
    # 14 sections: the 10 before issue 14, "holes" (Judged@k), the notes, the per-tenant figures and the
    # run's outcome first (this run leaks and misses a case: "run: FAIL");
    # 6 charts: metrics, changes, latency, per tenant, k-sweep, chunking
    assert page.locator("section").count() == 14 and page.locator("svg.chart").count() == 6
    assert page.locator("section").first.get_attribute("id") == "outcome"
    assert "run: FAIL" in page.locator("#outcome").inner_text()
    watched.row("q01").click()
    shot = tmp_path / "report.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 50_000
    assert watched.console == [] and watched.dialogs == []
    assert watched.requests == [report_html.as_uri()]


def test_the_drill_down_opens_on_click_and_on_enter(watched: Watched) -> None:
    page = watched.page
    watched.row("q01").click()
    detail = page.locator("tr.detail")
    assert detail.count() == 1 and detail.is_visible()
    text = detail.inner_text()
    assert "question number 1 about globex" in text and "Retrieved (9)" in text
    assert "Against the baseline (base)" in text and "globex-d1: rank 5 → rank 1" in text
    assert watched.row("q01").get_attribute("aria-expanded") == "true"
    watched.row("q01").click()
    assert page.locator("tr.detail").count() == 0
    watched.row("q09").focus()
    page.keyboard.press("Enter")
    leak_rows = page.locator("tr.detail tr.leak")
    assert leak_rows.count() == 1 and "initech-secret-contract" in leak_rows.inner_text()


def test_search_and_status_filter_select_rows(watched: Watched) -> None:
    page = watched.page
    page.fill("#search", "initech-secret")  # a chunk id: matches the case that returned it
    assert watched.ids() == ["q09"]
    page.fill("#search", "<script>")  # query text
    assert watched.ids() == ["q03"]
    page.fill("#search", "")
    assert len(watched.ids()) == 40
    page.select_option("#status", "unanswerable")
    assert watched.ids() == ["q38", "q39"]
    page.select_option("#status", "leaks")
    assert watched.ids() == ["q09"]
    page.select_option("#status", "error")
    assert watched.ids() == [] and page.inner_text("#shown") == "showing 0 of 40 queries"
    page.select_option("#status", "better")
    better = watched.ids()
    assert better and "q01" in better and len(better) < 40


def _column(watched: Watched, index: int) -> list[str]:
    cells: list[str] = watched.page.locator(f"{ROWS} td:nth-child({index})").all_inner_texts()
    return cells


def test_columns_sort_both_ways(watched: Watched) -> None:
    page = watched.page
    header = page.locator("#cases thead th", has_text="MRR@10")
    index = page.locator("#cases thead th").all_inner_texts().index("MRR@10") + 1
    header.click()
    assert header.get_attribute("aria-sort") == "ascending"
    values = [float(v) for v in _column(watched, index) if v != "–"]
    assert values == sorted(values) and values[0] < values[-1]
    assert _column(watched, index)[-2:] == ["–", "–"]  # unanswerable cases last
    header.click()
    assert header.get_attribute("aria-sort") == "descending"
    values = [float(v) for v in _column(watched, index) if v != "–"]
    assert values == sorted(values, reverse=True)
    page.locator("#cases thead th", has_text="case").first.click()
    assert watched.ids() == sorted(watched.ids())


def test_hostile_content_is_shown_as_text(watched: Watched) -> None:
    page = watched.page
    watched.row("q03").click()
    assert SCRIPT_QUERY in page.locator("tr.detail .query").inner_text()
    assert EVIL_CHUNK in page.locator("tr.detail table.retrieved").inner_text()
    assert page.locator("img").count() == 0
    assert page.title().startswith("ragaudit")
    assert watched.console == [] and watched.dialogs == []


def test_large_reports_list_300_rows_at_a_time(browser: Any, tmp_path: Path) -> None:
    golden = tmp_path / "golden.jsonl"
    golden.write_text(
        "".join(
            json.dumps({"id": f"c{i:03d}", "query": f"q {i}", "relevant_chunk_ids": [f"d{i}"]}) + "\n"
            for i in range(650)
        ),
        encoding="utf-8",
    )
    run = {f"c{i:03d}": [f"d{(i * 7) % 650}", f"d{i}"] for i in range(650)}
    ragaudit.evaluate(golden, run, "MRR@10").write_json(tmp_path / "big.json")
    out = tmp_path / "big.html"
    assert (
        main(
            [
                "report",
                str(tmp_path / "big.json"),
                "--format",
                "html",
                "--out",
                str(out),
                "--resamples",
                "200",
            ]
        )
        == 0
    )
    watched = Watched(browser, out)
    page = watched.page
    assert (
        len(watched.ids()) == 300 and page.inner_text("#shown") == "showing 300 of 650 matching (650 queries)"
    )
    page.click("#more")
    assert len(watched.ids()) == 600
    page.click("#more")
    assert len(watched.ids()) == 650 and not page.locator("#more").is_visible()
    page.fill("#search", "c64")
    assert watched.ids() == [f"c64{i}" for i in range(10)]
    assert watched.console == []
    page.close()


def test_unverified_tenant_isolation_shows_no_check_mark(browser: Any, tmp_path: Path) -> None:
    reports = build_reports(tmp_path)
    report = load(reports["base"])
    reason = "8 of 8 not verified: responses carry no tenant_id for them and no --corpus was given"
    report["security"] = {
        "leaks": 0,
        "cases_with_leaks": 0,
        "records": [],
        "isolation": {"check": "tenant isolation", "state": "not_verified", "reason": reason}
        | {"verified": 0, "total": 8, "failures": 0},
    }
    for case in report["per_case"]:
        case.pop("leaks", None)
    source = tmp_path / "unverified.json"
    source.write_text(json.dumps(report), encoding="utf-8")
    out = tmp_path / "unverified.html"
    assert main(["report", str(source), "--format", "html", "--out", str(out)]) == 0
    watched = Watched(browser, out)
    try:
        security = watched.page.inner_text("#security")
        summary = watched.page.inner_text("#summary")
        assert "tenant isolation: NOT VERIFIED" in security and "no --corpus was given" in security
        assert "✓" not in security + summary and "No cross-tenant leaks" not in security
        assert "not verified" in summary
        assert watched.console == []
    finally:
        watched.page.close()
