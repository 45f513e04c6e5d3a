"""What the history view must not present as a trend. A recorded run whose cases failed (errors, missing: each scored 0) is marked in the history's
terminal trend and HTML runs table (before: its figures sat in the trend like any run's, so a drop
made of timeouts read as a regression of the ranking, and the recovery after it as an improvement).
The honest twin: a series without failed cases shows no mark. Also: one run is no trend, and a golden
set edited under the same path is named across its headings."""

from __future__ import annotations

from pathlib import Path

from conftest import KB
from ragaudit.artifacts.history import open_history, series
from ragaudit.data.loading import load_dataset
from ragaudit.data.run import CaseRun, RankedItem, Run
from ragaudit.evaluation.evaluate import evaluate
from ragaudit.report.history_view import render_html, render_terminal


def _report(created_at: str, failing: int) -> dict[str, object]:
    dataset = load_dataset(KB / "golden.jsonl")
    cases = {}
    for n, case in enumerate(dataset.cases):
        if n < failing:
            cases[case.id] = CaseRun(error="timeout after 30s", latency_ms=1.0)
        else:
            cases[case.id] = CaseRun(
                [RankedItem(i, 1.0) for i in sorted(case.relevant_set(1))], latency_ms=1.0
            )
    context = {"pipeline": {"name": "bm25", "config_sha256": "cfg"}}
    data = evaluate(dataset, Run(cases, name="bm25"), "nDCG@10", None, context).to_dict()
    data["created_at"] = created_at
    return data


def test_a_run_with_failed_cases_is_marked(tmp_path: Path) -> None:
    with open_history(tmp_path / "h.sqlite") as history:
        history.record(_report("2026-12-01T00:00:00Z", 0))
        history.record(_report("2026-12-02T00:00:00Z", 7))
        runs = history.runs()
    text = render_terminal(series(runs), ["nDCG@10"])
    assert "FAILED cases in run 2 (7 of 84 cases): each failed case scored 0" in text
    page = render_html(series(runs), ["nDCG@10"], "h.sqlite")
    assert "<td class=num>FAILED 7</td>" in page


def test_a_series_without_failed_cases_has_no_mark(tmp_path: Path) -> None:
    with open_history(tmp_path / "h.sqlite") as history:
        history.record(_report("2026-12-01T00:00:00Z", 0))
        runs = history.runs()
    assert "FAILED" not in render_terminal(series(runs), ["nDCG@10"])
    assert "FAILED" not in render_html(series(runs), ["nDCG@10"], "h.sqlite")


def test_one_run_is_no_trend(tmp_path: Path) -> None:
    """Before: a series of one run read "0.9xxx -> 0.9xxx (+0.0000)", a claim of no change that one
    point cannot make."""
    with open_history(tmp_path / "h.sqlite") as history:
        history.record(_report("2026-12-01T00:00:00Z", 0))
        runs = history.runs()
    text = render_terminal(series(runs), ["nDCG@10"])
    assert "(one recorded run: no trend yet)" in text and "+0.0000" not in text


def test_an_edited_golden_set_is_named_across_its_headings(tmp_path: Path) -> None:
    """Before: a golden set edited under the same path (its hard cases removed) started a new heading
    whose series began higher, with no word that the two headings are one file edited."""
    golden = tmp_path / "golden.jsonl"
    lines = (KB / "golden.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    golden.write_text("".join(lines), encoding="utf-8")
    first = _report_on(golden, "2026-12-01T00:00:00Z")
    golden.write_text("".join(lines[10:]), encoding="utf-8")
    second = _report_on(golden, "2026-12-02T00:00:00Z")
    with open_history(tmp_path / "h.sqlite") as history:
        history.record(first)
        history.record(second)
        runs = history.runs()
    text = render_terminal(series(runs), ["nDCG@10"])
    assert f"note: the golden set {golden} was edited between runs (2 versions" in text
    with open_history(tmp_path / "one.sqlite") as history:  # the honest twin: one version, no note
        history.record(first)
        assert "was edited" not in render_terminal(series(history.runs()), ["nDCG@10"])


def _report_on(golden: Path, created_at: str) -> dict[str, object]:
    dataset = load_dataset(golden)
    cases = {c.id: CaseRun([RankedItem(i, 1.0) for i in sorted(c.relevant_set(1))]) for c in dataset.cases}
    context = {"pipeline": {"name": "bm25", "config_sha256": "cfg"}}
    data = evaluate(dataset, Run(cases, name="bm25"), "nDCG@10", None, context).to_dict()
    data["created_at"] = created_at
    return data
