"""A failed eval run says so on every page and lists every failed case: a plugin retriever that raises on
every 7th call fails 12 of the demo set's 84 cases, 3 of them unanswerable. The report's ``errors``,
its counts, the terminal summary, the Markdown and the HTML page all count 12, and every page opens with
the exit rule's verdict (the same words as the command's ``FAILED`` line)."""

from __future__ import annotations

import contextlib
import io
import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import KB
from ragaudit.cli.main import main
from ragaudit.report.terminal import render_terminal

FLAKY = """\
class Flaky:
    def __init__(self, every):
        self.n = 0
        self.every = every

    async def search(self, *, tenant_id, query, top_k):
        self.n += 1
        if self.every and self.n % self.every == 0:
            raise RuntimeError("backend timeout")
        return []


def make():
    return Flaky(7)


def steady():
    return Flaky(0)
"""
MODULE = "eval_failed_cases_flaky"
PROBLEM = "12 of 84 cases failed (14.3%; --max-error-rate allows 0.0%)"


@dataclass(frozen=True)
class Ran:
    code: int
    out: str
    err: str
    report: dict[str, Any]
    path: Path


@pytest.fixture(scope="module")
def plugin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("flaky")
    (folder / f"{MODULE}.py").write_text(FLAKY)
    sys.path.insert(0, str(folder))
    try:
        yield folder
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop(MODULE, None)


def run_eval(folder: Path, factory: str, name: str, *more: str) -> Ran:
    out_path = folder / f"{name}.json"
    argv = ["eval", "--dataset", str(KB / "golden.jsonl"), "--retriever", f"{MODULE}:{factory}"]
    argv += ["--out", str(out_path), "--no-history", "--no-progress", "--concurrency", "1", *more]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return Ran(code, out.getvalue(), err.getvalue(), json.loads(out_path.read_text()), out_path)


@pytest.fixture(scope="module")
def flaky(plugin: Path) -> Ran:
    return run_eval(plugin, "make", "flaky")


def failed_ids(report: dict[str, Any]) -> list[str]:
    return [c["id"] for c in report["per_case"] if "error" in c]


def page(path: Path, fmt: str) -> str:
    target = path.with_suffix(f".{fmt}")
    with contextlib.redirect_stderr(io.StringIO()):
        assert main(["report", str(path), "--format", fmt, "--out", str(target)]) == 0
    return target.read_text(encoding="utf-8")


def test_the_json_lists_every_failed_case_with_counts_that_agree(flaky: Ran) -> None:
    assert flaky.code == 1 and f"FAILED --retriever {MODULE}:make: {PROBLEM}" in flaky.err
    report = flaky.report
    ids = failed_ids(report)
    assert len(ids) == 12
    assert [e["id"] for e in report["errors"]] == ids  # every one, in dataset order
    unanswerable = [e["id"] for e in report["errors"] if e["answerable"] is False]
    assert len(unanswerable) == 3 and all("unanswerable" in cid for cid in unanswerable)
    counts = report["counts"]
    assert (counts["errors"], counts["unanswerable_errors"], counts["missing"]) == (9, 3, 0)
    outcome = report["outcome"]
    assert outcome["run_failed"] is True and outcome["problems"] == [PROBLEM]
    assert (outcome["max_error_rate"], outcome["failed"], outcome["cases"], outcome["scored"]) == (
        0.0,
        12,
        84,
        66,
    )


def test_the_terminal_says_the_run_failed_first_and_counts_every_failed_case(flaky: Ran) -> None:
    first = flaky.out.splitlines()[flaky.out.splitlines().index("metric     mean") - 1]
    assert first == f"run: FAIL - {PROBLEM}; the metrics below score the 9 failed answerable case(s) 0"
    counted = "errors 12 (9 answerable, scored 0; 3 unanswerable, not scored)"
    assert (
        counted in flaky.out
        and "errors (12: 9 answerable, scored 0; 3 unanswerable, not scored):" in flaky.out
    )
    whole = render_terminal(flaky.report, limit=100)  # the terminal from the report file
    assert whole.splitlines()[0].startswith(f"run: FAIL - {PROBLEM}")
    for cid in failed_ids(flaky.report):
        assert re.search(rf"^  {re.escape(cid)}: ", whole, re.M), cid
    assert "acme-unanswerable-003: (unanswerable, not scored) RuntimeError: backend timeout" in whole


def test_the_markdown_page_opens_with_the_failure_and_counts_every_failed_case(flaky: Ran) -> None:
    text = page(flaky.path, "md")
    verdict = f"**❌ run: FAIL**: {PROBLEM}; the metrics below score the 9 failed answerable case(s) 0"
    assert verdict in text and text.index(verdict) < text.index("#### Metrics")
    assert "errors 12 (9 answerable, scored 0; 3 unanswerable, not scored)" in text
    assert "errors (12: 9 answerable, scored 0; 3 unanswerable, not scored):" in text
    assert "first 10 of 12 shown; all 12 are in the JSON report" in text  # a PR comment's list is cut, said
    assert "✅" not in text and "passed" not in text


