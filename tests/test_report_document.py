"""The document model and its three back-ends: one formatter per column type (a missing value, a
p-value and a percentage read the same in every format), cut lists say so, escaping happens in the
back-ends (a kind cannot put raw HTML on a page), and a broken third-party kind is isolated."""

from __future__ import annotations

import html
import json
import math
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragaudit.errors import InputError
from ragaudit.report.document import (
    Column,
    Details,
    Document,
    DotPlot,
    Items,
    KeyValues,
    Paragraph,
    Section,
    Table,
    Verdict,
    cut_note,
)
from ragaudit.report.draw.cells import MISSING, cell, p_value
from ragaudit.report.draw.html import draw_html
from ragaudit.report.draw.markdown import draw_markdown
from ragaudit.report.draw.terminal import draw_terminal
from ragaudit.report.html import render_html
from ragaudit.report.kinds import registered_kinds, registry, report_kind
from ragaudit.report.markdown import render_markdown
from ragaudit.report.terminal import render_terminal
from ragaudit.report.view import build_view

ENVELOPE = {"schema_version": 1, "ragaudit_version": "0.1.0", "created_at": "2026-01-31T12:00:00+00:00"}
HOSTILE = "<script>document.title='pwned'</script>"


def _drawn(document: Document, limit: int = 10) -> dict[str, str]:
    return {
        "terminal": "\n".join(draw_terminal(document, limit)),
        "markdown": "\n".join(draw_markdown(document, limit)),
        "html": "".join(inner for _, _, inner in draw_html(document, limit)),
    }


def test_one_formatter_per_column_type() -> None:
    assert [cell(v, Column("x", "number")) for v in (None, math.nan, "n/a", True, 0.12345, 1234)] == [
        MISSING, MISSING, MISSING, MISSING, "0.1235", "1,234",
    ]  # fmt: skip
    assert cell(0.0004, Column("p", "p_value")) == "< 0.001" == p_value(0.0004)
    assert cell(0.04213, Column("p", "p_value")) == "0.042"
    assert cell(0.125, Column("share", "percent")) == "12.5%"
    assert cell(0.5, Column("d", "signed", 3)) == "+0.500"
    assert cell(None, Column("id", "id")) == MISSING and cell("q1", Column("id", "id")) == "q1"


def test_a_missing_value_a_p_value_and_a_percentage_read_the_same_in_every_format() -> None:
    table = Table(
        (Column("case", "id"), Column("share", "percent"), Column("p", "p_value"), Column("mean", "number")),
        (("q1", 0.5, 0.0001, None),),
    )
    for fmt, drawn in _drawn(Document((Section("t", "T", (table,)),))).items():
        text = html.unescape(drawn)  # as a reader sees it
        assert "50.0%" in text and "< 0.001" in text and MISSING in text, fmt


def test_a_long_list_is_cut_with_a_stated_first_n_of_m() -> None:
    rows = tuple((f"q{i}", i) for i in range(30))
    document = Document(
        (
            Section(
                "t",
                "T",
                (
                    Table((Column("case", "id"), Column("n", "count")), rows),
                    Items("cases", (("q0", "why"),), total=4),
                ),
            ),
        )
    )
    drawn = _drawn(document, limit=5)
    assert cut_note(5, 30) == "first 5 of 30 shown; all 30 are in the JSON report"
    assert "first 5 of 30 shown" in drawn["terminal"] and "q5" not in drawn["terminal"]
    assert "first 1 of 4 shown" in drawn["terminal"]  # a list the kind cut itself says so too
    assert "first 5 of 30 shown" in drawn["markdown"] and "first 5 of 30 shown" in drawn["html"]
    whole = Table((Column("figure"), Column("n", "count")), rows, cut=False)
    assert "q29" in "\n".join(draw_terminal(Document((Section("t", "T", (whole,)),)), 5))


def test_the_back_ends_escape_every_text_of_a_document() -> None:
    document = Document(
        (
            Section(
                "x\"><script>", HOSTILE,
                (
                    Paragraph(HOSTILE), Verdict(HOSTILE, "fail", HOSTILE), KeyValues(((HOSTILE, HOSTILE),)),
                    Table((Column(HOSTILE),), ((HOSTILE,),)), Items(HOSTILE, ((HOSTILE, HOSTILE),)),
                    Details(HOSTILE, (Paragraph(HOSTILE),)), DotPlot(HOSTILE, (HOSTILE,), ((HOSTILE, (0.5,)),)),
                ),
            ),
        )
    )  # fmt: skip
    drawn = _drawn(document)
    assert "<script>" not in drawn["markdown"] and "<script>" not in drawn["html"]
    assert HOSTILE in drawn["terminal"]  # plain text stays as written in a terminal


@pytest.fixture
def clean_registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    registered_kinds()  # loaded before it is saved, so the restore brings the built-ins back
    saved, broken = dict(registry._KINDS), dict(registry._BROKEN)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    registry._KINDS.clear()
    registry._KINDS.update(saved)
    registry._BROKEN.clear()
    registry._BROKEN.update(broken)
    registry._loaded = True
    for name in [m for m in sys.modules if m.startswith("hostile_kind")]:
        del sys.modules[name]


def _entry_points(folder: Path, points: dict[str, str]) -> None:
    dist = folder / "hostile_kind-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: hostile-kind\nVersion: 0.1\n")
    lines = "".join(f"{name} = {target}\n" for name, target in points.items())
    (dist / "entry_points.txt").write_text(f"[{registry.GROUP}]\n{lines}")
    registry._KINDS.clear()
    registry._BROKEN.clear()
    registry._loaded = False


