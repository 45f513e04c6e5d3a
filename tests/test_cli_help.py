"""The command line explains itself: help on every option, examples on every command, shell completion
generated from the parser, ``--out -`` (JSON alone on stdout) and ``--quiet``."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ragaudit.cli.cmd_completion import SHELLS, commands
from ragaudit.cli.main import build_parser, command_names, main

DEMO = Path(__file__).resolve().parents[1] / "src" / "ragaudit" / "demo_data"
LESSON = ["--dataset", str(DEMO / "lesson_golden.jsonl"), "--run", str(DEMO / "lesson_run.trec")]


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    return commands(build_parser())


def test_every_command_is_in_the_parser() -> None:
    assert set(_subcommands()) == {n.replace("_", "-") for n in command_names()}


@pytest.mark.parametrize("name", sorted(_subcommands()))
def test_every_option_has_help_and_every_command_an_example(name: str) -> None:
    sub = _subcommands()[name]
    bare = [
        a.option_strings or [a.dest]
        for a in sub._actions
        if not a.help or a.help == argparse.SUPPRESS or not a.help.strip()
    ]
    assert bare == [], f"ragaudit {name}: options without help: {bare}"
    epilog = sub.epilog or ""
    assert epilog.startswith("examples:\n"), f"ragaudit {name} --help has no examples"
    examples = [line.strip() for line in epilog.split("\n\n")[0].splitlines()[1:]]
    commands_shown = [line for line in examples if line.startswith("ragaudit ")]
    assert commands_shown, f"ragaudit {name} --help has no example command"
    assert all(line.startswith(f"ragaudit {name} ") for line in commands_shown), commands_shown


def test_help_shows_examples_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "--help"]) == 0
    out = capsys.readouterr().out
    assert "examples:\n  ragaudit eval --dataset golden.jsonl" in out
    assert "exit codes" in out  # the exit-code text stays after the examples


def test_bash_completion_is_valid_and_completes_a_subcommand(tmp_path: Path) -> None:
    script = tmp_path / "ragaudit.bash"
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from ragaudit.cli.main import main; sys.exit(main())",
            "completion",
            "bash",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    script.write_text(proc.stdout)
    assert subprocess.run(["bash", "-n", str(script)], check=False).returncode == 0
    probe = (
        f"source {script}; "
        'COMP_WORDS=(ragaudit ev); COMP_CWORD=1; _ragaudit; echo "${COMPREPLY[*]}"; '
        "COMP_WORDS=(ragaudit eval --gain ''); COMP_CWORD=3; _ragaudit; echo \"${COMPREPLY[*]}\"; "
        'COMP_WORDS=(ragaudit bench --base); COMP_CWORD=2; _ragaudit; echo "${COMPREPLY[*]}"'
    )
    lines = subprocess.run(
        ["bash", "-c", probe], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert lines == ["eval eval-reranker eval-rewrite", "exponential linear", "--baseline"]


@pytest.mark.parametrize("shell", [s for s in SHELLS if s != "bash"])
def test_other_shells_scripts_parse(shell: str, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["completion", shell]) == 0
    text = capsys.readouterr().out
    assert "ragaudit" in text and "eval-reranker" in text
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed: its script is generated but not syntax-checked here")
    script = tmp_path / f"ragaudit.{shell}"
    script.write_text(text)
    assert subprocess.run([shell, "-n", str(script)], check=False).returncode == 0


def test_completion_of_an_unknown_shell_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["completion", "powershell"]) == 2
    assert "invalid choice" in capsys.readouterr().err


def test_out_dash_writes_json_and_nothing_else_to_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["eval", *LESSON, "--metrics", "nDCG@10", "--out", "-"]) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)  # the whole of stdout is one JSON document
    assert report["kind"] == "eval" and set(report["metrics"]) == {"nDCG@10"}
    assert "nDCG@10" in captured.err and "report written to standard output" in captured.err
    assert not (tmp_path / "-").exists()
    (tmp_path / "r.json").write_text(captured.out, encoding="utf-8")
    assert main(["report", str(tmp_path / "r.json"), "--format", "md", "--out", "-"]) == 0
    assert capsys.readouterr().out.startswith("#") and not (tmp_path / "-").exists()


def test_quiet_prints_nothing_on_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "r.json"
    assert main(["eval", *LESSON, "--quiet", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and out.is_file()
    assert main(["eval", *LESSON, "-q", "--out", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["kind"] == "eval"


def test_quiet_keeps_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "--dataset", "nope.jsonl", "--run", str(DEMO / "lesson_run.trec"), "-q"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "nope.jsonl" in captured.err
