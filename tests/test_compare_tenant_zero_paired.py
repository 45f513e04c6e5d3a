"""A per-tenant row of ``compare`` over 0 paired cases (every case of the tenant failed in one report)
shows a missing value (–) in the terminal, Markdown and HTML, never "nan". Before: the written report
(NaN written as null) could not be read back: ``ragaudit report cmp.json`` crashed on ``float(None)``
in the row's CI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import ragaudit
from ragaudit.cli.main import main
from ragaudit.report.terminal import render_terminal
from test_tenant_slices import KB, METRICS, _ranking

NAN = re.compile(r"\bnan\b", re.IGNORECASE)


def _initech_rows(text: str) -> list[str]:
    return [line for line in re.split(r"\n|</tr>", text) if "initech" in line and "nDCG@10" in line]


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("zero")
    cases = [json.loads(line) for line in KB.read_text(encoding="utf-8").splitlines() if line.strip()]
    base, system = folder / "base.json", folder / "system.json"
    ragaudit.evaluate(KB, {c["id"]: _ranking(c, "base") for c in cases}, metrics=METRICS).write_json(base)
    ragaudit.evaluate(KB, {c["id"]: _ranking(c, "ideal") for c in cases}, metrics=METRICS).write_json(system)
    report = json.loads(system.read_text(encoding="utf-8"))
    for case in report["per_case"]:  # every initech case failed in the system: 0 paired cases there
        if case.get("tenant_id") == "initech":
            case.update(status="error", metrics={})
    system.write_text(json.dumps(report), encoding="utf-8")
    return base, system


def test_the_zero_paired_row_is_missing_values_in_every_view(
    reports: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    compared = tmp_path / "cmp.json"
    main(["compare", *map(str, reports), "--resamples", "200", "--out", str(compared)])
    shown = capsys.readouterr().out
    data = json.loads(compared.read_text(encoding="utf-8"))
    (row,) = [
        r for r in data["tenant_comparisons"]["rows"] if r["tenant"] == "initech" and r["metric"] == "nDCG@10"
    ]
    assert row["n"] == 0 and row["delta"] is None and row["ci"] == [None, None]
    html = tmp_path / "r.html"
    assert main(["report", str(compared), "--format", "html", "--out", str(html)]) == 0
    assert main(["report", str(compared), "--format", "md"]) == 0
    markdown = capsys.readouterr().out
    views = {
        "compare": shown,
        "terminal": render_terminal(data),
        "md": markdown,
        "html": html.read_text("utf-8"),
    }
    for name, text in views.items():
        rows = _initech_rows(text)
        assert rows, name
        for line in rows:
            assert not NAN.search(line), (name, line)
            assert "–" in line, (name, line)
