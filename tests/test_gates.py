"""Release gates: the metric self-test, the policy file, and the four gates through ``ragaudit gate``.

Reports are real evaluations of the bm25 pipeline on the demo knowledge base (one run, reused); the
regressed, leaking and failing variants change that run's rankings, keeping its latencies.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from conftest import KB
from ragaudit.artifacts.envelope import schema_errors
from ragaudit.cli.main import main
from ragaudit.corpus.loading import load_corpus
from ragaudit.data.loading import load_dataset
from ragaudit.data.run import CaseRun, LeakRecord, RankedItem, Run
from ragaudit.errors import ValidationError
from ragaudit.evaluation.evaluate import evaluate
from ragaudit.gates.checks import describe_leak, floor_failure, fmt_score
from ragaudit.gates.policy import bundled_policy, load_policy, parse_policy
from ragaudit.gates.selftest import KNOWN_ANSWERS, KnownAnswer, check_known_answer, run_selftest
from ragaudit.metrics.measures import MEASURES
from ragaudit.metrics.names import parse_metric
from ragaudit.pipelines.build import build_pipeline
from ragaudit.pipelines.config import preset
from ragaudit.runner.execute import run_cases
from ragaudit.security.ownership import OwnershipIndex
from ragaudit.security.probes import generate_probes
from ragaudit.security.tenant_audit import AuditOptions, audit_tenants
from test_gate_forged_audits import SIZED

METRICS = "nDCG@10,R@5,MRR@10"
ISSUE_POLICY = """[quality]
floors = { "nDCG@10" = 0.70, "R@5" = 0.85 }
max_regression = 0.02   # against --baseline, counted only when significant at alpha
alpha = 0.05
[security]
max_leaks = 0
[operations]
latency_p95_ms = 800
max_error_rate = 0.01
"""


def _write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _demote_top(case: CaseRun, to: int = 4) -> CaseRun:
    """The first result moved to rank ``to`` (a ranking regression; latency kept)."""
    return replace(case, items=[*case.items[1:to], *case.items[:1], *case.items[to:]])


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("gates")
    dataset = load_dataset(KB / "golden.jsonl")
    corpus = load_corpus(KB / "corpus.jsonl")
    built = build_pipeline(preset("bm25"), corpus)
    run = asyncio.run(run_cases(built.retriever, dataset.cases, 10, progress=False, name="bm25"))
    variants: dict[str, Run] = {"base": run}
    variants["regressed"] = Run({cid: _demote_top(c) for cid, c in run.cases.items()}, name="regressed")
    few = sorted(run.cases)[:3]  # a big drop on 3 cases only: beyond the tolerance, not significant
    variants["noisy"] = Run(
        {cid: _demote_top(c, 11) if cid in few else c for cid, c in run.cases.items()}, name="noisy"
    )
    leak_case = next(c for c in dataset.cases if c.tenant_id == "acme" and c.id in run.cases)
    leaked = run.cases[leak_case.id]
    foreign = RankedItem("globex-contract-secret", 9.0, tenant_id="globex")
    variants["leaky"] = Run(
        {
            **run.cases,
            leak_case.id: replace(
                leaked,
                items=[foreign, *leaked.items],
                leaks=[LeakRecord("globex-contract-secret", 1, "globex", "acme")],
            ),
        },
        name="leaky",
    )
    failing = sorted(run.cases)[:4]
    variants["errors"] = Run(
        {
            cid: CaseRun(error="timeout after 30s", latency_ms=c.latency_ms) if cid in failing else c
            for cid, c in run.cases.items()
        },
        name="errors",
    )
    gone = sorted(run.cases)[:2]  # a run file that lacks 2 cases of the dataset
    variants["missing"] = Run({cid: c for cid, c in run.cases.items() if cid not in gone}, name="missing")
    paths = {}
    for name, variant in variants.items():
        paths[name] = out / f"{name}.json"
        evaluate(dataset, variant, METRICS).write_json(paths[name])
    paths["run_file"] = out / "run_file.json"  # scored from rankings alone: no latency
    evaluate(dataset, {cid: c.ranking for cid, c in run.cases.items()}, METRICS).write_json(paths["run_file"])
    paths["policy"] = out / "gates.toml"
    paths["policy"].write_text(ISSUE_POLICY, encoding="utf-8")
    paths["audit"] = (
        out / "audit.json"
    )  # a real cross-tenant audit of the same pipeline: the only verification
    probes = generate_probes(corpus.documents)  # 24 per tenant: the gate's min_probes_per_tenant
    ownership = OwnershipIndex.build(corpus.documents, built.chunks)
    # the default --budget (3,000 requests: the gate's min_audit_requests), in rounds of these probes
    quick = AuditOptions(progress=False, top_k_values=(10,), max_top_k=10, hostile_probes=1)
    asyncio.run(audit_tenants(built.retriever, ownership, probes, quick)).write_json(paths["audit"])
    _name_the_system(paths, preset("bm25").sha256())
    return paths


def _name_the_system(paths: dict[str, Path], config_sha256: str) -> None:
    """Each eval report and the audit name the pipeline they ran, as the CLI writes it: the gate ties an
    audit to a report only through that (a report that names no system is verified by no audit)."""
    for name, path in paths.items():
        if path.suffix != ".json" or name == "run_file":
            continue
        data = json.loads(path.read_text(encoding="utf-8"))
        system = {"name": "bm25", "config": preset("bm25").to_dict(), "config_sha256": config_sha256}
        if data.get("kind") == "tenant-audit":
            data["source"] = {**(data.get("source") or {}), "pipeline": system}
        else:
            data["pipeline"] = {**(data.get("pipeline") or {}), **system}
        path.write_text(json.dumps(data), encoding="utf-8")


def audited(reports: dict[str, Path]) -> list[str]:
    """``--audit`` with the clean audit of the pipeline the reports evaluated."""
    return ["--audit", str(reports["audit"])]


def _gate(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["gate", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# --- gate 1: the metric self-test -------------------------------------------------------------------


def test_selftest_passes_fast_and_covers_the_lesson_cases() -> None:
    report = run_selftest()
    assert report.passed, [c.detail for c in report.failures]
    assert sum(1 for c in report.checks if c.name.startswith("lesson:")) >= 7
    assert {"graded: linear gain", "duplicates count once", "run-file ties: score desc, then id desc"} <= {
        c.name for c in report.checks
    }
    assert report.seconds < 0.5
    checked = {parse_metric(c.metric).family for c in KNOWN_ANSWERS}
    assert checked == {m.family for m in MEASURES}, "every registered family has a known answer, RPrec too"


def test_selftest_catches_a_wrong_known_answer_with_its_numbers() -> None:
    lesson = next(c for c in KNOWN_ANSWERS if c.name == "lesson: recall@3")
    wrong = replace(lesson, expected=0.75)  # R@3 of the lesson case is 0.5
    result = check_known_answer(wrong)
    assert not result.passed
    assert "expected 0.750000" in result.detail and "pure 0.500000, bulk 0.500000" in result.detail
    crash = check_known_answer(KnownAnswer("bad k", "R@3", ("A",), {}, 0.0, "no relevant item"))
    assert not crash.passed and "raised ValueError" in crash.detail


# --- the policy file ----------------------------------------------------------------------------------


def test_the_issue_policy_parses_as_written(reports: dict[str, Path]) -> None:
    policy = load_policy(reports["policy"])
    assert policy.floors == {"nDCG@10": 0.70, "R@5": 0.85}
    assert (policy.max_regression, policy.alpha, policy.max_leaks) == (0.02, 0.05, 0)
    assert (policy.latency_p95_ms, policy.max_error_rate) == (800.0, 0.01)
    assert bundled_policy().floors == policy.floors


def test_invalid_policy_names_every_key_with_line_and_fix(tmp_path: Path) -> None:
    path = tmp_path / "gates.toml"
    path.write_text(
        '[quality]\nfloors = { "nDGC@10" = 0.7, "R@5" = 1.5 }\nalpha = 0\n'
        "[security]\nmax_leak = 0\n[operation]\nlatency_p95_ms = 800\n",
        encoding="utf-8",
    )
    with pytest.raises(ValidationError) as caught:
        load_policy(path)
    text = "\n".join(str(p) for p in caught.value.problems)
    assert (
        f"{path}:2: [quality] floors: unknown metric 'nDGC@10'" in text and "did you mean 'nDCG@10'" in text
    )
    assert "the floor of 'R@5' must be a number between 0 and 1 (got 1.5)" in text
    assert f"{path}:3: [quality] alpha: must be strictly between 0 and 1" in text
    assert f"{path}:5: [security] max_leak: unknown key" in text and "did you mean 'max_leaks'?" in text
    assert f"{path}:6: unknown section [operation]" in text and "did you mean [operations]?" in text


def test_policy_defaults_block_any_leak() -> None:
    policy = parse_policy({"quality": {"floors": {"ndcg@10": 0.5}}})
    assert policy.max_leaks == 0 and policy.floors == {"nDCG@10": 0.5} and policy.latency_p95_ms is None


def test_invalid_policy_exits_2_with_the_fix(
    reports: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "gates.toml"
    bad.write_text("[operations]\nlatency_p95_ms = -5\n[quality\n", encoding="utf-8")
    code, _, err = _gate([str(reports["base"]), "--policy", str(bad)], capsys)
    assert code == 2 and f"{bad}:3: invalid TOML" in err and "invalid gate policy" in err
    bad.write_text("[operations]\nlatency_p95_ms = -5\n", encoding="utf-8")
    code, _, err = _gate([str(reports["base"]), "--policy", str(bad)], capsys)
    assert code == 2 and f"{bad}:2: [operations] latency_p95_ms: must be a number at least 0.0" in err
    assert "write latency_p95_ms = 800" in err


# --- the verdict --------------------------------------------------------------------------------------


def test_a_good_report_passes_all_four_gates_and_writes_the_verdict(
    reports: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "verdict.json"
    released = tmp_path / "released.json"  # the same system's report of an earlier run, not this one
    released.write_text(
        json.dumps({**json.loads(reports["base"].read_text()), "created_at": "2026-01-01T00:00:00+00:00"})
    )
    code, text, _ = _gate(
        [
            str(reports["base"]),
            "--policy",
            str(reports["policy"]),
            "--baseline",
            str(released),
            "--out",
            str(out),
            *audited(reports),
        ],
        capsys,
    )
    assert code == 0, text
    assert text.startswith("ragaudit gate: PASS (4 gates)")
    assert "[pass] security" in text and f"verified by audit {reports['audit']}" in text
    verdict = json.loads(out.read_text())
    assert verdict["kind"] == "gate" and verdict["passed"] is True and verdict["exit_code"] == 0
    assert [g["gate"] for g in verdict["gates"]] == ["self-test", "quality", "security", "operations"]
    assert all(g["passed"] and g["messages"] for g in verdict["gates"])
    assert verdict["policy"]["quality"]["floors"] == {"nDCG@10": 0.7, "R@5": 0.85}
    assert schema_errors(verdict) == []  # the verdict is a report of kind "gate"
    carried = {**json.loads(reports["base"].read_text()), "gate": verdict}
    assert schema_errors(carried) == []  # and the gate section a report can carry


def test_a_significant_regression_and_a_missed_floor_fail_with_their_numbers(
    reports: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = tmp_path / "gates.toml"
    policy.write_text(ISSUE_POLICY.replace('"nDCG@10" = 0.70', '"nDCG@10" = 0.80'), encoding="utf-8")
    out = tmp_path / "verdict.json"
    code, text, _ = _gate(
        [
            str(reports["regressed"]),
            "--policy",
            str(policy),
            "--baseline",
            str(reports["base"]),
            "--out",
            str(out),
            *audited(reports),
        ],
        capsys,
    )
    assert code == 1
    assert "ragaudit gate: FAIL (1 of 4 gates failed)" in text
    base = json.loads(reports["base"].read_text())["metrics"]["nDCG@10"]
    worse = json.loads(reports["regressed"].read_text())["metrics"]["nDCG@10"]
    assert worse < 0.80 <= base
    assert f"nDCG@10 {fmt_score(worse)} < floor 0.80; worst queries: " in text
    assert (
        f"nDCG@10 {fmt_score(worse)} vs baseline {fmt_score(base)} (delta {worse - base:+.4f}, p < 0.001 Holm"
        in text  # one p-value formatter everywhere (artifacts.tables.fmt_p)
    )
    assert "a significant regression beyond the tolerance 0.02 at alpha 0.05" in text
    quality = json.loads(out.read_text())["gates"][1]
    assert quality["status"] == "fail" and any(c["significant"] for c in quality["numbers"]["comparisons"])


def test_a_drop_that_is_not_significant_is_reported_not_counted(
    reports: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    policy = ["--policy", str(reports["policy"])]
    args = [str(reports["noisy"]), *policy, "--baseline", str(reports["base"]), *audited(reports)]
    code, text, _ = _gate(args, capsys)
    assert code == 0, text
    assert "dropped beyond the tolerance but not significantly; not counted" in text


def test_a_cross_tenant_leak_fails_the_security_gate(
    reports: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    code, text, _ = _gate([str(reports["leaky"]), "--policy", str(reports["policy"])], capsys)
    assert code == 1
    assert "[FAIL] security" in text and "1 cross-tenant leak(s) > allowed 0" in text
    assert "chunk globex-contract-secret (rank 1) owned by 'globex', asked as 'acme'" in text


def test_tenant_audit_reports_count_whatever_their_leak_shape(
    reports: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = {
        "probe": {"id": "acme/canary/0"},
        "caller": "globex",
        "chunk_id": "acme-x",
        "rank": 2,
        "owner": ["acme"],
    }
    audit = _write(
        tmp_path / "audit.json", {"kind": "tenant-audit", "leaks": {"count": 1, "records": [record]}}
    )
    listed = _write(tmp_path / "listed.json", {"kind": "tenant-audit", "leaks": [record, record]})
    passed = {
        "check": "tenant isolation",
        "state": "pass",
        "reason": "no foreign chunk served",
        "verified": 9,
    }
    clean = _write(
        tmp_path / "clean.json",
        {
            "kind": "tenant-audit",
            "passed": True,
            "verdict": "clean",
            "leaks": {"count": 0},
            "isolation": passed,
            "source": {"pipeline": {"config_sha256": preset("bm25").sha256()}},
            **SIZED,
        },
    )
    # the same audit without saying what it audited is tied to no system: it verifies nothing
    unnamed = _write(tmp_path / "unnamed.json", {**json.loads(clean.read_text()), "source": {}})
    # an audit that says clean but checked nothing verifies nothing: it keeps the gate from passing
    bare = _write(tmp_path / "bare.json", {"kind": "tenant-audit", "passed": True, "leaks": {"count": 0}})
    policy = ["--policy", str(reports["policy"])]
    code, text, _ = _gate(
        [str(reports["base"]), *policy, "--audit", str(audit), "--audit", str(listed)], capsys
    )
    assert code == 1 and "3 cross-tenant leak(s) > allowed 0: 1 in audit" in text
    assert "probe acme/canary/0: chunk acme-x (rank 2) owned by 'acme', asked as 'globex'" in text
    assert _gate([str(reports["base"]), *policy, "--audit", str(clean)], capsys)[0] == 0
    code, text, _ = _gate([str(reports["base"]), *policy, "--audit", str(unnamed)], capsys)
    assert code == 1 and "NOT VERIFIED" in text and "the audit names no system" in text
    code, text, _ = _gate([str(reports["base"]), *policy, "--audit", str(bare)], capsys)
    assert code == 1 and "NOT VERIFIED" in text and "it checked no returned chunk" in text
    unknown = _write(tmp_path / "other.json", {"kind": "compare"})
    code, _, err = _gate([str(reports["base"]), *policy, "--audit", str(unknown)], capsys)
    assert code == 2 and "no leaks list in this audit report" in err


def test_a_clean_audit_of_another_system_or_corpus_verifies_nothing(
    reports: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The audit must be of the system and corpus the report evaluated, where both say which."""
    data = json.loads(reports["base"].read_text())
    data["pipeline"] = {"name": "bm25", "config_sha256": "a" * 64}
    data["corpus"] = {"sha256": "c" * 64}
    report = _write(tmp_path / "report.json", data)
    isolation = {"check": "tenant isolation", "state": "pass", "reason": "no foreign chunk", "verified": 9}
    clean = {"kind": "tenant-audit", "passed": True, "verdict": "clean", "leaks": {"count": 0}, **SIZED}
    clean["isolation"] = isolation
    policy = ["--policy", str(reports["policy"])]
    same = {**clean, "source": {"pipeline": {"config_sha256": "a" * 64}}, "corpus": {"sha256": "c" * 64}}
    assert _gate([str(report), *policy, "--audit", str(_write(tmp_path / "same.json", same))], capsys)[0] == 0
    for name, audit, why in (
        ("pipeline", {**same, "source": {"pipeline": {"config_sha256": "b" * 64}}}, "another system"),
        ("endpoint", {**same, "source": {"endpoint": "localhost:8000/search"}}, "another system"),
        ("corpus", {**same, "corpus": {"sha256": "d" * 64}}, "another corpus"),
    ):
        path = _write(tmp_path / f"{name}.json", audit)
        code, text, _ = _gate([str(report), *policy, "--audit", str(path)], capsys)
        assert code == 1 and "NOT VERIFIED" in text and f"it audited {why}" in text, text


