"""The command line: exit codes, tables, reports, and errors without tracebacks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import ragaudit
from conftest import write_lines
from ragaudit.cli.main import main

DEMO = Path(__file__).resolve().parents[1] / "src" / "ragaudit" / "demo_data"


def test_eval_prints_table_and_writes_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report.json"
    code = main(
        [
            "eval",
            "--dataset",
            str(DEMO / "lesson_golden.jsonl"),
            "--run",
            str(DEMO / "lesson_run.trec"),
            "--metrics",
            "nDCG@10,R@5,MRR",
            "--out",
            str(out),
        ]
    )
    text = capsys.readouterr().out
    assert code == 0
    assert "nDCG@10" in text and "answerable 3" in text and "unanswerable 1" in text
    report = json.loads(out.read_text())
    assert set(report["metrics"]) == {"nDCG@10", "R@5", "MRR"} and report["metrics"]["R@5"] == 1.0
    assert len(report["per_case"]) == 4


def test_eval_with_bad_metric_name_exits_2_with_suggestion(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "eval",
            "--dataset",
            str(DEMO / "lesson_golden.jsonl"),
            "--run",
            str(DEMO / "lesson_run.trec"),
            "--metrics",
            "nDGC@5",
        ]
    )
    assert code == 2 and "did you mean 'nDCG@5'" in capsys.readouterr().err


def test_eval_with_broken_run_names_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = write_lines(tmp_path / "run", ["pricing-001 Q0 a 1 1.0 s", "pricing-001 Q0 b 2"])
    code = main(["eval", "--dataset", str(DEMO / "lesson_golden.jsonl"), "--run", str(run)])
    err = capsys.readouterr().err
    assert code == 2 and f"{run}:2" in err and "6 columns" in err and "Traceback" not in err


def test_validate_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(DEMO / "lesson_golden.jsonl")]) == 0
    bad = write_lines(tmp_path / "bad.jsonl", ['{"id": "a", "query": "q", "relevance": {"x": -1}}', "{oops"])
    assert main(["validate", str(bad)]) == 1
    out = capsys.readouterr().out
    assert f"{bad}:1" in out and f"{bad}:2" in out and "2 error(s)" in out


def test_validate_checks_ids_against_a_corpus(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = write_lines(
        tmp_path / "corpus.jsonl", [json.dumps({"doc_id": "doc1", "tenant_id": "t", "text": "x"})]
    )
    golden = write_lines(
        tmp_path / "g.jsonl",
        [
            json.dumps({"id": "a", "query": "q", "relevant_chunk_ids": ["doc1", "doc1#3", "ghost"]}),
        ],
    )
    assert main(["validate", str(golden), "--corpus", str(corpus)]) == 1
    out = capsys.readouterr().out
    assert "'ghost'" in out and "doc1#3" not in out and f"{golden}:1" in out


def test_import_beir_then_eval(tmp_path: Path, beir_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import", "beir", str(beir_root / "business-reports"), "--out", str(tmp_path / "br")]) == 0
    assert "left out 39 queries without judgments" in capsys.readouterr().out
    assert (
        main(
            [
                "validate",
                str(tmp_path / "br" / "dataset.jsonl"),
                "--corpus",
                str(tmp_path / "br" / "corpus.jsonl"),
            ]
        )
        == 0
    )


def test_metrics_command_and_console_script(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["metrics", "ndcg@10", "recall@5"]) == 0
    assert capsys.readouterr().out.split() == ["nDCG@10", "R@5"]
    done = subprocess.run(
        [sys.executable, "-m", "ragaudit.cli.main", "--version"], capture_output=True, text=True, check=True
    )
    assert done.stdout.startswith("ragaudit ")


def _python_m(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ragaudit", *argv], capture_output=True, text=True, check=False, timeout=120
    )


def test_python_m_ragaudit_is_the_command_line(tmp_path: Path) -> None:
    """``python -m ragaudit`` runs the console script's entry point: same output, exit code passed through."""
    version = _python_m("--version")
    assert (version.returncode, version.stdout.strip()) == (0, f"ragaudit {ragaudit.__version__}")
    helped = _python_m("--help")
    assert helped.returncode == 0 and helped.stdout.startswith("usage: ragaudit ")
    assert "k-sweep" in helped.stdout and "eval-rewrite" in helped.stdout
    usage = _python_m("compare", "a.json", "b.json", "--alpha", "5")  # a usage error: 2
    assert usage.returncode == 2 and "argument --alpha: must be strictly between 0 and 1" in usage.stderr
    bad = write_lines(tmp_path / "bad.jsonl", ["{oops"])
    failed = _python_m("validate", str(bad))  # the check failed: 1
    assert failed.returncode == 1 and f"{bad}:1" in failed.stdout
    assert "Traceback" not in usage.stderr + failed.stderr


