"""docs/reports.md's first commands run as written, in order, on the demo KB (named `golden.jsonl` and
`corpus.jsonl` as the page names them): the two evals, the Markdown comment against the baseline and
the HTML page. The page once compared with `reports/bm25.json` without making it (exit 2)."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest

from conftest import KB
from ragaudit.cli.main import main
from test_readme import readme_commands

pytestmark = pytest.mark.slow
PAGE = Path(__file__).resolve().parents[1] / "docs" / "reports.md"


def test_the_pages_first_commands_run_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    first_block = re.findall(r"```bash\n.*?```", PAGE.read_text(encoding="utf-8"), flags=re.DOTALL)[0]
    commands = readme_commands(first_block)
    assert [c.split()[:2] for c in commands] == [["ragaudit", "eval"]] * 2 + [["ragaudit", "report"]] * 2
    for name in ("golden.jsonl", "corpus.jsonl"):
        shutil.copy(KB / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    for command in commands:
        argv = shlex.split(command, comments=True)[1:]
        assert main([*argv, "--no-history"] if argv[0] == "eval" else argv) == 0, command
    comment = capsys.readouterr().out
    assert "### ragaudit eval: hybrid on golden.jsonl" in comment and "baseline (bm25)" in comment
    page = (tmp_path / "reports" / "hybrid.html").read_text(encoding="utf-8")
    assert page.lower().startswith("<!doctype html>") and "bm25" in page
