"""Run history: where the file lives, what a run records, grouping by dataset hash, the terminal and
HTML views, and ``ragaudit history``. Reports are real evaluations of in-memory runs on the demo set."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import KB, write_lines
from ragaudit.artifacts.history import (
    HISTORY_ENV,
    default_history_path,
    open_history,
    query_runs,
    record,
    record_run,
    series,
)
from ragaudit.cli.main import main
from ragaudit.data.loading import load_dataset
from ragaudit.errors import InputError
from ragaudit.evaluation.evaluate import evaluate
from ragaudit.metrics.policy import Policy
from ragaudit.report.history_view import render_html, render_terminal, sparkline

METRICS = "nDCG@10,R@5,MRR@10"


def _report(
    depth: int,
    *,
    created_at: str,
    name: str = "bm25",
    policy: Policy | None = None,
    golden: Path | None = None,
) -> dict[str, Any]:
    """An eval report of a run that finds each case's relevant items after ``depth`` distractors."""
    dataset = load_dataset(golden or KB / "golden.jsonl")
    run = {
        case.id: [f"noise-{i}" for i in range(depth)] + sorted(case.relevant_set(1)) for case in dataset.cases
    }
    result = evaluate(
        dataset, run, METRICS, policy, {"pipeline": {"name": name, "config_sha256": f"cfg-{depth}"}}
    )
    data = result.to_dict()
    data["created_at"] = created_at
    data["run"]["name"] = name
    return data


@pytest.fixture
def history_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "history.sqlite"
    monkeypatch.setenv(HISTORY_ENV, str(path))
    return path


def test_history_lives_at_the_git_top_level_or_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(HISTORY_ENV, raising=False)
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src" / "deep").mkdir(parents=True)
    assert default_history_path(repo / "src" / "deep") == repo / ".ragaudit" / "history.sqlite"
    outside = tmp_path / "plain"
    outside.mkdir()
    assert default_history_path(outside) == outside / ".ragaudit" / "history.sqlite"
    monkeypatch.setenv(HISTORY_ENV, str(tmp_path / "elsewhere.sqlite"))
    assert default_history_path(repo) == tmp_path / "elsewhere.sqlite"


def test_a_run_records_everything_the_trend_needs(history_file: Path) -> None:
    report = _report(1, created_at="2026-01-02T10:00:00+00:00")
    report["provenance"] = {"git": {"commit": "abc123", "dirty": False}}
    report["security"]["leaks"] = 2
    report["latency_ms"] = {"p50": 5.0, "p95": 42.5, "p99": 50.0, "mean": 7.0}
    run_id = record(report)
    assert record(report) == run_id  # recording the same report twice is a no-op
    (run,) = query_runs()
    assert run.id == run_id and run.created_at == "2026-01-02T10:00:00+00:00"
    assert run.dataset_sha256 == report["dataset"]["sha256"] and run.dataset_path == str(KB / "golden.jsonl")
    assert (run.pipeline, run.config_sha256, run.git_commit, run.git_dirty) == (
        "bm25",
        "cfg-1",
        "abc123",
        False,
    )
    assert run.policy == report["policy"] and run.counts == report["counts"]
    assert run.metrics == pytest.approx(report["metrics"])
    assert (run.leaks, run.latency_p95_ms) == (2, 42.5)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_the_git_commit_of_the_repository_is_recorded(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    env = ["-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", *env, "-C", str(repo), "commit", "-q", "--allow-empty", "-m", "x"], check=True)
    head = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    )
    inside, outside = (_report(d, created_at=f"2026-01-0{d + 1}T00:00:00+00:00") for d in (0, 1))
    for report in (inside, outside):
        report.pop("provenance", None)  # a report without provenance: the history asks git itself
    with open_history(tmp_path / "h.sqlite") as history:
        history.record(inside, cwd=repo)
        history.record(outside, cwd=tmp_path)
        first, second = history.runs()
    assert (first.git_commit, first.git_dirty) == (head.stdout.strip(), False)
    assert (second.git_commit, second.git_dirty) == (None, None)


def test_runs_on_different_dataset_hashes_or_policies_are_never_one_series(
    tmp_path: Path, history_file: Path
) -> None:
    golden = tmp_path / "golden.jsonl"
    shutil.copy(KB / "golden.jsonl", golden)
    record(_report(0, created_at="2026-01-01T00:00:00+00:00", golden=golden))
    record(_report(1, created_at="2026-01-02T00:00:00+00:00", golden=golden))
    record(_report(0, created_at="2026-01-03T00:00:00+00:00", golden=golden, policy=Policy(gain="linear")))
    lines = golden.read_text(encoding="utf-8").splitlines()
    write_lines(golden, lines[:-1])  # same path, edited file: a new dataset
    record(_report(2, created_at="2026-01-04T00:00:00+00:00", golden=golden))
    groups = series(query_runs())
    assert [len(g.runs) for g in groups if g.policy["gain"] == "exponential"] in ([2, 1], [1, 2])
    assert len(groups) == 3 and len({g.dataset_sha256 for g in groups}) == 2
    assert all(g.dataset_path == str(golden) for g in groups)
    text = render_terminal(groups, ["nDCG@10"])
    assert sum(line.startswith("dataset ") for line in text.splitlines()) == 3 and "never compared" in text


def test_filters_by_dataset_file_sha_prefix_and_pipeline(history_file: Path) -> None:
    record(_report(0, created_at="2026-01-01T00:00:00+00:00", name="bm25"))
    record(_report(2, created_at="2026-01-02T00:00:00+00:00", name="hybrid"))
    sha = query_runs()[0].dataset_sha256
    assert len(query_runs(dataset=str(KB / "golden.jsonl"))) == 2
    assert len(query_runs(dataset=sha[:8])) == 2 and query_runs(dataset="0" * 8) == []
    assert [r.pipeline for r in query_runs(pipeline="hybrid")] == ["hybrid"]
    assert set(query_runs(metrics=["R@5"])[0].metrics) == {"R@5"}


