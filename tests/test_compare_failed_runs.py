"""A comparison with a report whose run failed on some cases (errors, missing: each scored 0) says so in
the comparison itself, the JSON and every page (before: ``compare.json`` and its page showed the
candidate "+0.3333*, significant" over a baseline whose 10 of 30 cases had timed out, with no word of
it; only the command's exit code and stderr knew). The honest twin: two runs without failed cases get
no such note."""

from __future__ import annotations

from pathlib import Path

from ragaudit.data.run import CaseRun, Run
from ragaudit.evaluation.compare import compare_reports, load_report
from ragaudit.report.markdown import render_markdown
from ragaudit.report.view import build_view
from test_gate_baseline_failures import CASES, FAILED, _case, _report


def test_a_failed_baseline_is_named_in_the_comparison(tmp_path: Path) -> None:
    cases = {
        f"q{i:02d}": CaseRun(error="timeout after 30s", latency_ms=1.0) if i < FAILED else _case(i, 1)
        for i in range(CASES)
    }
    base = load_report(_report(tmp_path, "baseline", Run(cases, name="baseline")))
    other = load_report(_report(tmp_path, "candidate", Run({f"q{i:02d}": _case(i, 1) for i in range(CASES)})))
    result = compare_reports([base, other], base, ["MRR"], n_resamples=500)
    note = "the run of baseline failed on 10 of 30 cases (errors or missing, each scored 0)"
    assert any(note in n for n in result["notes"])
    assert note in render_markdown(build_view(result))


def test_runs_without_failures_get_no_note(tmp_path: Path) -> None:
    base = load_report(_report(tmp_path, "baseline", Run({f"q{i:02d}": _case(i, 1) for i in range(CASES)})))
    other = load_report(_report(tmp_path, "candidate", Run({f"q{i:02d}": _case(i, 2) for i in range(CASES)})))
    result = compare_reports([base, other], base, ["MRR"], n_resamples=500)
    assert not any("failed on" in n for n in result["notes"])
