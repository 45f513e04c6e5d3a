"""Per-tenant slices (issue 26.4): a regression confined to one tenant, hidden by the overall mean, is
reported per tenant by eval and compare, and the tenants gate catches it, naming the tenant."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import ragaudit
from ragaudit.artifacts.envelope import read_report, schema_errors
from ragaudit.evaluation.compare import compare_reports, load_report
from ragaudit.evaluation.slices import tenant_slices, with_tenant_comparisons
from ragaudit.gates.policy import load_policy
from ragaudit.gates.verdict import run_gates
from ragaudit.report.terminal import render_terminal

KB = Path(ragaudit.__file__).parent / "demo_data" / "kb" / "golden.jsonl"
METRICS = "nDCG@10,R@5"


def _ranking(case: dict[str, Any], how: str) -> list[str]:
    """Rankings built from the judgments: ``ideal`` (relevant by grade), ``base`` (one judged-irrelevant
    chunk on top), ``worse`` (three judged-irrelevant chunks on top)."""
    grades = case.get("relevance", {})
    good = sorted((d for d, g in grades.items() if g > 0), key=lambda d: (-grades[d], d))
    bad = sorted(d for d, g in grades.items() if g <= 0)
    return {"ideal": good + bad, "base": bad[:1] + good, "worse": bad[:3] + good}[how]


def write_runs(folder: Path) -> tuple[Path, Path]:
    """The baseline and a candidate where acme got worse on every case while a third of the other
    tenants' cases got better: the overall mean barely moves."""
    cases = [json.loads(line) for line in KB.read_text(encoding="utf-8").splitlines() if line.strip()]
    base = {c["id"]: _ranking(c, "base") for c in cases}
    candidate = {
        c["id"]: _ranking(c, "worse" if c["tenant_id"] == "acme" else "ideal" if i % 3 == 0 else "base")
        for i, c in enumerate(cases)
    }
    paths = folder / "base.json", folder / "candidate.json"
    for run, path in zip((base, candidate), paths, strict=True):
        ragaudit.evaluate(KB, run, metrics=METRICS).write_json(path)
    return paths


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return write_runs(tmp_path_factory.mktemp("slices"))


def _policy(folder: Path, text: str) -> Path:
    path = folder / "gates.toml"
    path.write_text(text + "\n[security]\nallow_unverified = true\n", encoding="utf-8")
    return path


def test_the_eval_report_has_each_metric_per_tenant_with_ci_and_n(runs: tuple[Path, Path]) -> None:
    report = read_report(runs[1])
    assert schema_errors(report) == []
    slices = {t["tenant"]: t for t in report["tenant_slices"]["tenants"]}
    assert sorted(slices) == ["acme", "globex", "initech"]
    acme = slices["acme"]["metrics"]["nDCG@10"]
    assert acme["n"] == 25 and slices["acme"]["enough"]
    values = [
        c["metrics"]["nDCG@10"] for c in report["per_case"] if c.get("tenant_id") == "acme" and c["metrics"]
    ]
    assert acme["mean"] == pytest.approx(sum(values) / len(values))
    assert acme["ci"][0] <= acme["mean"] <= acme["ci"][1]
    shown = render_terminal(report)
    assert "per tenant: mean [95% CI]" in shown and "acme" in shown


def test_one_tenant_is_no_table_and_a_small_tenant_says_too_few() -> None:
    cases = [
        {"id": "q1", "status": "ok", "tenant_id": "a", "metrics": {"R@5": 1.0}},
        {"id": "q2", "status": "ok", "tenant_id": "a", "metrics": {"R@5": 0.0}},
    ]
    one = tenant_slices(cases, ["R@5"])
    assert [t["tenant"] for t in one["tenants"]] == ["a"] and not one["tenants"][0]["enough"]
    from ragaudit.report.document import Document, Section
    from ragaudit.report.draw.terminal import draw_terminal
    from ragaudit.report.kinds.tenants import TenantSlices, slices_table

    assert TenantSlices.read(one) is None  # one tenant: its slice is the overall figures, no table
    two = TenantSlices.read(
        tenant_slices([*cases, {"id": "q3", "status": "ok", "metrics": {"R@5": 1.0}}], ["R@5"])
    )
    assert two is not None
    shown = "\n".join(draw_terminal(Document((Section("t", "t", (slices_table([two]),)),))))
    assert "too few cases to judge (< 5)" in shown and "(no tenant)" in shown