def test_a_broken_entry_point_is_reported_once_by_name_and_the_built_ins_still_work(
    clean_registry: Path,
) -> None:
    (clean_registry / "hostile_kind_broken.py").write_text("raise ImportError('no module named cuda')\n")
    _entry_points(
        clean_registry, {"broken-kind": "hostile_kind_broken:KIND", "gone-kind": "hostile_kind_gone:KIND"}
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kinds = registered_kinds()
        registered_kinds()
        report_kind("eval")
    messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(messages) == 2 and "'broken-kind'" in messages[0] and "no module named cuda" in messages[0]
    assert "'gone-kind'" in messages[1]
    assert {"eval", "stale-audit", "tenant-audit"} <= set(kinds)
    gold = json.loads((Path(__file__).parent / "gold" / "inputs" / "stale-audit.json").read_text())
    assert "stale_share@3" in render_terminal(gold)
    with pytest.raises(InputError, match=r"report kind .broken-kind. failed to load .*no module named cuda"):
        render_terminal({**ENVELOPE, "kind": "broken-kind"})


HOSTILE_PLUGIN = f'''
from ragaudit.report.kinds import ReportKind


class RawKind(ReportKind):
    name = "raw-kind"

    def markdown(self, view):
        return ["<img src=x onerror=alert(1)>"]

    def html(self, view):
        return [("raw", "Raw", "{HOSTILE}")]

    def terminal(self, report, limit=10):
        return ["raw"]


KIND = RawKind()
'''


def test_a_third_party_kind_cannot_inject_raw_html(clean_registry: Path) -> None:
    (clean_registry / "hostile_kind_raw.py").write_text(
        HOSTILE_PLUGIN.replace("{HOSTILE}", HOSTILE.replace("'", "\\'"))
    )
    _entry_points(clean_registry, {"raw-kind": "hostile_kind_raw:KIND"})
    view = build_view({**ENVELOPE, "kind": "raw-kind"})
    page = render_html(view)
    assert HOSTILE not in page and "&lt;script&gt;document.title=" in page
    assert "<img src=x" not in render_markdown(view)


def test_a_stale_audit_with_unexpected_metric_names_renders(tmp_path: Path) -> None:
    gold: dict[str, Any] = json.loads(
        (Path(__file__).parent / "gold" / "inputs" / "stale-audit.json").read_text()
    )
    gold["sources"][0]["metrics"] = {"stale_share@3": 0.2, "stale_something_new@3": 0.1}
    gold["sources"][1]["metrics"] = {}
    text = render_terminal(gold)
    assert "stale_something_new@3" in text and MISSING in text
    markdown = render_markdown(build_view(gold))
    assert "stale\\_something\\_new@3" in markdown


def test_the_example_kind_of_docs_reports_md_draws_in_all_three_formats(clean_registry: Path) -> None:
    """The "Adding a kind" example of docs/reports.md, run as written."""
    docs = (Path(__file__).parents[1] / "docs" / "reports.md").read_text(encoding="utf-8")
    code = docs.split("### Adding a kind", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    (clean_registry / "hostile_kind_docs.py").write_text(code, encoding="utf-8")
    from ragaudit.report.kinds import load_kind

    load_kind("hostile_kind_docs:KIND")
    report = {
        **ENVELOPE,
        "kind": "latency-budget",
        "budget_ms": 50,
        "pipelines": [{"name": "a", "p95": 80.0}],
    }
    said = "1 of 1 over 50 ms; 0 not measured"
    assert render_terminal(report).splitlines()[0] == f"latency budget: FAIL - {said}"
    assert f"**❌ latency budget: FAIL**: {said}" in render_markdown(build_view(report))
    unmeasured = {**report, "pipelines": [{"name": "a", "p95": 20.0}, {"name": "b"}]}
    assert render_terminal(unmeasured).startswith("latency budget: NOT VERIFIED - 0 of 2 over 50 ms; 1 not")
    assert '<section id="budget"><h2>Latency budget</h2><p class="bad-line">' in render_html(
        build_view(report)
    )


def test_links_badges_and_leads_draw_safely_in_every_format() -> None:
    from ragaudit.report.document import Badge, Lead, Link, Links, safe_href

    assert safe_href("bm25.html") == "bm25.html" and safe_href("runs/a.html#q1") == "runs/a.html#q1"
    for hostile in ("javascript:alert(1)", "JavaScript:alert(1)", "//evil.example/x", "/etc/passwd", ""):
        assert safe_href(hostile) is None, hostile
    evil = '<img src=x onerror="alert(1)">'
    table = Table(
        (Column("pipeline"), Column("tenant isolation")),
        ((Link(evil, "javascript:alert(1)"), Badge("not_verified", "? not verified", evil)),
         (Link("bm25", "bm25.html"), Badge("pass", "✓ verified", "all checked"))),
        name="ranking",
        highlight=1,
    )  # fmt: skip
    document = Document(
        (Section("s", "S", (Lead("Recommendation", evil), Links("pages:", (("a", "a.html"),)), table)),)
    )
    page = "".join(inner for _, _, inner in draw_html(document))
    assert "<img" not in page and "javascript:" not in page  # text, and no link for a scheme
    assert '<a href="bm25.html">bm25</a>' in page and '<tr class="win">' in page
    assert '<span class="badge small warn" title="&lt;img' in page and '<p class="advice">&lt;img' in page
    assert 'class="stack rowcards ranking"' in page and 'data-label="tenant isolation"' in page
    assert draw_terminal(document)[0] == f"recommendation: {evil}"
    markdown = "\n".join(draw_markdown(document))
    assert "**Recommendation:** &lt;img" in markdown and "| ? not verified |" in markdown
