"""``ragaudit report --format md``: the PR-comment Markdown of eval, compare and benchmark reports."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from conftest import write_lines
from ragaudit.artifacts.escape import escape_md
from ragaudit.cli.main import main
from ragaudit.evaluation.compare import compare_reports, load_report
from ragaudit.report.markdown import render_markdown
from ragaudit.report.terminal import render_terminal
from ragaudit.report.view import build_view
from report_fixtures import EVIL_ERROR, build_reports, load, with_extras


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return build_reports(tmp_path_factory.mktemp("md"))


def render(report: dict[str, Any], baseline: dict[str, Any] | None = None) -> str:
    return render_markdown(build_view(report, baseline, resamples=500))


def cli(*args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["report", *args])
    out, err = capsys.readouterr()
    return code, out, err


def table_rows(text: str) -> list[list[str]]:
    """Cells of every Markdown table line, split on unescaped pipes."""
    return [re.split(r"(?<!\\)\|", line)[1:-1] for line in text.splitlines() if line.startswith("| ")]


def test_against_a_baseline_the_table_shows_deltas_and_significant_changes(
    reports: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "pr.md"
    code, _, err = cli(
        str(reports["better"]), "--baseline", str(reports["base"]), "--out", str(out), capsys=capsys
    )
    assert code == 0 and "md report written" in err
    text = out.read_text(encoding="utf-8")
    assert text.startswith("### ragaudit eval: better on golden.jsonl")
    assert (
        "| metric | baseline (base) | this run | 95% CI of mean (unadjusted) | Δ | p (Holm) | W/T/L |" in text
    )
    mrr = next(line for line in text.splitlines() if line.startswith("| MRR@10 |"))
    assert "**+0." in mrr and "▲" in mrr
    assert "Significant changes against base (paired randomization test" in text
    assert "Holm-corrected across 4 metrics" in text
    assert "most improved on nDCG@10:" in text
    rows = table_rows(text)
    assert len({len(r) for r in rows[:6]}) == 1  # header, rule and the 4 metric rows have the same width
    assert "**❌ tenant isolation: FAIL**" in text and "✅" not in text.split("#### Security")[1]
    assert "SECURITY: 1 cross-tenant chunk(s) returned in 1 case(s) - a release blocker" in text
    assert "| q09 | initech-secret-contract | 2 | initech | globex |" in text
    assert "missing from the run (1, scored 0):\n\n- q05" in text
    assert "<details><summary>Provenance</summary>" in text and "sha256" in text


def test_without_a_baseline_the_table_shows_means_and_bootstrap_cis(reports: dict[str, Path]) -> None:
    text = render(load(reports["base"]))
    assert "| metric | mean | 95% CI | n |" in text and "Δ" not in text
    ndcg = next(r for r in table_rows(text) if r[0].strip() == "nDCG@10")
    lo, hi = (float(x) for x in re.findall(r"[\d.]+", ndcg[2]))
    assert lo < float(ndcg[1]) < hi
    assert "errors (1, scored 0):" in text and "cases 40: answerable 38 (averaged)" in text


def test_the_same_system_twice_has_no_significant_change(reports: dict[str, Path]) -> None:
    report = load(reports["base"])
    text = render(report, report)
    assert "No significant change against base (baseline) (paired randomization test" in text


def test_user_content_is_escaped(reports: dict[str, Path]) -> None:
    report = load(reports["base"])
    report["run"]["name"] = "a|b <script>alert(1)</script>"
    text = render(report)
    assert "<script" not in text and "<img" not in text and "</script" not in text
    assert "### ragaudit eval: a\\|b &lt;script&gt;alert(1)&lt;/script&gt; on golden.jsonl" in text
    assert escape_md(EVIL_ERROR) in text
    assert escape_md("x|y*z_[k](u)`c`\n<b>") == "x\\|y\\*z\\_\\[k\\](u)\\`c\\` &lt;b&gt;"
    assert escape_md("ping @alice about nDCG@10") == "ping &#64;alice about nDCG@10"


def test_gate_verdict_k_sweep_and_chunking_are_rendered(reports: dict[str, Path]) -> None:
    text = render(with_extras(load(reports["base"])))
    assert "**Gate: ❌ FAILED**" in text
    assert "- ✅ metrics-selftest" in text and "- ❌ security: 1 cross-tenant leak &gt; max\\_leaks 0" in text
    assert (
        "| series | k=1 | k=3 | k=5 | k=10 |" in text and "| nDCG@k | 0.4000 | 0.6000 | 0.6500 | – |" in text
    )
    assert "| fixed-128/16 | 0.7700 | 0.9000 | 412 |" in text


def test_a_gate_section_claiming_a_pass_over_a_failed_gate_renders_as_failed(
    reports: dict[str, Path],
) -> None:
    """A hand-edited verdict (passed: true, verdict: pass) cannot earn a check mark its gates deny."""
    report = with_extras(load(reports["base"]))
    edited = {**report["gate"], "passed": True, "verdict": "pass"}
    for gate in (edited, {**report["gate"], "passed": True}):
        text = render({**report, "gate": gate})
        assert "**Gate: ❌ FAILED**" in text and "PASSED" not in text
    not_verified = {
        "passed": True,
        "verdict": "pass",
        "gates": [{"name": "security", "passed": True, "status": "not_verified", "accepted": True}],
    }
    assert "**Gate: ⚠️ NOT VERIFIED**" in render({**report, "gate": not_verified})
    refused = {
        "passed": False,
        "verdict": "pass",
        "gates": [{"name": "quality", "passed": True, "status": "pass"}],
    }
    assert "**Gate: ❌ FAILED**" in render({**report, "gate": refused})  # it exited 1: no pass
    verdict = {"kind": "gate", "policy": {"source": "gates.toml"}, "report": "r.json", **edited}
    assert render_terminal(verdict).startswith("ragaudit gate: FAIL (1 of 2 gates failed)")


def test_compare_and_benchmark_reports_render(reports: dict[str, Path]) -> None:
    loaded = [load_report(reports["base"]), load_report(reports["better"])]
    compare = json.loads(json.dumps(compare_reports(loaded, n_resamples=300)))
    text = render(compare)
    assert text.startswith("### ragaudit compare: better vs base on golden.jsonl")
    assert "| MRR@10 | better |" in text and "after Holm correction" in text
    bench = {
        "schema_version": 1,
        "kind": "benchmark",
        "ragaudit_version": "0.1.0",
        "created_at": "2026-01-31T12:00:00+00:00",
        "baseline": "bm25",
        "invariants": {"cases": 40, "top_k": 10},
        "pipelines": [
            {"name": "bm25", "metrics": {"nDCG@10": 0.5}, "latency_ms": None, "leaks": 0},
            {"name": "dense", "metrics": {"nDCG@10": 0.7}, "latency_ms": {"p95": 12.0}, "leaks": 2},
        ],
        "comparisons": [
            {**compare["comparisons"][0], "system": "dense", "metric": "nDCG@10", "significant": True}
        ],
    }
    text = render(bench)
    assert text.startswith("### ragaudit benchmark: bm25, dense")
    # best value bold, ▲ significantly higher than the baseline (with its delta and p), the 2 leaks a failed verdict
    assert "| 2 | dense | **0.7000▲** | **+" in text and "| – | 12.0 | – | – | ✗ leaks (2) |" in text


def test_cli_refuses_a_different_dataset_or_a_non_eval_baseline(
    reports: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = write_lines(
        tmp_path / "other.jsonl", [json.dumps({"id": "x", "query": "q", "relevant_chunk_ids": ["d"]})]
    )
    code, _, err = cli(str(reports["base"]), "--dataset", str(other), capsys=capsys)
    assert code == 2 and "differs from the report's" in err and "pass the golden dataset" in err
    loaded = [load_report(reports["base"]), load_report(reports["better"])]
    compare = tmp_path / "compare.json"
    compare.write_text(json.dumps(compare_reports(loaded, n_resamples=100)), encoding="utf-8")
    code, _, err = cli(str(compare), "--baseline", str(reports["base"]), capsys=capsys)
    assert code == 2 and "--baseline works with eval reports" in err
    code, _, err = cli(str(tmp_path / "nope.json"), capsys=capsys)
    assert code == 2 and "report not found" in err
    code, out, _ = cli(str(reports["base"]), "--dataset", str(reports["golden"]), capsys=capsys)
    assert code == 0 and out.startswith("### ragaudit eval: base")


def test_a_long_k_sweep_shows_landmark_ks_only(reports: dict[str, Path]) -> None:
    ks = list(range(1, 31))
    report = {
        **load(reports["base"]),
        "k_sweep": {"k": ks, "series": [{"name": "R@k", "values": [k / 30 for k in ks]}]},
    }
    text = render(report)
    assert "| series | k=1 | k=3 | k=5 | k=10 | k=20 | k=30 |" in text
    assert "| R@k | 0.0333 | 0.1000 | 0.1667 | 0.3333 | 0.6667 | 1.0000 |" in text


def test_missing_cases_and_errors_are_listed_once_on_every_page(reports: dict[str, Path]) -> None:
    """One rule for both pages: a part the kind's document holds (the eval kind's "problems") is not
    listed again by the page (before: Markdown read a kind flag, HTML the document's anchors)."""
    from ragaudit.report.html import render_html

    view = build_view(load(reports["base"]), None, resamples=200)
    markdown, page = render_markdown(view), render_html(view)
    assert markdown.lower().count("errors (1, scored 0)") == 1
    assert page.count('id="problems"') == 1


def test_a_charts_caption_goes_where_the_chart_goes(reports: dict[str, Path]) -> None:
    """Markdown and the terminal draw no chart, so they print none of the captions that explain one
    ("Point: ... Whisker: ...", "the last (red) bar"); the HTML page prints each right below its chart."""
    from ragaudit.report.html import render_html

    report = load(reports["better"])
    view = build_view(report, load(reports["base"]), resamples=500)
    captions = ("Whisker: 95% percentile-bootstrap CI", "counted in the last (red) bar", "Blue points are")
    markdown, terminal = render_markdown(view), render_terminal(report)
    assert not [c for c in captions if c in markdown or c in terminal]
    page = render_html(view)
    for caption in captions:
        at = page.index(caption)
        assert page.rfind("</svg>", 0, at) > page.rfind("<section", 0, at), caption  # below a chart