def test_compare_shows_the_tenant_regression_the_overall_mean_hides(runs: tuple[Path, Path]) -> None:
    reports = [load_report(p) for p in runs]
    result = with_tenant_comparisons(compare_reports(reports, reports[0], ["nDCG@10"]), reports, reports[0])
    assert schema_errors(result) == []
    overall = result["comparisons"][0]
    assert abs(overall["delta"]) < 0.02 and not overall["significant"]
    rows = {r["tenant"]: r for r in result["tenant_comparisons"]["rows"]}
    assert rows["acme"]["delta"] < -0.15 and rows["acme"]["significant"]
    assert rows["globex"]["delta"] > 0
    assert result["tenant_comparisons"]["family"] == 3
    assert "Holm over 3 comparison(s)" in result["tenant_comparisons"]["correction_text"]
    shown = render_terminal(result)
    assert "per tenant vs in-memory" in shown and "-0.1967 ▼ hidden" in shown
    assert "hidden regression: ▼ in-memory on nDCG@10 in tenant acme: -0.1967 (p < 0.001)" in shown


def test_the_gate_catches_the_hidden_tenant_regression_and_names_the_tenant(
    runs: tuple[Path, Path], tmp_path: Path
) -> None:
    base, candidate = runs
    overall_only = load_policy(
        _policy(tmp_path, '[quality]\nfloors = { "nDCG@10" = 0.60 }\nmax_regression = 0.02')
    )
    assert run_gates(candidate, overall_only, baseline_path=base, resamples=2000).state != "fail"
    policy = load_policy(
        _policy(
            tmp_path,
            '[quality]\nfloors = { "nDCG@10" = 0.60 }\nmax_regression = 0.02\nmax_tenant_regression = 0.05',
        )
    )
    verdict = run_gates(candidate, policy, baseline_path=base, resamples=2000)
    gates = {g.gate: g for g in verdict.gates}
    assert gates["quality"].status == "pass"
    assert gates["tenants"].status == "fail" and verdict.state == "fail"
    (finding,) = gates["tenants"].findings
    assert finding.startswith("tenant acme: nDCG@10 0.46 vs baseline 0.65 (delta -0.1967")
    assert "max_tenant_regression 0.05" in finding


def test_per_tenant_floors_fail_naming_the_tenant_and_star_covers_every_tenant(
    runs: tuple[Path, Path], tmp_path: Path
) -> None:
    policy = load_policy(_policy(tmp_path, '[quality]\nper_tenant_floors = { "*" = { "nDCG@10" = 0.60 } }'))
    verdict = run_gates(runs[1], policy)
    tenants = next(g for g in verdict.gates if g.gate == "tenants")
    assert tenants.status == "fail"
    assert [f.split(":")[0] for f in tenants.findings] == ["tenant acme"]
    assert set(tenants.numbers["floors"]) == {"acme", "globex", "initech"}


def test_a_tenant_with_too_few_cases_is_not_verified_not_passed(
    runs: tuple[Path, Path], tmp_path: Path
) -> None:
    policy = load_policy(
        _policy(
            tmp_path,
            '[quality]\nper_tenant_floors = { "globex" = { "nDCG@10" = 0.5 } }\nmin_tenant_cases = 30',
        )
    )
    verdict = run_gates(runs[1], policy)
    tenants = next(g for g in verdict.gates if g.gate == "tenants")
    assert tenants.status == "not_verified" and not verdict.passed
    assert "tenant globex: 25 answerable case(s), too few cases to judge" in tenants.findings[0]


def test_a_bad_per_tenant_policy_names_the_key(tmp_path: Path) -> None:
    path = _policy(
        tmp_path, '[quality]\nper_tenant_floors = { "acme" = { "nDGC@10" = 2 } }\nmax_tenant_regression = -1'
    )
    with pytest.raises(ragaudit.ValidationError) as caught:
        load_policy(path)
    text = "\n".join(str(p) for p in caught.value.problems)
    assert "gates.toml:2: [quality] per_tenant_floors: unknown metric 'nDGC@10'" in text
    assert "the floor of 'nDGC@10' for tenant 'acme' must be a number between 0 and 1" in text
    assert "gates.toml:3: [quality] max_tenant_regression: must be a number between 0.0 and 1.0" in text