def test_sparklines_scale_between_min_and_max() -> None:
    assert sparkline([0.0, 0.5, 1.0]) == "▁▅█"
    assert sparkline([0.7, 0.7]) == "▅▅"
    assert sparkline([0.2, None, 0.4]) == "▁ █"
    assert sparkline([None]) == " "


def test_terminal_trend_shows_sparkline_first_last_and_config_changes(history_file: Path) -> None:
    for day, depth in enumerate([3, 2, 0], start=1):
        record(_report(depth, created_at=f"2026-01-0{day}T00:00:00+00:00"))
    text = render_terminal(series(query_runs()), ["MRR@10"])
    first, last = 1 / 4, 1.0
    assert f"MRR@10  ▁▂█  {first:.4f} -> {last:.4f} (+{last - first:.4f})" in text
    assert "bm25  (3 runs, 2026-01-01 .. 2026-01-03; config changed at run 2, 3)" in text
    text = render_terminal(series(query_runs()), ["MRR@10"], last=2)
    assert "last 2 runs of 3" in text and "▁█" in text


def test_html_plot_is_self_contained(history_file: Path) -> None:
    record(_report(1, created_at="2026-01-01T00:00:00+00:00", name="bm25"))
    record(_report(0, created_at="2026-01-02T00:00:00+00:00", name="bm25"))
    record(_report(2, created_at="2026-01-03T00:00:00+00:00", name="<hybrid>"))
    page = render_html(series(query_runs()), ["nDCG@10", "R@5"], str(history_file))
    assert page.count("<svg") == 2 and page.count("<polyline") == 4  # a line per pipeline and metric
    assert "&lt;hybrid&gt;" in page and "<hybrid>" not in page
    assert "<script" not in page and "src=" not in page and "href=" not in page and "@import" not in page
    assert ">#3<" in page and "cfg-2" in page


def test_history_command_records_filters_and_plots(
    tmp_path: Path, history_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = []
    for day, depth in enumerate([2, 1, 0], start=1):
        path = tmp_path / f"r{day}.json"
        path.write_text(json.dumps(_report(depth, created_at=f"2026-01-0{day}T00:00:00+00:00")))
        paths.append(str(path))
    html = tmp_path / "out" / "history.html"
    code = main(["history", "--record", *paths, "--metric", "nDCG@10,MRR@10", "--html", str(html)])
    out = capsys.readouterr().out
    assert code == 0 and out.count("recorded ") == 3
    assert f"history: {history_file} (3 matching runs)" in out
    assert "MRR@10   ▁▃█" in out and "R@5" not in out.split("matching runs)")[1]
    assert html.is_file() and "<svg" in html.read_text()
    assert (
        main(["history", "--pipeline", "nothing"]) == 0
        and "no recorded runs match" in capsys.readouterr().out
    )


def test_history_command_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["history", "--history", str(tmp_path / "none.sqlite")]) == 2
    assert "no history recorded here yet" in capsys.readouterr().err
    compare = tmp_path / "compare.json"
    compare.write_text(json.dumps({"schema_version": 1, "kind": "compare", "comparisons": []}))
    assert main(["history", "--history", str(tmp_path / "h.sqlite"), "--record", str(compare)]) == 2
    assert "not a ragaudit eval report" in capsys.readouterr().err
    not_sqlite = tmp_path / "bad.sqlite"
    not_sqlite.write_text("this is not a database " * 100)
    with pytest.raises(InputError, match="not a ragaudit history file"):
        open_history(not_sqlite)
    assert main(["history", "--history", str(tmp_path / "h.sqlite"), "--metric", "nDGC@10"]) == 2


def test_record_run_reports_where_it_went_and_never_raises(tmp_path: Path) -> None:
    report = _report(0, created_at="2026-01-01T00:00:00+00:00")
    target = tmp_path / "h.sqlite"
    assert (
        record_run(report, target) == f"run recorded in the history {target} (run 1; see 'ragaudit history')"
    )
    blocker = tmp_path / "file"
    blocker.write_text("x")
    message = record_run(report, blocker / "h.sqlite")
    assert message.startswith(f"warning: run not recorded in the history {blocker / 'h.sqlite'}: ")


def test_html_keeps_the_newest_runs_of_each_pipeline(history_file: Path) -> None:
    for day, depth in enumerate([3, 2, 1, 0], start=1):
        record(_report(depth, created_at=f"2026-01-0{day}T00:00:00+00:00"))
    page = render_html(series(query_runs()), ["MRR@10"], "h", last=2)
    assert (
        "cfg-1" in page and "cfg-0" in page and "cfg-3" not in page and ">#3<" not in page and ">#2<" in page
    )


def test_a_run_cut_by_its_top_k_starts_a_series_of_its_own(history_file: Path) -> None:
    """``--top-k 5`` with nDCG@10 scores a 5-deep list: not a dip in the full-depth trend."""
    full, again, shallow = (_report(0, created_at=f"2026-01-0{day}T00:00:00+00:00") for day in (1, 3, 2))
    for data, top_k in ((full, 10), (again, 100), (shallow, 5)):
        data["retrieval"] = {"top_k": top_k}
    for data in (full, shallow, again):
        record(data)
    groups = series(query_runs())
    assert sorted(len(g.runs) for g in groups) == [1, 2]
    cut = next(g for g in groups if len(g.runs) == 1)
    assert cut.policy["scored_depth"] == 5 and cut.runs[0].created_at.startswith("2026-01-02")
    assert "scored on the top 5 only" in render_terminal(groups, ["nDCG@10"])
