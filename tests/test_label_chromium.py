"""The labeling workbench in a real headless Chromium (Debian's /usr/bin/chromium, driven by playwright)
against a real server process: keyboard grading, a mouse-selected evidence span, undo, filters, a
reload, and a server killed with SIGKILL and restarted. Skipped when /usr/bin/chromium or playwright is
absent (``apt-get install chromium``; never ``playwright install``).

``RAGAUDIT_SCREENSHOTS=docs/img`` also saves the screenshots used in docs/golden-sets.md.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from chromium import CHROMIUM, off_the_loop
from label_fixtures import LabelServer, small_pool
from ragaudit.labeling.judgments import read_labels

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason=f"{CHROMIUM} not installed (apt-get install chromium)"
)
pytest.importorskip("starlette")


@pytest.fixture(scope="module")
def pool(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built off the thread of playwright's event loop (open when the previous file's last test used the
    shared browser): ``ragaudit pool`` runs ``asyncio.run``."""
    return off_the_loop(small_pool, tmp_path_factory.mktemp("label-pool"))


def _shot(page: Any, name: str) -> None:
    folder = os.environ.get("RAGAUDIT_SCREENSHOTS")
    if folder:
        page.screenshot(path=str(Path(folder) / name))


def _settled(page: Any) -> None:
    # a selector, not wait_for_function: the page's CSP forbids the eval that one needs
    page.wait_for_selector("body[data-ready='1']:not([data-pending]), body[data-ready='1'][data-pending='0']")


def _open(page: Any, url: str) -> None:
    page.goto(url)
    _settled(page)


def test_label_a_pool_end_to_end_by_keyboard_and_mouse(pool: Path, browser: Any, tmp_path: Path) -> None:
    out = tmp_path / "judgments" / "ana.jsonl"
    srv = LabelServer(pool, out)
    page = browser.new_page(viewport={"width": 1360, "height": 860})
    errors: list[str] = []
    requests: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))
    try:
        _open(page, srv.url)
        assert page.inner_text("#progress").startswith("judged 5 / 9")
        # it opens on the first candidate still to judge, the scale on screen
        assert page.inner_text("#cand-id") == "acme-faq-billing"
        assert "authoritative and complete" in page.inner_text("#scale")
        assert "not judged yet" in page.inner_text("#grade-badge")

        # a span selected with the mouse, saved with the button
        box = page.locator("#cand-text").bounding_box()
        page.mouse.move(box["x"] + 12, box["y"] + 14)
        page.mouse.down()
        page.mouse.move(box["x"] + 260, box["y"] + 14, steps=8)
        page.mouse.up()
        selected = page.evaluate("window.getSelection().toString()")
        assert len(selected) > 5
        page.wait_for_selector("#span-btn:not([disabled])")
        page.click("#span-btn")
        _settled(page)
        assert page.inner_text("#cand-text mark") == selected
        _shot(page, "label-workbench.png")

        # grade 1 by keyboard: saved, acknowledged, and the workbench moves on
        page.keyboard.press("1")
        _settled(page)
        assert "saved" in page.inner_text("#status")
        assert page.inner_text("#progress").startswith("judged 6 / 9")
        labels = read_labels(out)
        assert labels.state.grades[("acme-pricing-001", "acme-faq-billing")]["grade"] == 1
        (span,) = labels.state.spans[("acme-pricing-001", "acme-faq-billing")]
        text = page.evaluate("S.pool.cases[0].candidates.find(c => c.chunk_id === 'acme-faq-billing').text")
        assert text[span["start"] : span["end"]] == selected

        # undo takes back the grade and goes back to it; a second undo drops the span
        page.keyboard.press("z")
        _settled(page)
        assert page.inner_text("#cand-id") == "acme-faq-billing"
        assert "not judged yet" in page.inner_text("#grade-badge")
        page.keyboard.press("z")
        _settled(page)
        assert page.locator("#cand-text mark").count() == 0
        assert ("acme-pricing-001", "acme-faq-billing") not in read_labels(out).state.spans
        page.keyboard.press("2")
        _settled(page)

        # superseded by keyboard on the next one still to judge, unanswerable mark on a case
        page.keyboard.press("n")
        assert page.inner_text("#cand-id") == "acme-returns-policy"
        page.keyboard.press("s")
        _settled(page)
        labels = read_labels(out)
        assert labels.state.grades[("acme-warranty-001", "acme-returns-policy")]["superseded"] is True

        # filter by tenant, then by case
        page.select_option("#filter-tenant", "initech")
        _settled(page)
        assert page.inner_text("#cand-pos") == "candidate 1 of 1"
        assert page.inner_text("#case-tenant") == "initech"
        page.keyboard.press("u")
        _settled(page)
        assert page.is_visible("#unanswerable-badge")
        page.select_option("#filter-tenant", "")
        page.select_option("#filter-case", "globex-pricing-001")
        _settled(page)
        assert page.inner_text("#cand-pos").endswith("of 2")
        page.keyboard.press("j")
        assert page.inner_text("#cand-id") == "globex-faq-billing"

        # reload: everything acknowledged is still there, and the page stays where it was
        page.reload()
        _settled(page)
        assert page.inner_text("#cand-id") == "globex-faq-billing"
        assert page.inner_text("#progress").startswith("judged 7 / 9")

        # kill -9 the server: the next keystroke is NOT acknowledged, and says so
        srv.kill()
        page.keyboard.press("3")
        _settled(page)
        assert "NOT SAVED" in page.inner_text("#status")
        assert page.inner_text("#progress").startswith("judged 7 / 9")
        _shot(page, "label-server-down.png")

        # restart on the same file: a new token, the same judgments; label the last one
        srv = LabelServer(pool, out)
        _open(page, srv.url)
        assert page.inner_text("#progress").startswith("judged 7 / 9")
        assert page.is_visible("#grade-badge")
        page.keyboard.press("n")
        page.keyboard.press("3")
        _settled(page)
        page.keyboard.press("n")
        page.keyboard.press("0")
        _settled(page)
        assert page.inner_text("#progress").startswith("judged 9 / 9")
    finally:
        srv.stop()
        page.close()
    assert errors == []
    assert all(r.startswith("http://127.0.0.1:") for r in requests), requests
    labels = read_labels(out)
    assert len(labels.state.grades) == 4
    assert labels.state.unanswerable["initech-unanswerable-001"]["value"] is True


