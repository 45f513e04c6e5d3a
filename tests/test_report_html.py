"""``ragaudit report --format html``: one self-contained file, every section, all content escaped.

The page's behaviour in a real browser is tested in test_report_chromium.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from ragaudit.artifacts.envelope import schema_errors
from ragaudit.artifacts.escape import script_json
from ragaudit.cli.main import main
from ragaudit.evaluation.compare import compare_reports, load_report
from ragaudit.report.html import render_html
from ragaudit.report.markdown import render_markdown
from ragaudit.report.svg import histogram, line_chart, nice_ticks
from ragaudit.report.view import build_view, case_changes
from report_fixtures import EVIL_CHUNK, EVIL_ERROR, SCRIPT_QUERY, build_reports, load, with_extras


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return build_reports(tmp_path_factory.mktemp("html"))


@pytest.fixture(scope="module")
def page(reports: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> str:
    """The HTML of ``better`` against ``base``, with query text, gate, k-sweep and chunking."""
    report = tmp_path_factory.mktemp("page") / "report.json"
    report.write_text(json.dumps(with_extras(load(reports["better"]))), encoding="utf-8")
    out = report.with_suffix(".html")
    args = [str(report), "--baseline", str(reports["base"]), "--dataset", str(reports["golden"])]
    assert main(["report", *args, "--format", "html", "--out", str(out), "--resamples", "500"]) == 0
    return out.read_text(encoding="utf-8")


def without_data(html: str) -> str:
    """The page without its JSON data block (which holds user content, escaped for a script block)."""
    return re.sub(r'<script type="application/json" id="ragaudit-data">.*?</script>', "", html, flags=re.S)


def embedded(html: str) -> dict[str, Any]:
    match = re.search(r'<script type="application/json" id="ragaudit-data">(.*?)</script>', html, re.S)
    assert match is not None
    data: dict[str, Any] = json.loads(match.group(1))
    return data


def test_the_page_is_self_contained_and_may_fetch_nothing(page: str) -> None:
    assert page.startswith("<!doctype html>")
    assert (
        "http://" not in page
        and "https://" not in page
        and "//" not in re.sub(r"<script>.*?</script>", "", page, flags=re.S)
    )
    markup = re.sub(r"<script.*?</script>", "", page, flags=re.S)
    assert re.search(r"<[^>]*\s(src|srcset|action|data|poster)\s*=", markup) is None
    assert all(href.startswith("#") for href in re.findall(r'href="([^"]*)"', page))
    assert "<link" not in page and "@import" not in page and "url(" not in page
    assert "default-src 'none'" in page
    assert page.count("<script") == 2 and page.count("</script>") == 2  # the data and the code, nothing else


def test_user_content_never_becomes_markup(page: str) -> None:
    assert "<img" not in page and "onerror=" not in without_data(page)
    assert "<script" not in re.sub(r"<script.*?</script>", "", page, flags=re.S).lower()
    data = embedded(page)
    by_id = {c["id"]: c for c in data["cases"]}
    assert by_id["q03"]["query"] == SCRIPT_QUERY
    assert by_id["q03"]["retrieved"][0]["chunk_id"] == EVIL_CHUNK
    assert "\\u003cscript\\u003e" in page  # the query inside the JSON block, escaped
    raw = script_json({"s": "</script><!-- \u2028 & NaN", "n": float("nan")})
    assert "<" not in raw and ">" not in raw and "&" not in raw and "\u2028" not in raw
    assert json.loads(raw) == {"s": "</script><!-- \u2028 & NaN", "n": None}


def test_errors_are_escaped_in_static_sections(reports: dict[str, Path]) -> None:
    html = render_html(build_view(load(reports["base"]), resamples=200))
    assert "&lt;/script&gt;&lt;script&gt;document.title=&#x27;pwned&#x27;&lt;/script&gt; upstream 503" in html
    assert EVIL_ERROR not in html


def test_every_section_is_present_when_its_data_is(page: str, reports: dict[str, Path]) -> None:
    ids = re.findall(r'<section id="([^"]+)"', page)
    assert ids == [
        "outcome",
        "summary",
        "metrics",
        "changes",
        "holes",
        "latency",
        "problems",
        "security",
        "notes",
        "tenants",
        "queries",
        "k-sweep",
        "chunking",
        "provenance",
    ]
    assert 'class="badge fail">gate FAILED</span> security: 1 cross-tenant leak &gt; max_leaks 0' in page
    plain = render_html(build_view(load(reports["base"]), resamples=200))
    plain_ids = re.findall(r'<section id="([^"]+)"', plain)
    assert "changes" not in plain_ids and "k-sweep" not in plain_ids and 'class="badge' not in plain


def test_the_metric_chart_carries_cis_and_the_baseline(page: str) -> None:
    """One axis per metric: this run's mean with its bootstrap CI, the baseline's mean beside it; the
    table above it has the delta, bold and marked where significant."""
    metrics = page.split('<section id="metrics">')[1].split("</section>")[0]
    chart = metrics[metrics.index("<svg") :]
    assert chart.count('<text class="label"') == 4  # nDCG@10, R@5, MRR@10, P@5
    assert chart.count('<g class="whisker s0"') == 4 and 'class="whisker s1"' not in chart
    assert chart.count('<circle class="ring"') == 4  # this run, ringed
    # each metric's axis scaled to its values: none of them is drawn on 0-1
    assert chart.count('class="axisbreak"') >= 1
    table = metrics[: metrics.index("<svg")]
    assert '<span class="up sig">+0.' in table and "▲" in table


def test_the_table_data_has_columns_changes_and_queries(page: str) -> None:
    data = embedded(page)
    assert [c["label"] for c in data["columns"]] == [
        "case",
        "query",
        "tenant",
        "status",
        "nDCG@10",
        "R@5",
        "MRR@10",
        "P@5",
        "Δ nDCG@10",
        "ms",
    ]
    assert data["hasBaseline"] and data["baseline"] == "base" and data["primary"] == "nDCG@10"
    by_id = {c["id"]: c for c in data["cases"]}
    assert len(by_id) == 40 and by_id["q39"]["status"] == "unanswerable"
    changed = by_id["q01"]["changes"]
    assert set(changed) == {"status_before", "deltas", "entered", "left", "moves"}
    assert changed["deltas"]["MRR@10"] == pytest.approx(0.8)  # rank 5 -> rank 1
    assert changed["moves"][0] == {"chunk_id": "globex-d1", "before": 5, "now": 1}
    assert by_id["q07"]["changes"]["status_before"] == "error" and by_id["q07"]["status"] == "ok"
    assert by_id["q09"]["leaks"][0]["chunk_id"] == "initech-secret-contract"


def test_compare_and_benchmark_pages(reports: dict[str, Path]) -> None:
    loaded = [load_report(reports["base"]), load_report(reports["better"])]
    compare = json.loads(json.dumps(compare_reports(loaded, n_resamples=200)))
    html = render_html(build_view(compare))
    sections = re.findall(r'<section id="([^"]+)"', html)
    assert sections == ["outcome", "compare", "holes", "power", "provenance"]  # notes: in holes
    # the fixture's runs have failed cases: each compared run that fails the exit rule is said first
    assert [f["system"] for f in compare["failed_runs"]] and "its metrics score its failed" in html
    assert "lower bounds" in html  # the fixture's systems return unjudged chunks: the notes warn
    assert html.count('<circle class="pt') == 4 and "better · MRR@10" in html
    assert embedded(html)["cases"] == []


def test_chart_helpers_handle_edge_cases() -> None:
    assert nice_ticks(0, 1, 5) == [0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert nice_ticks(0, 37, 4) == [0, 10, 20, 30, 40]
    assert nice_ticks(1, 1) == [1]
    assert "<svg" in histogram([5.0], "one value", {"p50": 5.0})
    assert "<svg" in histogram([], "no values", {})
    chart = line_chart(["1", "5"], [("<b>R@k</b>", [0.2, None])], "t", "k")
    assert "&lt;b&gt;R@k&lt;/b&gt;" in chart and chart.count("<circle") == 1


def test_the_drill_down_keeps_the_first_chunks_and_says_how_many(reports: dict[str, Path]) -> None:
    report = load(reports["better"])
    extra = [{"chunk_id": f"extra-{i}", "score": 0.0, "grade": None, "relevant": False} for i in range(25)]
    report["per_case"][0]["retrieved"] += extra
    row = build_view(report, resamples=100).cases[0]
    assert len(row["retrieved"]) == 20 and row["retrieved_total"] == len(report["per_case"][0]["retrieved"])


def test_case_changes_compare_the_top_of_both_lists_and_track_judged_chunks() -> None:
    now = {
        "status": "ok",
        "metrics": {"R@5": 1.0},
        "retrieved": [{"chunk_id": c, "relevant": c == "a"} for c in "abc"],
    }
    before = {
        "status": "ok",
        "metrics": {"R@5": 0.0},
        "retrieved": [{"chunk_id": c, "grade": 0} for c in "bda"],
    }
    changes = case_changes(now, before, depth=2)
    assert changes["deltas"] == {"R@5": 1.0}
    assert changes["entered"] == ["a"] and changes["left"] == ["d"]
    assert changes["moves"] == [{"chunk_id": "a", "before": 3, "now": 1}]


ENVELOPE = {"schema_version": 1, "ragaudit_version": "0.1.0", "created_at": "2026-01-31T12:00:00+00:00"}


def test_k_sweep_chunking_sweep_and_gate_reports_get_their_sections() -> None:
    rows = [{"k": k, "R": 0.2 * k, "nDCG": 0.15 * k, "context_tokens": None} for k in (1, 2, 3)]
    k_sweep = {**ENVELOPE, "kind": "k-sweep", "families": ["R", "nDCG"], "rows": rows}
    html = render_html(build_view(k_sweep))
    assert re.findall(r'<section id="([^"]+)"', html) == ["k-sweep", "provenance"]
    assert html.count("<polyline") == 2 and "nDCG@k" in html
    assert "| 1 | 0.2000 | 0.1500 | – |" in render_markdown(build_view(k_sweep))  # a row per k, as printed
    point = {"chunking": {"strategy": "fixed", "size": 128, "overlap": 16}, "index": {"chunks": 400}}
    sweep = {
        **ENVELOPE,
        "kind": "chunking-sweep",
        "points": [
            {**point, "name": "fixed-128", "metrics": {"nDCG@10": 0.7}},
            {**point, "name": "<b>whole</b>", "metrics": {"nDCG@10": 0.8}},
        ],
    }
    html = render_html(build_view(sweep))
    assert "chunking" in re.findall(r'<section id="([^"]+)"', html) and "&lt;b&gt;whole&lt;/b&gt;" in html
    # a dot per chunking on an axis scaled to 0.7-0.8 (not bars on 0-1), the best one ringed
    assert "axes scaled to the data" in html and '<rect class="bar' not in html.split('id="chunking"')[1]
    assert "| fixed-128 | 0.7000 | – | – | – | – | 400 |" in render_markdown(build_view(sweep))
    gate = {
        **ENVELOPE,
        "kind": "gate",
        "passed": False,
        "gates": [{"name": "quality", "passed": False, "messages": ["nDCG@10 0.61 < floor 0.70"]}],
    }
    page = render_html(build_view(gate))  # a gate report's verdict is its own section, not a header badge
    assert '<section id="gate"><h2>Gate</h2><p>ragaudit gate: FAIL (1 of 1 gates failed)</p>' in page
    assert "<code>[FAIL] quality</code>  nDCG@10 0.61 &lt; floor 0.70" in page and 'class="badge' not in page
    assert "ragaudit gate: FAIL (1 of 1 gates failed)" in render_markdown(build_view(gate))
    for report in (k_sweep, sweep, gate):
        assert schema_errors(report) == []
