"""``ragaudit ... | head``: a reader that closes standard output early does not end the command. The
report and the history are written, the exit code is the command's own, and no error blames a path
(before: "error: Broken pipe (check the path and its permissions)", exit 2, no report)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

from ragaudit.cli.pipe_safe import PipeSafeStdout

ROOT = Path(__file__).resolve().parents[1]
LESSON = ROOT / "examples" / "data"


class ClosedPipe(io.StringIO):
    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")


def test_writes_after_the_reader_left_are_dropped_not_raised() -> None:
    out = PipeSafeStdout(ClosedPipe())
    assert out.write("metric  mean\n") == len("metric  mean\n")
    out.flush()
    assert out.broken and out.write("more\n") == 5


def _closed_stdout_run(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the CLI with a standard output whose reader has already gone away."""
    read, write = os.pipe()
    os.close(read)
    try:
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        return subprocess.run(
            [sys.executable, "-m", "ragaudit", *args],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=ROOT,
            timeout=120,
            check=False,
        )
    finally:
        os.close(write)


def test_eval_piped_into_a_closed_reader_still_writes_its_report(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    done = _closed_stdout_run(
        "eval",
        "--dataset",
        str(LESSON / "lesson_golden.jsonl"),
        "--run",
        str(LESSON / "lesson_run.trec"),
        "--metrics",
        "nDCG@10",
        "--out",
        str(report),
        "--no-history",
    )
    assert done.returncode == 0, done.stderr
    assert report.is_file() and "error" not in done.stderr and "Broken pipe" not in done.stderr


def test_completion_into_a_closed_reader_exits_0() -> None:
    done = _closed_stdout_run("completion", "bash")
    assert done.returncode == 0 and done.stderr == ""
