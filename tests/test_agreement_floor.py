"""``agreement --min-alpha`` passes only on enough shared judgments (before: two annotators agreeing on
2 items had alpha 1.000 and "passed", exit 0). The honest twin: the same agreement over 20 shared items
passes; a lowered ``--min-pairable`` is the user's explicit choice."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragaudit.cli.main import main
from ragaudit.labeling.judgments import JudgmentLog


def _annotators(tmp_path: Path, items: int) -> list[str]:
    """Two annotators who give the same grades (0, 1, 2, 3 in turn) to ``items`` candidates."""
    paths = []
    for name in ("ana", "bob"):
        log = JudgmentLog(tmp_path / f"{name}.jsonl", name, {})
        for u in range(items):
            log.append(
                {"kind": "grade", "case_id": f"acme-q{u}", "chunk_id": f"d{u}", "tenant_id": "acme",
                 "grade": u % 4, "superseded": False}
            )  # fmt: skip
        log.close()
        paths.append(str(tmp_path / f"{name}.jsonl"))
    return paths


def test_alpha_on_a_handful_of_items_is_not_a_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    few = _annotators(tmp_path, 2)
    assert main(["agreement", *few, "--min-alpha", "0.667"]) == 1
    out = capsys.readouterr().out
    assert "alpha 1.000 on 2 unit(s) judged by two or more annotators, fewer than --min-pairable 20" in out
    assert "not verified" in out and "passed" not in out
    assert main(["agreement", *few, "--min-alpha", "0.667", "--min-pairable", "2"]) == 0
    assert main(["agreement", *few]) == 0  # no gate asked: the figures are printed, nothing is claimed


def test_enough_shared_items_pass(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["agreement", *_annotators(tmp_path, 20), "--min-alpha", "0.667"]) == 0
    assert "gate: alpha 1.000 >= 0.667: passed" in capsys.readouterr().out
