"""Judgments files, ``ragaudit label merge`` and ``ragaudit agreement``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from label_fixtures import skip_without_sklearn, sklearn_kappa, small_pool
from ragaudit.cli.main import main
from ragaudit.data.golden_jsonl import read_golden_jsonl
from ragaudit.errors import BadAction, InputError
from ragaudit.labeling.agreement import agreement_report
from ragaudit.labeling.judgments import JudgmentLog, LabelState, read_events, read_labels
from ragaudit.labeling.pool import load_pool
from ragaudit.labeling.session import LabelSession

skip_without_sklearn()
krippendorff = pytest.importorskip("krippendorff")


def _label(
    pool_path: Path, out: Path, annotator: str, grades: dict[tuple[str, str], int], **marks: bool
) -> Path:
    pool = load_pool(pool_path)
    log = JudgmentLog(out, annotator, {"pool": str(pool_path.resolve())})
    session = LabelSession(pool, log)
    for (case_id, chunk_id), grade in grades.items():
        session.judge({"case_id": case_id, "chunk_id": chunk_id, "grade": grade, "superseded": False})
    for case_id, value in marks.items():
        session.unanswerable({"case_id": case_id.replace("_", "-"), "value": value})
    log.close()
    return out


TO_JUDGE = {
    ("acme-pricing-001", "acme-faq-billing"): 1,
    ("acme-warranty-001", "acme-returns-policy"): 0,
    ("globex-pricing-001", "globex-faq-billing"): 2,
    ("initech-unanswerable-001", "initech-faq-billing"): 0,
}


def test_merge_keeps_who_and_when_resolves_disagreements_and_validates(tmp_path: Path) -> None:
    pool = small_pool(tmp_path)
    ana = _label(pool, tmp_path / "j" / "ana.jsonl", "ana", TO_JUDGE, initech_unanswerable_001=True)
    bob_grades = dict(TO_JUDGE) | {
        ("globex-pricing-001", "globex-faq-billing"): 3,
        ("acme-pricing-001", "acme-faq-billing"): 2,
    }
    bob = _label(pool, tmp_path / "j" / "bob.jsonl", "bob", bob_grades, initech_unanswerable_001=True)
    golden = tmp_path / "golden.jsonl"
    assert main(["label", "merge", str(ana), str(bob), "--into", str(golden)]) == 0
    cases, problems = read_golden_jsonl(golden)
    assert [p for p in problems if p.severity == "error"] == []
    by_id = {c.id: c for c in cases}
    assert set(by_id) == {
        "acme-pricing-001",
        "acme-warranty-001",
        "globex-pricing-001",
        "initech-unanswerable-001",
    }
    # carried over from the earlier golden set, plus the new grades; lower median of 2 and 3 is 2
    assert by_id["globex-pricing-001"].relevance["globex-faq-billing"] == 2
    assert by_id["globex-pricing-001"].relevance["globex-pricing-professional-v2"] == 3
    assert by_id["acme-pricing-001"].relevance["acme-faq-billing"] == 1
    assert set(by_id["acme-pricing-001"].relevant_chunk_ids or ()) == {"acme-pricing-professional-v3"}
    assert by_id["initech-unanswerable-001"].relevant_chunk_ids == ()
    assert "unanswerable" in by_id["initech-unanswerable-001"].tags
    raw = {json.loads(line)["id"]: json.loads(line) for line in golden.read_text().splitlines()}
    labels = raw["globex-pricing-001"]["metadata"]["labels"]["globex-faq-billing"]
    assert [(v["annotator"], v["grade"]) for v in labels] == [("ana", 2), ("bob", 3)]
    assert all(v["time"].endswith("Z") for v in labels)
    assert raw["globex-pricing-001"]["metadata"]["disagreements"] == ["globex-faq-billing"]
    assert "globex-pricing-professional-v2" in raw["globex-pricing-001"]["metadata"]["carried_over"]
    # the adjudicator's grade wins where given
    assert main(["label", "merge", str(ana), str(bob), "--into", str(golden), "--adjudicator", "bob"]) == 0
    cases, _ = read_golden_jsonl(golden)
    assert {c.id: c for c in cases}["globex-pricing-001"].relevance["globex-faq-billing"] == 3


def test_merge_leaves_out_incomplete_cases_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pool = small_pool(tmp_path)
    ana = _label(
        pool, tmp_path / "ana.jsonl", "ana", {("initech-unanswerable-001", "initech-faq-billing"): 0}
    )
    golden = tmp_path / "golden.jsonl"
    assert main(["label", "merge", str(ana), "--into", str(golden)]) == 0
    out = capsys.readouterr().out
    assert "3 pooled candidates are still unjudged" in out
    # the pool carried the case's unanswerable mark from the golden set: still unanswerable
    ids = [json.loads(line)["id"] for line in golden.read_text().splitlines()]
    assert "initech-unanswerable-001" in ids


def test_merge_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pool = small_pool(tmp_path)
    ana = _label(pool, tmp_path / "ana.jsonl", "ana", {})
    assert main(["label", "merge", str(ana)]) == 2
    assert "--into" in capsys.readouterr().err
    assert main(["label", "merge", "--into", str(tmp_path / "g.jsonl")]) == 2
    assert main(["label", "merge", str(ana), str(ana), "--into", str(tmp_path / "g.jsonl")]) == 2
    assert (
        main(["label", "merge", str(ana), "--into", str(tmp_path / "g.jsonl"), "--relevant-from", "0"]) == 2
    )
    assert "--relevant-from" in capsys.readouterr().err


def test_judgment_log_replay_undo_and_torn_tail(tmp_path: Path) -> None:
    out = tmp_path / "j.jsonl"
    log = JudgmentLog(out, "ana", {})
    for g in (1, 2, 3):
        log.append({"kind": "grade", "case_id": "q", "chunk_id": "d", "grade": g, "superseded": False})
    assert log.undo() is not None
    assert log.state.grades[("q", "d")]["grade"] == 2
    log.close()
    with out.open("ab") as handle:
        handle.write(b'{"seq": 7, "kind": "gra')
    assert LabelState.replay(read_events(out)).grades[("q", "d")]["grade"] == 2
    log = JudgmentLog(out, "ana", {})  # reopening cuts the torn tail off
    assert out.read_bytes().count(b"\n") == len(read_events(out))
    assert log.undo() is not None and log.undo() is not None
    assert ("q", "d") not in log.state.grades and log.undo() is None
    log.close()
    with pytest.raises(InputError, match="holds the judgments of ana"):
        JudgmentLog(out, "bob", {})


def test_session_refuses_bad_actions(tmp_path: Path) -> None:
    pool = load_pool(small_pool(tmp_path))
    session = LabelSession(pool, JudgmentLog(tmp_path / "j.jsonl", "ana", {}))
    with pytest.raises(BadAction):
        session.judge({"case_id": "acme-pricing-001", "chunk_id": "acme-faq-billing", "grade": True})
    with pytest.raises(BadAction):
        session.judge({"case_id": "acme-pricing-001", "chunk_id": "acme-faq-billing", "grade": 2.0})
    with pytest.raises(BadAction):
        session.unanswerable({"case_id": "nope", "value": True})
    with pytest.raises(BadAction):
        session.span({"case_id": "acme-pricing-001", "chunk_id": "acme-faq-billing", "start": 3, "end": 3})


def _random_labels(tmp_path: Path, seed: int, raters: int) -> tuple[list[Path], np.ndarray, list[str]]:
    """``raters`` annotators grading 60 random candidates in two tenants, each skipping some."""
    rng = np.random.default_rng(seed)
    units = [(f"{'acme' if u % 2 else 'globex'}-q{u // 6}", f"d{u}") for u in range(60)]
    truth = rng.integers(0, 4, len(units))
    data = np.clip(truth + rng.integers(-1, 2, (raters, len(units))), 0, 3).astype(float)
    data[rng.random(data.shape) < 0.2] = np.nan
    paths = []
    for r in range(raters):
        log = JudgmentLog(tmp_path / f"a{r}.jsonl", f"a{r}", {})
        for u, (case_id, chunk_id) in enumerate(units):
            if not np.isnan(data[r, u]):
                tenant = case_id.split("-")[0]
                log.append(
                    {
                        "kind": "grade",
                        "case_id": case_id,
                        "chunk_id": chunk_id,
                        "tenant_id": tenant,
                        "grade": int(data[r, u]),
                        "superseded": False,
                    }
                )
        log.close()
        paths.append(tmp_path / f"a{r}.jsonl")
    tenants = ["acme" if u % 2 else "globex" for u in range(len(units))]
    return paths, data, tenants


@pytest.mark.parametrize(("seed", "raters"), [(1, 2), (2, 3), (3, 4)])
def test_agreement_matches_reference_implementations(tmp_path: Path, seed: int, raters: int) -> None:
    paths, data, tenants = _random_labels(tmp_path, seed, raters)
    report = agreement_report([read_labels(p) for p in paths])
    domain = [0, 1, 2, 3]
    ref = krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal", value_domain=domain)
    assert report["overall"]["alpha_ordinal"] == pytest.approx(ref, abs=1e-9)
    for tenant in ("acme", "globex"):
        cols = [u for u, t in enumerate(tenants) if t == tenant]
        sub = data[:, cols]
        keep = [c for c in range(sub.shape[1]) if np.sum(~np.isnan(sub[:, c])) >= 1]
        ref_t = krippendorff.alpha(
            reliability_data=sub[:, keep], level_of_measurement="ordinal", value_domain=domain
        )
        assert report["tenants"][tenant]["alpha_ordinal"] == pytest.approx(ref_t, abs=1e-9)
    both = ~np.isnan(data[0]) & ~np.isnan(data[1])
    kappa = sklearn_kappa(data[0][both].astype(int), data[1][both].astype(int), weights="quadratic")
    assert report["overall"]["kappa"][0]["kappa"] == pytest.approx(kappa, abs=1e-12)
    differing = sum(1 for u in range(data.shape[1]) if len({v for v in data[:, u] if not np.isnan(v)}) > 1)
    assert len(report["disagreements"]) == differing


def test_agreement_cli_table_gate_and_usage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths, _data, _ = _random_labels(tmp_path, 7, 2)
    out = tmp_path / "agreement.json"
    assert main(["agreement", *map(str, paths), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    report = json.loads(out.read_text())
    alpha = report["overall"]["alpha_ordinal"]
    assert f"{alpha:.3f}" in printed
    assert "tenant acme" in printed and "tenant globex" in printed
    assert "disagreements to adjudicate" in printed
    assert main(["agreement", *map(str, paths), "--min-alpha", "0.99"]) == 1
    assert main(["agreement", *map(str, paths), "--min-alpha", str(alpha - 0.01)]) == 0
    assert main(["agreement", str(paths[0])]) == 2