def test_import_is_fast_and_light() -> None:
    code = "import sys, ragaudit; print(any(m in sys.modules for m in ('numpy', 'torch', 'bm25s', 'httpx')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_unwritable_output_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code = main(
        [
            "eval",
            "--dataset",
            str(DEMO / "lesson_golden.jsonl"),
            "--run",
            str(DEMO / "lesson_run.trec"),
            "--out",
            str(blocker / "report.json"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert str(blocker) in err and "Traceback" not in err


def test_fast_path_gives_the_same_report_numbers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels = write_lines(tmp_path / "qrels", ["q1 0 a 2", "q1 0 b 1", "q2 0 c 1", "q3 0 d 0", "q4 0 e 1"])
    run = write_lines(
        tmp_path / "run",
        [
            "q1 Q0 b 1 2.0 s",
            "q1 Q0 a 2 2.0 s",
            "q1 Q0 b 3 1.0 s",
            "q2 Q0 x 1 1.0 s",
            "q3 Q0 d 1 1.0 s",
            "q9 Q0 a 1 1.0 s",
        ],
    )
    reports = {}
    for mode in ("on", "off"):
        out = tmp_path / f"{mode}.json"
        assert (
            main(
                [
                    "eval",
                    "--dataset",
                    str(qrels),
                    "--run",
                    str(run),
                    "--fast",
                    mode,
                    "--metrics",
                    "nDCG@10,R@1,MRR,MAP",
                    "--out",
                    str(out),
                    "--no-history",
                ]
            )
            == 1  # the run has no result for the answerable q4: both engines fail the run (exit rule)
        )
        reports[mode] = json.loads(out.read_text())  # and the report is written all the same
    assert "fast path" in capsys.readouterr().out
    assert reports["on"]["metrics"] == pytest.approx(reports["off"]["metrics"], abs=1e-12)
    assert reports["on"]["counts"] == reports["off"]["counts"]
    assert (
        main(["eval", "--dataset", str(DEMO / "lesson_golden.jsonl"), "--run", str(run), "--fast", "on"]) == 2
    )


def test_several_problems_are_all_listed_without_sending_a_pipeline_file_to_validate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: "2 problem(s); run 'ragaudit validate' for a full list" after a pipeline TOML's problems,
    though both were listed and validate reads a pipeline file as qrels (four errors of another kind)."""
    pipeline = tmp_path / "bad.toml"
    pipeline.write_text('[retriever]\ntype = "bm25x"\n[rerank]\ntop_n = 10\n', encoding="utf-8")
    golden = write_lines(
        tmp_path / "golden.jsonl", [json.dumps({"id": "q1", "query": "q", "relevant_chunk_ids": ["d"]})]
    )
    assert main(["eval", "--dataset", str(golden), "--pipeline", str(pipeline)]) == 2
    err = capsys.readouterr().err
    assert err.count(f"error: {pipeline}") == 2 and "2 problem(s), each listed above with its fix" in err
    assert "for a full list" not in err


def test_a_missing_golden_set_for_the_audit_names_no_other_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``audit-tenants --golden /missing.jsonl`` said "check the --dataset path", an option it has not."""
    from conftest import KB

    args = ["audit-tenants", "--corpus", str(KB / "corpus.jsonl"), "--pipeline", "bm25"]
    code = main([*args, "--golden", str(tmp_path / "missing.jsonl"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "missing.jsonl: dataset not found" in err and "--dataset" not in err
