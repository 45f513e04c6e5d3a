"""``ragaudit check-answers`` and ``ragaudit context`` end to end: answers files, a built pipeline, run
files, eval reports, and answering / judging through a real local OpenAI-compatible HTTP server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import KB, write_lines
from openai_stub import OpenAIStub
from ragaudit.cli.main import main

GOLDEN = str(KB / "golden.jsonl")
CORPUS = str(KB / "corpus.jsonl")
ANSWERS = str(KB / "answers_demo.jsonl")
SUBSET = ("acme-warranty-001", "acme-pricing-001", "acme-unanswerable-001")
RUN = {
    "acme-warranty-001": [("acme-warranty-policy-v1", 9.0), ("acme-warranty-policy-v2", 8.0)],
    "acme-pricing-001": [("acme-pricing-professional-v3", 12.0), ("acme-faq-api", 7.0)],
    "acme-unanswerable-001": [("acme-pricing-enterprise-v1", 3.0), ("acme-marketing-homepage", 2.0)],
}


def subset_files(tmp_path: Path) -> tuple[str, str]:
    """A three-case golden file and a JSONL run for it."""
    lines = [line for line in Path(GOLDEN).read_text().splitlines() if json.loads(line)["id"] in SUBSET]
    golden = write_lines(tmp_path / "golden.jsonl", lines)
    run = write_lines(
        tmp_path / "run.jsonl",
        [
            json.dumps({"id": cid, "retrieved": [{"chunk_id": d, "score": s} for d, s in items]})
            for cid, items in RUN.items()
        ],
    )
    return str(golden), str(run)


def by_id(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["id"]: e for e in report["per_case"]}


def test_check_answers_over_a_bm25_pipeline_with_the_planted_answers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report.json"
    args = ["check-answers", "--dataset", GOLDEN, "--corpus", CORPUS, "--pipeline", "bm25"]
    code = main([*args, "--answers", ANSWERS, "--no-embeddings", "--out", str(out)])
    text = capsys.readouterr().out
    assert code == 0
    assert "attribution faithful_to_bad_context" in text and "abstention AUROC" in text
    report = json.loads(out.read_text())  # strict JSON: no NaN
    assert report["kind"] == "check-answers"
    cases = by_id(report)
    for row in map(json.loads, Path(ANSWERS).read_text().splitlines()):
        entry = cases[row["id"]]
        assert {"grounded", "unsupported", "attribution", "context_quality"} <= set(entry)
        if "expect" in row:
            assert entry["attribution"] == row["expect"], (row["id"], entry["attribution_reason"])
            assert entry["context_quality"]["source"] == "answers"
    lesson = cases["acme-warranty-001"]
    assert lesson["grounded"] is True and lesson["correct"] is False
    assert cases["acme-pricing-001"]["unsupported"][0]["claim"] == "75,000"
    counts = report["attribution"]["counts"]
    assert sum(counts.values()) == 84 and min(counts.values()) >= 1
    assert report["groundedness"]["answers_from"]["sha256"]
    assert report["context_quality"]["settings"]["k"] == 5
    assert 0.5 < report["abstention"]["retrieval"]["auroc"] <= 1.0
    assert report["abstention"]["generated"]["unanswerable"] == 9
    assert report["metrics"]["nDCG@10"] > 0  # the eval report is kept, augmented


def test_context_command_on_an_eval_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    golden, run = subset_files(tmp_path)
    report_path, out = tmp_path / "eval.json", tmp_path / "context.json"
    assert main(["eval", "--dataset", golden, "--run", run, "--out", str(report_path)]) == 0
    args = ["context", "--dataset", golden, "--corpus", CORPUS, "--report", str(report_path)]
    assert main([*args, "--k", "1", "--out", str(out)]) == 0
    capsys.readouterr()
    report = json.loads(out.read_text())
    warranty = by_id(report)["acme-warranty-001"]["context_quality"]
    assert warranty["chunk_ids"] == ["acme-warranty-policy-v1"]
    assert (warranty["staleness"], warranty["evidence_present"], warranty["precision_chunks"]) == (
        1.0,
        False,
        0.0,
    )
    retrieval = report["abstention"]["retrieval"]
    assert retrieval["auroc"] == 1.0 and retrieval["best_threshold"]["threshold"] == 9.0
    # v1 (superseded) only: a page judged irrelevant (grade 0) is not a stale version
    assert report["context_quality"]["summary"]["cases_with_stale_chunks"] == 1


@pytest.mark.slow
def test_embedding_support_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    golden, run = subset_files(tmp_path)
    answers = write_lines(
        tmp_path / "a.jsonl",
        [
            '{"id": "acme-pricing-001", "answer": "50,000 API calls per month."}',
            '{"id": "acme-warranty-001", "answer": "Twelve months."}',
            '{"id": "acme-unanswerable-001", "answer": ""}',
        ],
    )
    out = tmp_path / "r.json"
    args = ["check-answers", "--dataset", golden, "--corpus", CORPUS, "--run", run]
    assert main([*args, "--answers", str(answers), "--out", str(out)]) == 0
    capsys.readouterr()
    report = json.loads(out.read_text())
    assert report["groundedness"]["embedding_model"].startswith("all-MiniLM-L6-v2@")
    sentence = by_id(report)["acme-pricing-001"]["groundedness"]["sentences"][0]
    assert 0.0 < sentence["embedding"] <= 1.0 and sentence["supported"]


def test_a_broken_answers_file_names_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    golden, run = subset_files(tmp_path)
    answers = write_lines(
        tmp_path / "answers.jsonl",
        [
            '{"id": "acme-warranty-001", "answer": "24 months"}',
            '{"id": "acme-pricing-001", "answer": 50000}',
            '{"id": "acme-warranty-001", "answer": "again"}',
            "{broken",
        ],
    )
    args = ["check-answers", "--dataset", golden, "--corpus", CORPUS, "--run", run, "--answers", str(answers)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"{answers}:2: 'answer' must be a string" in err
    assert f"{answers}:3: duplicate id 'acme-warranty-001' (first on line 1)" in err
    assert f"{answers}:4: malformed JSON" in err
    assert "Traceback" not in err


def test_missing_answers_are_counted_not_attributed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    golden, run = subset_files(tmp_path)
    answers = write_lines(
        tmp_path / "a.jsonl", ['{"id": "acme-pricing-001", "answer": "50,000 API calls per month."}']
    )
    out = tmp_path / "r.json"
    args = ["check-answers", "--dataset", golden, "--corpus", CORPUS, "--run", run]
    # 2 of 3 cases have no answer: they were not checked, so the run fails (the report is written)
    assert main([*args, "--answers", str(answers), "--no-embeddings", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert f"FAILED answers (--answers {answers}): 2 of 3 cases failed (66.7%" in err
    assert f"acme-warranty-001: no answer for this case in {answers}" in err
    assert "by kind: 2 no answer" in err and "fix (no answer): give every case of --dataset an answer" in err
    tolerated = [*args, "--answers", str(answers), "--no-embeddings", "--max-error-rate", "0.7"]
    assert main([*tolerated, "--out", str(out)]) == 0  # asked to tolerate: exit 0, still counted
    capsys.readouterr()
    report = json.loads(out.read_text())
    cases = by_id(report)
    assert cases["acme-pricing-001"]["attribution"] == "success"
    assert cases["acme-warranty-001"]["attribution"] is None
    assert report["groundedness"]["no_answer"] == 2


def scripted(body: dict[str, Any]) -> str:
    """Answers by question; judge verdicts by trial (two 'supported', one not: a visible spread)."""
    messages = body["messages"]
    prompt = messages[-1]["content"]
    if messages[0]["role"] == "system" and "fact checker" in messages[0]["content"]:
        return '{"supported": false}' if "trial 3 of 3" in messages[0]["content"] else '{"supported": true}'
    if "warranty" in prompt.lower():
        return "The warranty is 12 months from the date of delivery."
    if "API limit" in prompt:
        return "The Professional plan includes 50,000 API calls per month."
    return "I don't know based on the provided context."


def test_answers_and_advisory_judge_from_an_openai_compatible_endpoint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    golden, run = subset_files(tmp_path)
    out = tmp_path / "report.json"
    with OpenAIStub(responder=scripted) as stub:
        args = ["check-answers", "--dataset", golden, "--corpus", CORPUS, "--run", run, "--k", "1"]
        args += ["--endpoint", stub.base_url, "--model", "stub-model", "--judge", "--no-embeddings"]
        assert main([*args, "--out", str(out)]) == 0
        sent = len(stub.requests)
        assert main([*args, "--out", str(out)]) == 0  # a second run is answered from the cache
        assert len(stub.requests) == sent
    capsys.readouterr()
    answer_prompts = [r.prompt for r in stub.requests if "fact checker" not in r.prompt]
    assert len(answer_prompts) == 3
    warranty_prompt = next(p for p in answer_prompts if "warranty" in p.lower())
    assert (
        "[1] Fieldsense hardware warranty" in warranty_prompt or "12 months from the date" in warranty_prompt
    )
    report = json.loads(out.read_text())
    cases = by_id(report)
    warranty = cases["acme-warranty-001"]
    assert warranty["answer"] == "The warranty is 12 months from the date of delivery."
    assert warranty["attribution"] == "faithful_to_bad_context"  # top-1 was the superseded policy
    assert cases["acme-pricing-001"]["attribution"] == "success"
    assert cases["acme-unanswerable-001"]["declined"] is True
    assert cases["acme-unanswerable-001"]["attribution"] == "success"
    judge = warranty["judge"]
    assert judge["advisory"] is True
    assert judge["votes"] == [True, True, False]
    assert judge["supported_share"] == pytest.approx(2 / 3)
    assert judge["variance"] == pytest.approx(2 / 9)
    assert "judge" not in cases["acme-unanswerable-001"]  # declines are not judged
    assert report["groundedness"]["judge"]["advisory"] is True
    assert report["groundedness"]["answers_from"]["endpoint"]["model"] == "stub-model"
    assert report["abstention"]["generated"]["abstention_rate"] == 1.0


def test_endpoint_needs_a_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    golden, run = subset_files(tmp_path)
    args = ["check-answers", "--dataset", golden, "--corpus", CORPUS, "--run", run]
    assert main([*args, "--endpoint", "http://127.0.0.1:9/v1"]) == 2
    assert "--model" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("flag", "value"), [("--k", "0"), ("--token-budget", "-5"), ("--duplicate-threshold", "1.5")]
)
def test_bad_context_options_are_input_errors(
    flag: str, value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    golden, run = subset_files(tmp_path)
    assert main(["context", "--dataset", golden, "--corpus", CORPUS, "--run", run, flag, value]) == 2
    err = capsys.readouterr().err
    assert f"argument {flag}: must be" in err and "Traceback" not in err  # refused when parsed


def test_answers_that_match_no_case_check_nothing_and_fail(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    golden, run = subset_files(tmp_path)
    answers = write_lines(tmp_path / "a.jsonl", ['{"id": "another-dataset-001", "answer": "42"}'])
    args = ["check-answers", "--dataset", golden, "--corpus", CORPUS, "--run", run, "--no-embeddings"]
    assert main([*args, "--answers", str(answers), "--max-error-rate", "1"]) == 1
    err = capsys.readouterr().err
    assert "no case could be scored: every answer failed or is missing" in err
