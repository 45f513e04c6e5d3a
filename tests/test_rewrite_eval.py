"""Query-rewrite evaluation on the demo knowledge base: constraint loss, metric deltas, latency, CLI."""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from conftest import KB
from openai_stub import OpenAIStub
from ragaudit.cli.main import main
from ragaudit.corpus.loading import load_corpus
from ragaudit.data.loading import load_dataset
from ragaudit.data.schema import Dataset
from ragaudit.errors import ValidationError
from ragaudit.evaluation.live import RunOptions
from ragaudit.experiments.entities import Vocabulary
from ragaudit.experiments.rewrite_eval import RewriteEvaluation, evaluate_rewrite, rewrite_stage
from ragaudit.metrics.names import parse_metrics
from ragaudit.metrics.policy import Policy
from ragaudit.pipelines.config import preset
from ragaudit.report.terminal import render_terminal
from ragaudit.runner.executor import LocalExecutor

SPECS = parse_metrics("R@5,nDCG@10")
LLM_ANSWERS = {
    # drops "pro" (and so finds the Professional plan page): flagged although recall improves
    "pro plan api limit how much?": "What is the monthly API call limit of the Professional plan?",
    # the brief's swap: another plan entirely
    "Can we get SSO on the Professional plan?": "Can we get SSO on the Enterprise plan?",
    "What is the refund window for an annual plan?": "refund policy",
}


def reject(constant: str) -> None:
    raise ValueError(f"{constant} is not JSON")


def answer(body: dict[str, Any]) -> str:
    prompt = "\n".join(str(m.get("content", "")) for m in body["messages"])
    query = re.findall(r"Query: (.*)", prompt)[-1].strip()
    return LLM_ANSWERS.get(query, query)


def pricing_and_refunds() -> Dataset:
    """The 28 pricing and refund cases of the demo set (an LLM round trip per case costs time)."""
    full = load_dataset(KB / "golden.jsonl")
    return replace(full, cases=tuple(c for c in full.cases if re.search(r"-(pricing|refund)-", c.id)))


def run_eval(
    stage: dict[str, Any],
    vocabulary: Vocabulary | None = None,
    dataset: Dataset | None = None,
    concurrency: int = 1,
    **kwargs: Any,
) -> RewriteEvaluation:
    return asyncio.run(
        evaluate_rewrite(
            dataset or load_dataset(KB / "golden.jsonl"),
            load_corpus(KB / "corpus.jsonl"),
            preset("bm25"),
            rewrite_stage(stage, "test"),
            SPECS,
            Policy(),
            RunOptions(top_k=10, concurrency=concurrency, progress=False),
            vocabulary=vocabulary,
            resamples=1000,
            **kwargs,
        )
    )


@pytest.fixture(scope="module")
def llm_eval() -> tuple[RewriteEvaluation, int]:
    with OpenAIStub(responder=answer) as stub:
        stage = {"type": "llm", "base_url": stub.base_url, "model": "stub"}
        result = run_eval(stage, dataset=pricing_and_refunds(), concurrency=4)
        return result, len(stub.requests)


def test_llm_rewrite_flags_lost_entities_even_when_recall_improves(
    llm_eval: tuple[RewriteEvaluation, int],
) -> None:
    result, requests = llm_eval
    assert requests == 28  # one rewrite per case; the warm-up queries the first stage only
    cases = {c.id: c for c in result.cases}
    pro = cases["acme-pricing-002"]
    assert pro.sent == LLM_ANSWERS["pro plan api limit how much?"] and pro.changed
    assert pro.flagged and [c.text for c in pro.check.lost] == ["pro"]  # type: ignore[union-attr]
    assert pro.delta("R@5") > 0  # the rewrite found the page: flagged anyway
    swap = cases["initech-pricing-006"]
    assert [(a.text, b.text) for a, b in swap.check.swapped] == [("Professional", "Enterprise")]  # type: ignore[union-attr]
    refund = cases["acme-refund-001"]
    assert [c.text for c in refund.check.lost] == ["annual"]  # type: ignore[union-attr]
    unchanged = cases["acme-pricing-001"]
    assert not unchanged.changed and not unchanged.flagged and unchanged.check.preserved  # type: ignore[union-attr]

    report = result.to_dict()
    assert report["kind"] == "rewrite-eval" and report["schema_version"] == 1
    for key in ("ragaudit_version", "created_at", "dataset", "policy", "corpus", "pipelines", "per_case"):
        assert key in report
    summary = report["constraints"]
    assert summary["rewritten"] == 5  # three queries, two of them asked in three tenants
    assert summary["flagged"] == 5 and summary["flagged_with_gain"] >= 1
    assert summary["lost_by_kind"] == {"entity": 5}
    row = next(r for r in report["per_case"] if r["id"] == "acme-pricing-002")
    assert row["flagged"] and row["flagged_with_gain"] and row["rewritten_query"] == pro.sent
    assert row["constraints"]["lost"] == [{"kind": "entity", "text": "pro", "key": "pro", "slot": "plan"}]
    assert row["latency_ms"]["rewriter"] > 0 and row["latency_ms"]["added"] is not None
    assert "FLAG acme-pricing-002" in render_terminal(result.to_dict())


def test_vocabulary_aliases_clear_a_rewrite_that_spells_the_plan_out() -> None:
    with OpenAIStub(responder=answer) as stub:
        result = run_eval(
            {"type": "llm", "base_url": stub.base_url, "model": "stub"},
            Vocabulary.from_lines(["Professional | Pro"]),
            pricing_and_refunds(),
            concurrency=4,
        )
    flagged = {c.id for c in result.flagged()}
    assert "acme-pricing-002" not in flagged and "initech-pricing-006" in flagged


