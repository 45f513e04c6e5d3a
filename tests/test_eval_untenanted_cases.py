"""``eval`` of a golden set where some cases have no tenant, against a multi-tenant corpus: those cases
fail ("no tenant", exit 1) and are never asked, and the report says what happened to them where it
could otherwise read as a result: the isolation verdict names the cases it did not check, and their
per-tenant slice ``(no tenant)`` says they failed and were scored 0 (before: a slice of 0.0000 with a
[0, 0] CI and no word, and a verdict over "63 own-tenant queries" of 84 cases)."""

from __future__ import annotations

import json

import pytest

from conftest import KB
from ragaudit.artifacts.envelope import schema_errors
from ragaudit.cli.main import main
from ragaudit.evaluation.slices import tenant_slices
from ragaudit.report.terminal import render_terminal


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    folder = tmp_path_factory.mktemp("untenanted")
    golden = folder / "golden.jsonl"
    cases = [
        json.loads(line) for line in (KB / "golden.jsonl").read_text(encoding="utf-8").splitlines() if line
    ]
    for i, case in enumerate(cases):
        if i % 4 == 0:
            case.pop("tenant_id", None)
    golden.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    out = folder / "report.json"
    code = main(["eval", "--dataset", str(golden), "--corpus", str(KB / "corpus.jsonl"), "--pipeline", "bm25",
                 "--metrics", "nDCG@10", "--out", str(out), "--no-history"])  # fmt: skip
    assert code == 1  # the cases without a tenant failed: not a passing run
    data: dict[str, object] = json.loads(out.read_text(encoding="utf-8"))
    return data


def test_the_isolation_verdict_names_the_cases_it_did_not_check(report: dict[str, object]) -> None:
    isolation = report["security"]["isolation"]  # type: ignore[index]
    assert isolation["state"] == "not_verified"
    assert (
        "21 case(s) without a tenant_id were not asked (no --tenant) and checked nothing"
        in isolation["reason"]
    )


def test_the_no_tenant_slice_says_its_cases_failed(report: dict[str, object]) -> None:
    slices = {t["tenant"]: t for t in report["tenant_slices"]["tenants"]}  # type: ignore[index]
    assert slices["(no tenant)"]["failed"] == 21 and slices["(no tenant)"]["n"] == 21
    assert "failed" not in slices["acme"]
    assert schema_errors(report) == []
    shown = render_terminal(report)
    assert "(no tenant)" in shown and "21 of 21 failed, scored 0 (see the errors)" in shown


def test_a_slice_counts_errors_and_missing_cases_as_failed() -> None:
    per_case = [
        {"id": "a", "status": "ok", "tenant_id": "t1", "metrics": {"R@5": 1.0}},
        {"id": "b", "status": "missing", "tenant_id": "t1", "metrics": {"R@5": 0.0}},
        {"id": "c", "status": "error", "tenant_id": "t2", "metrics": {"R@5": 0.0}},
        {"id": "d", "status": "unanswerable", "tenant_id": "t2", "metrics": {}},
    ]
    rows = {t["tenant"]: t for t in tenant_slices(per_case, ["R@5"])["tenants"]}
    assert rows["t1"]["failed"] == 1 and rows["t2"]["failed"] == 1 and rows["t2"]["n"] == 1