def test_operations_budgets_fail_with_numbers(
    reports: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = tmp_path / "gates.toml"
    policy.write_text("[operations]\nlatency_p95_ms = 0.000001\nmax_error_rate = 0.01\n", encoding="utf-8")
    code, text, _ = _gate([str(reports["errors"]), "--policy", str(policy)], capsys)
    assert code == 1
    cases = json.loads(reports["errors"].read_text())["counts"]["cases"]
    assert f"error rate {4 / cases:.4f} (4 errors / {cases} cases) > budget 0.01" in text
    assert "timeout after 30s" in text and "ms > budget 1e-06 ms" in text
    code, text, _ = _gate([str(reports["run_file"]), "--policy", str(policy)], capsys)
    assert code == 1 and "the report has no latency (a run-file evaluation measures none)" in text


def test_failed_and_missing_cases_fail_the_gate_even_without_an_error_budget(
    reports: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run whose cases failed is not a passing run: missing cases count as failed (as in 'ragaudit
    eval'), and a policy without max_error_rate tolerates none (the default budget is 0)."""
    cases = json.loads(reports["missing"].read_text())["counts"]["cases"]
    code, text, _ = _gate([str(reports["missing"]), "--policy", str(reports["policy"])], capsys)
    assert code == 1, text
    assert f"error rate {2 / cases:.4f} (0 errors + 2 missing / {cases} cases) > budget 0.01" in text
    floors_only = tmp_path / "floors.toml"
    floors_only.write_text('[quality]\nfloors = { "R@5" = 0.10 }\n', encoding="utf-8")
    for name, failed in (("missing", "0 errors + 2 missing"), ("errors", "4 errors")):
        code, text, _ = _gate([str(reports[name]), "--policy", str(floors_only)], capsys)
        assert code == 1, text
        assert "[FAIL] operations" in text and f"({failed} / {cases} cases) > budget 0" in text
    code, text, _ = _gate([str(reports["base"]), "--policy", str(floors_only), *audited(reports)], capsys)
    assert code == 0, text
    assert (
        f"[pass] operations  error rate 0.0000 (0/{cases}) <= 0 (no max_error_rate: none tolerated)" in text
    )


def test_a_report_where_nothing_could_be_scored_fails_the_gate(
    reports: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads(reports["base"].read_text())
    for case in data["per_case"]:  # every case unanswerable: nothing was scored
        case["status"] = "unanswerable"
    empty = _write(tmp_path / "unscorable.json", data)
    code, text, _ = _gate([str(empty), "--policy", str(reports["policy"])], capsys)
    assert code == 1 and "no case could be scored" in text


def test_a_baseline_sharing_no_metric_fails_the_regression_check(
    reports: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads(reports["base"].read_text())
    data["metrics"] = {"P@3": 0.2}
    for case in data["per_case"]:
        case["metrics"] = {"P@3": 0.2} if case.get("metrics") else case.get("metrics", {})
    baseline = _write(tmp_path / "other-metrics.json", data)
    policy = tmp_path / "gates.toml"
    policy.write_text("[quality]\nmax_regression = 0.02\n", encoding="utf-8")
    code, text, _ = _gate(
        [str(reports["base"]), "--policy", str(policy), "--baseline", str(baseline)], capsys
    )
    assert code == 1, text
    assert "[FAIL] quality" in text and "no metric in common with the baseline" in text
    floors = tmp_path / "floors.toml"  # a floor's metric the baseline lacks is not compared silently
    floors.write_text('[quality]\nfloors = { "R@5" = 0.10 }\n', encoding="utf-8")
    code, text, _ = _gate(
        [str(reports["base"]), "--policy", str(floors), "--baseline", str(baseline)], capsys
    )
    assert code == 1 and "R@5 cannot be compared" in text


def test_thresholds_that_can_never_fail_check_nothing(
    reports: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A floor of 0 and a max_regression of 1 cannot fail (means are in [0, 1]): never a pass mark."""
    policy = tmp_path / "gates.toml"
    policy.write_text('[quality]\nfloors = { "nDCG@10" = 0.0 }\nmax_regression = 1.0\n', encoding="utf-8")
    args = [str(reports["regressed"]), "--policy", str(policy), "--baseline", str(reports["base"])]
    code, text, _ = _gate(args, capsys)
    assert "[skip] quality" in text and "[pass] quality" not in text, text
    assert "nDCG@10 floor 0 cannot fail: it checks nothing" in text
    assert "max_regression 1 cannot fail: no mean in [0, 1] drops by more" in text
    policy.write_text('[quality]\nfloors = { "nDCG@10" = 0.0, "R@5" = 0.5 }\n', encoding="utf-8")
    code, text, _ = _gate([str(reports["base"]), "--policy", str(policy), *audited(reports)], capsys)
    assert code == 0 and "[pass] quality     1 floor(s) met" in text and "nDCG@10 floor 0 cannot fail" in text


def test_a_mean_edited_by_hand_does_not_pass_a_floor(
    reports: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The floors are checked against the report's own cases: a mean that is not theirs fails."""
    data = json.loads(reports["base"].read_text())
    real = data["metrics"]["nDCG@10"]
    data["metrics"]["nDCG@10"] = 0.99
    edited = _write(tmp_path / "edited.json", data)
    policy = tmp_path / "gates.toml"
    policy.write_text('[quality]\nfloors = { "nDCG@10" = 0.95 }\n', encoding="utf-8")
    code, text, _ = _gate([str(edited), "--policy", str(policy)], capsys)
    assert code == 1, text
    assert f"nDCG@10: the report says 0.9900 but its {75} answerable cases average {real:.4f}" in text
    for case in data["per_case"]:  # no per-case figures left to check the mean against
        case.pop("metrics", None)
    stripped = _write(tmp_path / "stripped.json", data)
    code, text, _ = _gate([str(stripped), "--policy", str(policy)], capsys)
    assert code == 1 and "nDCG@10: the report has no per-case values to check its mean against" in text


def test_a_floor_on_a_metric_the_report_lacks_fails_and_says_how_to_fix(
    reports: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = tmp_path / "gates.toml"
    policy.write_text('[quality]\nfloors = { "MAP@100" = 0.5 }\n', encoding="utf-8")
    code, text, _ = _gate([str(reports["base"]), "--policy", str(policy)], capsys)
    assert code == 1 and "MAP@100 has a floor but the report has no MAP@100" in text
    assert "--metrics including MAP@100" in text


def test_usage_errors_exit_2(
    reports: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = ["--policy", str(reports["policy"])]
    assert _gate([str(tmp_path / "missing.json"), *policy], capsys)[0] == 2
    other = _write(
        tmp_path / "other.json", {**json.loads(reports["base"].read_text()), "dataset": {"sha256": "f" * 64}}
    )
    code, _, err = _gate([str(reports["base"]), *policy, "--baseline", str(other)], capsys)
    assert code == 2 and "made on a different dataset" in err
    assert _gate([str(reports["base"]), "--policy", str(tmp_path / "none.toml")], capsys)[0] == 2


def test_floor_failure_and_leak_messages_read_as_a_report() -> None:
    message = floor_failure("nDCG@10", 0.61, 0.70, {"q1": 0.2, "q2": 0.0, "q3": 0.9, "q4": 0.5})
    assert message == "nDCG@10 0.61 < floor 0.70; worst queries: q2 (0.00), q1 (0.20), q4 (0.50), q3 (0.90)"
    assert floor_failure("R@5", 0.85, 0.85, {}) is None
    assert fmt_score(0.6996, 0.70) == "0.6996"
    leak = {"case_id": "c1", "chunk_id": "x", "rank": 3, "claimed_tenant": "b", "caller_tenant": "a"}
    assert describe_leak(leak) == "case c1: chunk x (rank 3) owned by 'b', asked as 'a'"
    assert describe_leak({"weird": 1}) == '{"weird": 1}'


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_the_ci_gate_example_runs_and_decides_as_documented(tmp_path: Path) -> None:
    script = Path(__file__).resolve().parents[1] / "examples" / "ci_gate" / "run.sh"
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "OUT": str(tmp_path),
    }
    env.pop("RAGAUDIT_HISTORY", None)
    done = subprocess.run(
        ["bash", str(script)], env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "OK: candidate A released (exit 0), candidate B blocked (exit 1)" in done.stdout
    assert json.loads((tmp_path / "verdict-candidate-b.json").read_text())["passed"] is False
    assert (tmp_path / "history.html").is_file() and (tmp_path / "history.sqlite").is_file()