def test_a_policy_without_tenant_keys_runs_the_four_gates(runs: tuple[Path, Path], tmp_path: Path) -> None:
    policy = load_policy(_policy(tmp_path, '[quality]\nfloors = { "nDCG@10" = 0.60 }'))
    assert [g.gate for g in run_gates(runs[1], policy).gates] == [
        "self-test",
        "quality",
        "security",
        "operations",
    ]


def test_the_command_line_gate_exits_1_naming_the_tenant(
    runs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ragaudit.cli.main import main

    policy = _policy(tmp_path, "[quality]\nmax_tenant_regression = 0.05")
    base, candidate = runs
    code = main(
        ["gate", str(candidate), "--policy", str(policy), "--baseline", str(base), "--resamples", "2000"]
    )
    out = capsys.readouterr().out
    assert code == 1
    assert "ragaudit gate: FAIL (1 of 5 gates failed)" in out
    assert "[FAIL] tenants" in out and "- tenant acme: nDCG@10 0.46 vs baseline 0.65 (delta -0.1967" in out


def _section(page: str, anchor: str) -> str:
    found = page[page.index(f'<section id="{anchor}">') :]
    return found[: found.index("</section>")]


def test_the_pages_show_the_one_tenant_regression_the_mean_hides(runs: tuple[Path, Path]) -> None:
    """compare, and eval against its baseline: the page and the Markdown name acme's hidden loss, mark
    its row, and show each tenant's mean with its CI and n."""
    from ragaudit.report.html import render_html
    from ragaudit.report.markdown import render_markdown
    from ragaudit.report.view import build_view

    reports = [load_report(p) for p in runs]
    result = with_tenant_comparisons(compare_reports(reports, reports[0], ["nDCG@10"]), reports, reports[0])
    base, candidate = (read_report(p) for p in runs)
    for view in (build_view(result), build_view(candidate, base, resamples=2_000)):
        tenants = _section(render_html(view), "tenants")
        assert '<p class="advice">▼ in-memory on nDCG@10 in tenant acme: -0.1967 (p ' in tenants
        rows = re.findall(r"<tr>.*?</tr>", tenants)
        row = next(r for r in rows if ">acme<" in r and "hidden" in r)
        assert '<span class="down sig">-0.1967 ▼ hidden</span>' in row
        assert "regresses while the overall mean does not" in row
        assert not any("hidden" in r for r in rows if ">globex<" in r or ">initech<" in r)
        markdown = render_markdown(view)
        assert "**Hidden regression:** " in markdown and "| **-0.1967 ▼ hidden** |" in markdown
    eval_page = render_html(build_view(candidate, base, resamples=2_000))
    slices = _section(eval_page, "tenants")
    assert 'data-label="95% CI">[+' in slices and 'data-label="n">25<' in slices  # mean, CI, n per tenant
    assert slices.count("<svg") == 1  # each tenant's mean and CI, drawn


def test_no_hidden_mark_when_the_overall_mean_also_regresses(runs: tuple[Path, Path]) -> None:
    """A loss the mean shows too is a plain significant loss (``*``), not a hidden one."""
    from ragaudit.report.kinds.fields import Fields, Paired
    from ragaudit.report.kinds.tenants import TenantPaired, hidden

    row = {"metric": "nDCG@10", "system": "b", "delta": -0.2, "significant": True}
    tenant = TenantPaired("acme", True, Paired.read(Fields(row, "compare")))
    assert hidden(tenant, {}) and hidden(
        tenant,
        {("b", "nDCG@10"): Paired.read(Fields({**row, "delta": 0.01, "significant": False}, "compare"))},
    )
    assert not hidden(tenant, {("b", "nDCG@10"): Paired.read(Fields(row, "compare"))})
    few = TenantPaired("acme", False, tenant.paired)
    assert not hidden(few, {})  # too few cases: never called significant
