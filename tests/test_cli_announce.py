"""Commands say what they run before they start and how it went after; ``--resume`` says how many
cases it reused and stays one history entry; endpoints are named by host and path in the history."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import KB
from ragaudit.artifacts.history import query_runs
from ragaudit.cli.main import main
from servers import LocalServer, echo_handler

DEMO = KB.parent
BM25 = [
    "eval",
    "--dataset",
    str(KB / "golden.jsonl"),
    "--corpus",
    str(KB / "corpus.jsonl"),
    "--pipeline",
    "bm25",
]


def test_eval_names_pipeline_chunking_models_cases_and_k_then_how_it_went(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    history = tmp_path / "h.sqlite"
    assert main([*BM25, "--top-k", "10", "--no-history"]) == 0
    err = capsys.readouterr().err
    assert "eval: pipeline bm25 = bm25, chunking whole documents, no model" in err
    assert "eval: on 84 cases (75 answerable, 9 unanswerable) of " in err and "top_k 10" in err
    assert "done --pipeline bm25: 84 cases, 0 failed, 75 of 75 answerable scored" in err
    assert not history.exists()


def test_bench_names_every_pipeline_with_its_models(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "bench",
            "--dataset",
            str(KB / "golden.jsonl"),
            "--corpus",
            str(KB / "corpus.jsonl"),
            "--pipelines",
            "bm25",
            "--metrics",
            "nDCG@10",
            "--resamples",
            "200",
            "--out-dir",
            str(tmp_path / "b"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 0
    assert "bench: pipeline bm25 = bm25, chunking whole documents" in err
    assert "bench: on 84 cases" in err and "baseline bm25" in err and "metrics nDCG@10" in err
    assert "done pipeline bm25: 84 cases, 0 failed" in err


def test_quiet_silences_the_plan_and_the_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*BM25, "--no-history", "--quiet"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""


def test_resume_says_how_many_cases_were_reused_and_is_one_history_entry(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    history = tmp_path / "history.sqlite"
    monkeypatch.setenv("RAGAUDIT_HISTORY", str(history))
    results = tmp_path / "results.jsonl"
    assert main([*BM25, "--results", str(results)]) == 0
    assert len(query_runs(history)) == 1
    capsys.readouterr()
    lines = results.read_text(encoding="utf-8").splitlines(keepends=True)
    results.write_text("".join(lines[:40]), encoding="utf-8")  # as if interrupted after 40 cases
    assert main([*BM25, "--results", str(results), "--resume"]) == 0
    captured = capsys.readouterr()
    assert "eval: --resume: 40 of 84 cases reused from" in captured.err and "44 to run" in captured.err
    assert "replacing run 1 it resumed" in captured.out
    runs = query_runs(history)
    assert len(runs) == 1 and runs[0].counts["cases"] == 84
    # a new run into a new results file is a new entry; resuming it replaces only its own
    other = tmp_path / "other.jsonl"
    assert main([*BM25, "--results", str(other)]) == 0
    assert main([*BM25, "--results", str(other), "--resume"]) == 0
    assert "84 of 84 cases reused" in capsys.readouterr().err
    assert len(query_runs(history)) == 2


def test_endpoints_are_named_by_host_and_path_unless_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    history = tmp_path / "history.sqlite"
    monkeypatch.setenv("RAGAUDIT_HISTORY", str(history))
    lesson = ["eval", "--dataset", str(DEMO / "lesson_golden.jsonl"), "--tenant", "acme"]
    with (
        LocalServer(echo_handler(), path="/search") as one,
        LocalServer(echo_handler(), path="/v2/search") as two,
    ):
        assert main([*lesson, "--endpoint", one.url]) == 0
        err = capsys.readouterr().err
        assert f"named '127.0.0.1:{one.port}/search' in reports and the history" in err
        assert main([*lesson, "--endpoint", two.url]) == 0
        assert main([*lesson, "--endpoint", two.url, "--name", "search-v2"]) == 0
    names = sorted({run.pipeline for run in query_runs(history)})
    assert names == sorted([f"127.0.0.1:{one.port}/search", f"127.0.0.1:{two.port}/v2/search", "search-v2"])


def _figures(text: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for line in text.splitlines():
        parts = line.rsplit(None, 1)
        if len(parts) == 2 and parts[0].startswith(("answers ", "attribution ")):
            out[parts[0].strip()] = float(parts[1])
    return out


def test_check_answers_counts_add_up_and_it_shows_the_worst_cases_and_a_guide(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(
        [
            "check-answers",
            "--dataset",
            str(KB / "golden.jsonl"),
            "--corpus",
            str(KB / "corpus.jsonl"),
            "--pipeline",
            "bm25",
            "--answers",
            str(KB / "answers_demo.jsonl"),
            "--no-embeddings",
        ]
    )
    captured = capsys.readouterr()
    assert code == 0
    f = _figures(captured.out)
    checked = f["answers checked"]
    assert checked == 84
    assert (
        f["answers grounded"] + f["answers ungrounded"] + f["answers declined"] + f["answers no_answer"]
        == checked
    )
    assert f["answers correct"] + f["answers incorrect"] + f["answers not_verifiable"] == checked
    attributed = sum(v for k, v in f.items() if k.startswith("attribution "))
    assert attributed == checked
    wrong = checked - f["attribution success"]
    assert f"worst cases (5 of {wrong:.0f} answers that went wrong" in captured.out
    worst = captured.out.split("worst cases", 1)[1].splitlines()[1:6]
    verdicts = [line.split()[1].rstrip(":") for line in worst]
    order = ["retrieval_failure", "generation_failure", "faithful_to_bad_context"]
    assert verdicts == sorted(verdicts, key=order.index)  # worst kind first
    assert "how to read this:" in captured.out and "generation_failure = it did" in captured.out
    # every step is announced, so the command is never silent for long
    for step in ("building bm25", "assembling and scoring 84 contexts", "checking 84 answers"):
        assert step in captured.err


def test_context_shows_the_cases_missing_evidence_first(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["context", "--dataset", str(KB / "golden.jsonl"), "--corpus", str(KB / "corpus.jsonl")]
    assert main([*args, "--pipeline", "bm25"]) == 0
    out = capsys.readouterr().out
    lines = out.split("worst cases", 1)[1].splitlines()
    shown = [line for line in lines[1:] if "missing evidence:" in line]
    coverages = [float(line.split("evidence coverage ")[1].split(",")[0]) for line in shown]
    assert shown and coverages == sorted(coverages) and all(c < 1.0 for c in coverages)
    assert "how to read this:" in out and "attribution:" not in out  # no answers, no answer guide
