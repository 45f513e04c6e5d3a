"""Grade suggestions from an OpenAI-compatible model (the local stub server), and model-vs-human agreement."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import KB
from label_fixtures import skip_without_sklearn, sklearn_kappa, small_golden, trec_run
from openai_stub import OpenAIStub
from ragaudit.cli.main import main
from ragaudit.labeling.judgments import JudgmentLog
from ragaudit.labeling.pool import load_pool
from ragaudit.labeling.suggest import parse_grade

pytest.importorskip("httpx")
skip_without_sklearn()


def _responder(body: dict[str, Any]) -> str:
    prompt = body["messages"][-1]["content"]
    if "Billing" in prompt or "billing" in prompt:
        return "2"
    if "Returns" in prompt or "returns" in prompt:
        return "I cannot tell."
    return "Grade: 1"


def test_parse_grade() -> None:
    assert parse_grade("3") == 3
    assert parse_grade("Grade: 0.") == 0
    assert parse_grade("I would say 2, maybe 3") == 2
    assert parse_grade("10 out of 10") is None
    assert parse_grade("no idea") is None


def test_pool_suggestions_shown_only_and_model_agreement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    golden = small_golden(tmp_path)
    run = trec_run(
        tmp_path,
        "sys",
        {
            "acme-pricing-001": ["acme-pricing-professional-v3", "acme-faq-billing"],
            "acme-warranty-001": ["acme-returns-policy"],
            "globex-pricing-001": ["globex-faq-billing", "globex-faq-general"],
        },
    )
    out = tmp_path / "pool.jsonl"
    with OpenAIStub(responder=_responder) as stub:
        args = ["pool", "--dataset", str(golden), "--corpus", str(KB / "corpus.jsonl"), "--runs", str(run)]
        args += ["--suggest-grades", stub.base_url, "--suggest-model", "stub-model", "--out", str(out)]
        assert main(args) == 0
        prompts = [r.prompt for r in stub.requests]
    pool = load_pool(out)
    to_judge = [(c, cand) for c in pool.cases for cand in c.candidates if cand.prior_grade is None]
    assert len(prompts) == len(to_judge) == 4  # judged candidates are never sent
    assert all("2 = relevant and helpful" in p for p in prompts)
    by_id = {(c.case_id, cand.chunk_id): cand.suggested_grade for c, cand in to_judge}
    assert by_id == {
        ("acme-pricing-001", "acme-faq-billing"): 2,
        ("acme-warranty-001", "acme-returns-policy"): None,
        ("globex-pricing-001", "globex-faq-billing"): 2,
        ("globex-pricing-001", "globex-faq-general"): 1,
    }
    assert pool.header["suggestions"]["model"] == "stub-model"
    assert "model suggestions: 3 of 4" in capsys.readouterr().out
    # suggestions are not labels: a merge of no judgments has none of them
    humans = {"ana": [2, 2, 2], "bob": [1, 2, 3]}
    keys = [
        ("acme-pricing-001", "acme-faq-billing"),
        ("globex-pricing-001", "globex-faq-billing"),
        ("globex-pricing-001", "globex-faq-general"),
    ]
    files = []
    for name, grades in humans.items():
        log = JudgmentLog(tmp_path / f"{name}.jsonl", name, {"pool": str(out)})
        for (case_id, chunk_id), grade in zip(keys, grades, strict=True):
            log.append(
                {
                    "kind": "grade",
                    "case_id": case_id,
                    "chunk_id": chunk_id,
                    "tenant_id": "t",
                    "grade": grade,
                    "superseded": False,
                }
            )
        log.close()
        files.append(str(tmp_path / f"{name}.jsonl"))
    report_path = tmp_path / "agreement.json"
    assert main(["agreement", *files, "--pool", str(out), "--out", str(report_path)]) == 0
    printed = capsys.readouterr().out
    assert "model suggestions vs annotators" in printed
    model = {m["annotator"]: m for m in json.loads(report_path.read_text())["model"]}
    suggested = [2, 2, 1]
    for name, grades in humans.items():
        assert model[name]["items"] == 3
        expected = sklearn_kappa(suggested, grades, weights="quadratic")
        assert model[name]["kappa"] == pytest.approx(expected, abs=1e-12)
    assert model["ana"]["exact"] == pytest.approx(2 / 3)


def test_agreement_pool_without_suggestions_says_not_verified(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from label_fixtures import small_pool

    pool = small_pool(tmp_path)
    files = []
    for name in ("ana", "bob"):
        log = JudgmentLog(tmp_path / f"{name}.jsonl", name, {})
        log.append({"kind": "grade", "case_id": "q", "chunk_id": "d", "grade": 1, "superseded": False})
        log.close()
        files.append(str(tmp_path / f"{name}.jsonl"))
    capsys.readouterr()
    assert main(["agreement", *files, "--pool", str(pool)]) == 0
    assert "not verified" in capsys.readouterr().out