def test_the_html_page_opens_with_the_failure_and_lists_every_failed_case(flaky: Ran) -> None:
    html = page(flaky.path, "html")
    main_part = html[html.index("<main>") : html.index("</main>")]
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", main_part))
    verdict = f"run: FAIL: {PROBLEM}; the metrics below score the 9 failed answerable case(s) 0"
    assert verdict in text and text.index(verdict) < text.index("Summary") < text.index("Metrics")
    assert "errors (9 answerable scored 0) 12" in text  # the summary card counts all 12
    assert "errors (12: 9 answerable, scored 0; 3 unanswerable, not scored):" in text
    for cid in failed_ids(flaky.report):
        assert cid in text
    assert "✓ run" not in text


def test_a_clean_run_says_it_completed_and_nothing_alarming(plugin: Path) -> None:
    clean = run_eval(plugin, "steady", "steady")
    assert clean.code == 0 and clean.report["errors"] == [] and clean.report["outcome"]["run_failed"] is False
    line = "run complete: 84 cases, 0 failed, 75 of 75 answerable scored"
    lines = clean.out.splitlines()
    assert lines[lines.index("metric     mean") - 1] == line  # said first, above the metrics
    md = page(clean.path, "md")
    assert line in md and "FAIL" not in md and "✅" not in md


def test_failures_within_the_tolerance_are_said_without_a_fail(plugin: Path) -> None:
    tolerated = run_eval(plugin, "make", "tolerated", "--max-error-rate", "0.2")
    assert tolerated.code == 0
    line = (
        "run complete: 12 of 84 cases failed (14.3%), within --max-error-rate 20.0%; the metrics below "
        "score the 9 failed answerable case(s) 0"
    )
    assert line in tolerated.out and line in page(tolerated.path, "md")
    assert (
        f"note: --retriever {MODULE}:make: 12 of 84 cases failed (14.3%), within --max-error-rate 20.0%"
        in tolerated.err
    )


def test_a_report_that_records_no_tolerance_is_judged_at_the_default_and_says_so(flaky: Ran) -> None:
    bare = {k: v for k, v in flaky.report.items() if k != "outcome"}  # as the Python API writes it
    path = flaky.path.with_name("bare.json")
    path.write_text(json.dumps(bare))
    text = page(path, "md")
    assert f"**❌ run: FAIL**: {PROBLEM}" in text
    assert "(the report records no --max-error-rate: judged at the default 0)" in text


def test_the_pytest_helper_counts_the_failed_unanswerable_cases(plugin: Path) -> None:
    import asyncio

    import ragaudit
    from ragaudit.pytest_plugin import assert_no_errors

    flaky = __import__(MODULE).make()
    result = asyncio.run(
        ragaudit.evaluate_retriever(flaky, KB / "golden.jsonl", max_error_rate=None, concurrency=1)
    )
    assert len(result.errors) == 12 and sum(c.status == "unanswerable" for c in result.errors) == 3
    with pytest.raises(AssertionError, match="12 of 84 case"):
        assert_no_errors(result)


def test_a_benchmark_page_says_which_pipeline_failed_cases() -> None:
    from ragaudit.report.markdown import render_markdown
    from ragaudit.report.view import build_view

    gold = Path(__file__).parent / "gold" / "inputs" / "benchmark.json"
    report = json.loads(gold.read_text(encoding="utf-8"))
    clean = render_markdown(build_view(report, resamples=200))
    assert "run: FAIL" not in clean and "FAIL**" not in clean
    hybrid = next(p for p in report["pipelines"] if p["name"] == "hybrid")
    hybrid["counts"].update(errors=9, unanswerable_errors=3)
    text = render_markdown(build_view(report, resamples=200))
    verdict = (
        "**❌ pipeline hybrid: FAIL**: 12 of 84 cases failed (14.3%; --max-error-rate allows 0.0%); its "
        "metrics score the 9 failed answerable case(s) 0 (the report records no --max-error-rate: judged at "
        "the default 0)"
    )
    assert verdict in text and text.index(verdict) < text.index("#### Pipelines ranked")
    assert "pipeline bm25: FAIL" not in text


def test_a_compare_page_says_which_compared_run_failed(plugin: Path, flaky: Ran) -> None:
    steady = run_eval(plugin, "steady", "steady-base")
    out = plugin / "compare.json"
    argv = ["compare", str(steady.path), str(flaky.path), "--resamples", "200", "--out", str(out)]
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(io.StringIO()):
        assert main(argv) == 1  # the rule of 'ragaudit eval' over each report
    report = json.loads(out.read_text())
    system = report["systems"][0]
    assert report["failed_runs"] == [{"system": system, "max_error_rate": 0.0, "problems": [PROBLEM]}]
    verdict = f"run {system}: FAIL - {PROBLEM}; its metrics score its failed answerable cases 0"
    assert buffer.getvalue().splitlines()[0] == verdict  # the terminal says it first
    text = page(out, "md")
    assert f"**❌ run {system.replace('_', chr(92) + '_')}: FAIL**: {PROBLEM}" in text  # Markdown-escaped
    assert text.index(PROBLEM) < text.index("#### Comparison")
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main([*argv, "--max-error-rate", "0.2"]) == 0  # tolerated by the compare's own tolerance
    assert json.loads(out.read_text())["failed_runs"] == [] and "FAIL" not in page(out, "md")