def test_metric_deltas_come_with_paired_significance_and_latency(
    llm_eval: tuple[RewriteEvaluation, int],
) -> None:
    result, _ = llm_eval
    report = result.to_dict()
    rows = {c["metric"]: c for c in report["comparisons"]}
    assert set(rows) == {"R@5", "nDCG@10"}
    answerable = report["counts"]["baseline"]["answerable"]
    assert answerable == 28  # no unanswerable probe among them
    for metric, row in rows.items():
        delta = report["metrics"]["rewrite"][metric] - report["metrics"]["baseline"][metric]
        assert row["delta"] == pytest.approx(delta)
        assert 0.0 <= row["p_value_corrected"] <= 1.0 and row["n"] == answerable
        assert row["wins"] + row["ties"] + row["losses"] == answerable
    # only five queries changed: the differences are far from significant
    assert not any(row["significant"] for row in rows.values())
    latency = report["latency_ms"]
    assert latency["paired_cases"] == 28
    assert latency["rewriter"]["mean"] > 0  # an HTTP round trip per query
    assert latency["added"]["mean"] == pytest.approx(latency["rewrite"]["mean"] - latency["baseline"]["mean"])
    assert report["retrieval"]["batched"] is False


def test_rule_based_rewrites_keep_every_constraint_and_write_both_reports(tmp_path: Path) -> None:
    result = run_eval({"type": "rm3", "fb_docs": 5, "fb_terms": 5}, report_dir=tmp_path)
    summary = result.constraint_summary()
    assert summary["rewritten"] > 70 and summary["flagged"] == 0  # RM3 keeps the query verbatim, adds terms
    baseline = json.loads((tmp_path / "baseline.json").read_text())
    rewritten = json.loads((tmp_path / "rewrite.json").read_text())
    assert baseline["kind"] == rewritten["kind"] == "eval"
    assert baseline["dataset"]["sha256"] == rewritten["dataset"]["sha256"]
    assert rewritten["pipeline"]["config"]["rewrite"]["type"] == "rm3"
    assert "rewrite" not in baseline["pipeline"]["config"]


def test_the_local_executor_is_the_plain_evaluation(tmp_path: Path) -> None:
    """``executor=LocalExecutor()`` evaluates in this process: the same figures and reports as no
    executor, and no executor in the provenance (the Ray path: tests/test_scale_ray.py)."""
    stage = {"type": "rm3", "fb_docs": 5, "fb_terms": 5}
    plain = run_eval(stage, report_dir=tmp_path / "plain").to_dict()
    local = run_eval(stage, report_dir=tmp_path / "local", executor=LocalExecutor()).to_dict()
    assert "executor" not in local["provenance"]
    assert local["metrics"] == plain["metrics"] and local["constraints"] == plain["constraints"]
    assert [c["rewritten_query"] for c in local["per_case"]] == [
        c["rewritten_query"] for c in plain["per_case"]
    ]
    for name in ("baseline.json", "rewrite.json"):
        a, b = (json.loads((tmp_path / d / name).read_text()) for d in ("plain", "local"))
        assert a["metrics"] == b["metrics"]


def test_bad_rewrite_table_names_the_key() -> None:
    with pytest.raises(ValidationError) as err:
        rewrite_stage({"type": "rm3", "fb_doc": 3}, "r.toml")
    assert "fb_doc" in str(err.value) and "fb_docs" in str(err.value)


# ------------------------------------------------------------------------------------------ CLI


def test_cli_synonym_rewrite_writes_the_artifact(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    synonyms = tmp_path / "syn.json"
    synonyms.write_text(json.dumps({"pro": ["professional"], "refnud": ["refund"]}), encoding="utf-8")
    out = tmp_path / "rw.json"
    code = main(
        [
            "eval-rewrite",
            "--dataset",
            str(KB / "golden.jsonl"),
            "--corpus",
            str(KB / "corpus.jsonl"),
            "--synonyms",
            str(synonyms),
            "--metrics",
            "R@5",
            "--resamples",
            "500",
            "--no-progress",
            "--out",
            str(out),
        ]
    )
    text = capsys.readouterr().out
    assert code == 0 and "R@5" in text and "flagged (lost something)" in text
    assert re.search(r"^rewrites +84 +\d+ +0 ", text, re.M), text
    report = json.loads(out.read_text(), parse_constant=reject)  # strict JSON: no NaN
    assert report["kind"] == "rewrite-eval" and report["rewriter"].startswith("synonyms")
    assert report["provenance"]["pipeline"]["name"] == "bm25+rewrite"
    assert report["provenance"]["dataset_sha256"] == report["dataset"]["sha256"]
    assert report["constraints"]["rewritten"] >= 4


def test_cli_rewrite_file_and_missing_rewrite_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = ["eval-rewrite", "--dataset", str(KB / "golden.jsonl"), "--corpus", str(KB / "corpus.jsonl")]
    assert main([*common, "--out", str(tmp_path / "x.json")]) == 2
    assert "no rewrite stage to evaluate" in capsys.readouterr().err
    bad = tmp_path / "r.toml"
    bad.write_text('[rewrite]\ntype = "rm3"\nterms = 3\n', encoding="utf-8")
    assert main([*common, "--rewrite", str(bad), "--out", str(tmp_path / "x.json")]) == 2
    err = capsys.readouterr().err
    assert "terms" in err and "fb_terms" in err and "Traceback" not in err
    broken = tmp_path / "broken.toml"
    broken.write_text("[rewrite\n", encoding="utf-8")
    assert main([*common, "--rewrite", str(broken)]) == 2
    assert f"{broken}" in capsys.readouterr().err