def test_adjudication_page_shows_only_the_disagreements(pool: Path, browser: Any, tmp_path: Path) -> None:
    from ragaudit.labeling.judgments import JudgmentLog

    files = []
    for name, grade in (("ana", 1), ("bob", 2)):
        log = JudgmentLog(tmp_path / f"{name}.jsonl", name, {"pool": str(pool)})
        log.append(
            {
                "kind": "grade",
                "case_id": "acme-pricing-001",
                "chunk_id": "acme-faq-billing",
                "grade": grade,
                "superseded": False,
            }
        )
        log.append(
            {
                "kind": "grade",
                "case_id": "acme-warranty-001",
                "chunk_id": "acme-returns-policy",
                "grade": 0,
                "superseded": False,
            }
        )
        log.close()
        files.append(str(tmp_path / f"{name}.jsonl"))
    out = tmp_path / "lead.jsonl"
    srv = LabelServer(pool, out, "lead", "--adjudicate", *files)
    page = browser.new_page(viewport={"width": 1360, "height": 860})
    try:
        _open(page, srv.url)
        assert page.is_checked("#filter-disagree")
        assert page.inner_text("#cand-pos") == "candidate 1 of 1"
        assert page.inner_text("#cand-id") == "acme-faq-billing"
        assert page.inner_text("#others") == "other annotators: ana 1, bob 2"
        assert "adjudicating ana, bob" in page.inner_text("#annotator")
        _shot(page, "label-adjudicate.png")
        page.keyboard.press("2")
        _settled(page)
        page.uncheck("#filter-disagree")
        _settled(page)
        assert page.inner_text("#cand-pos").endswith("of 9")
    finally:
        srv.stop()
        page.close()
    assert read_labels(out).state.grades[("acme-pricing-001", "acme-faq-billing")]["grade"] == 2


def test_version_sibling_suggestion_and_deep_link(pool: Path, browser: Any, tmp_path: Path) -> None:
    srv = LabelServer(pool, tmp_path / "ana.jsonl")
    page = browser.new_page(viewport={"width": 1360, "height": 860})
    try:
        _open(page, srv.url + "#case=acme-warranty-001&chunk=acme-warranty-policy-v1")
        assert page.inner_text("#cand-id") == "acme-warranty-policy-v1"
        assert "newer version: acme-warranty-policy-v2" in page.inner_text("#cand-meta")
        assert page.inner_text("#suggestion") == (
            "suggested: 0, superseded (the newer version acme-warranty-policy-v2 is graded 3): press S"
        )
        page.keyboard.press("k")
        assert page.inner_text("#cand-id") == "acme-warranty-policy-v2"
        assert page.inner_text("#suggestion") == ""
        assert "older versions: acme-warranty-policy-v1" in page.inner_text("#cand-meta")
    finally:
        srv.stop()
        page.close()


def test_hostile_pool_content_stays_text(browser: Any, tmp_path: Path) -> None:
    from ragaudit.labeling.pool import Candidate, ChunkText, Pool, PoolCase

    evil = '<img src=x onerror="alert(1)"><script>alert(2)</script>'
    text = ChunkText("d1", 0, evil, "before " + evil + " after", {"version": evil})
    case = PoolCase("c<b>1</b>", "query " + evil, "t<i>x</i>", [Candidate("d1", text, {"sys": 1})])
    pool = tmp_path / "evil.jsonl"
    Pool([case], {"depth": 1, "systems": ["sys"]}).write(pool)
    srv = LabelServer(pool, tmp_path / "ana.jsonl")
    page = browser.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    try:
        _open(page, srv.url)
        assert page.inner_text("#cand-title") == evil
        assert page.inner_text("#case-query") == "query " + evil
        assert page.locator("#cand-box img, #cand-box script, #case-box img").count() == 0
        page.keyboard.press("2")
        _settled(page)
    finally:
        srv.stop()
        page.close()
    assert dialogs == []
    assert read_labels(tmp_path / "ana.jsonl").state.grades[("c<b>1</b>", "d1")]["grade"] == 2


@pytest.mark.parametrize("width", [1366, 390])
def test_the_workbench_fits_a_phone(pool: Path, browser: Any, tmp_path: Path, width: int) -> None:
    """Issue 26.5: at 390 px the three columns became one (the page was 737 px wide)."""
    srv = LabelServer(pool, tmp_path / "judgments" / "ana.jsonl")
    page = browser.new_page(viewport={"width": width, "height": 860})
    try:
        _open(page, srv.url)
        size = page.evaluate(
            "() => ({page: document.documentElement.scrollWidth, view: document.documentElement.clientWidth})"
        )
        assert size["page"] <= size["view"], size
        assert page.locator("#case-query").is_visible() and page.locator("#cand-text").is_visible()
        grade = page.locator(".row button").first.bounding_box()
        assert grade is not None and grade["x"] + grade["width"] <= width  # the grade buttons on screen
    finally:
        page.close()
        srv.stop()
