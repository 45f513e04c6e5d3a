"""CLI hygiene (issue 23 item 6): no option is taken as the abbreviation of another; ``power`` says when
the power cannot be estimated and takes comma-separated metrics; ``check-answers`` and ``context`` say
which chunks they scored; ``validate`` checks a run file as a run."""

from __future__ import annotations

import argparse
import ast
import json
from pathlib import Path

import pytest

from conftest import KB
from ragaudit.cli.main import build_parser, main
from ragaudit.stats.power import estimate_power

SRC = Path(__file__).resolve().parents[1] / "src" / "ragaudit"
GOLDEN = str(KB / "golden.jsonl")
CORPUS = str(KB / "corpus.jsonl")


def _parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                found += _parsers(child)
    return found


def test_every_parser_refuses_abbreviations() -> None:
    parsers = _parsers(build_parser())
    assert len(parsers) > 20
    assert [p.prog for p in parsers if p.allow_abbrev] == []
    # parsers built elsewhere in the package (cmd_demo builds bench's) say so too
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) in (
                "ArgumentParser",
                "add_parser",
            ):
                keywords = {k.arg: k.value for k in node.keywords}
                value = keywords.get("allow_abbrev")
                assert isinstance(value, ast.Constant) and value.value is False, f"{path}:{node.lineno}"


def test_bench_out_dash_is_a_usage_error_not_a_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code = main(["bench", "--dataset", GOLDEN, "--corpus", CORPUS, "--pipelines", "bm25", "--out", "-"])
    assert code == 2
    assert "unrecognized arguments: --out -" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_zero_spread_says_the_power_cannot_be_estimated() -> None:
    flat = estimate_power([0.0] * 40, 0.02)
    assert flat.cases_needed is None and not flat.estimable and "zero spread" in (flat.reason or "")
    assert flat.to_json()["smallest_detectable_delta"] is None and flat.to_json()["estimable"] is False
    spread = estimate_power([0.0, 0.1, -0.1, 0.05] * 10, 0.02)
    assert spread.estimable and spread.cases_needed is not None and spread.cases_needed > 2


def _eval(tmp_path: Path, name: str, pipeline: str) -> Path:
    out = tmp_path / f"{name}.json"
    argv = ["eval", "--dataset", GOLDEN, "--corpus", CORPUS, "--pipeline", pipeline, "--out", str(out)]
    assert main([*argv, "--no-history", "--quiet", "--metrics", "Hit@5,R@10,nDCG@10"]) == 0
    return out


def test_power_takes_comma_separated_metrics_and_names_an_unestimable_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bm25 = _eval(tmp_path, "bm25", "bm25")
    again = _eval(tmp_path, "again", "bm25")  # the same system: every per-case difference is 0
    out = tmp_path / "power.json"
    code = main(["power", str(again), "--baseline", str(bm25), "--metric", "hit@5,R@10", "--out", str(out)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "Hit@5: power cannot be estimated" in printed and "R@10: power cannot be estimated" in printed
    assert "cases for delta 0.02" in printed and " 2 " not in printed.split("\n")[2]
    figures = {m["metric"]: m for m in json.loads(out.read_text())["metrics"]}
    assert set(figures) == {"Hit@5", "R@10"}
    assert all(m["cases_needed"] is None and m["estimable"] is False for m in figures.values())


def test_check_answers_and_context_say_which_chunks_they_scored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ctx, answers = tmp_path / "ctx.json", tmp_path / "answers.json"
    base = ["--dataset", GOLDEN, "--corpus", CORPUS, "--pipeline", "bm25"]
    main(["context", *base, "--out", str(ctx)])
    context_out = capsys.readouterr().out
    assert "context figures scored the retrieved top 5 for 84 case(s)" in context_out
    main(["check-answers", *base, "--answers", str(KB / "answers_demo.jsonl"), "--out", str(answers)])
    answers_out = capsys.readouterr().out
    said = "context figures scored the answers file's context_chunk_ids for 17 case(s) and the retrieved top 5 for 67 case(s)"
    assert said in answers_out
    scored = json.loads(answers.read_text())["context_quality"]["settings"]["scored_chunks"]
    assert scored["answers"] == 17 and scored["retrieved"] == 67 and scored["text"] == said
    assert json.loads(ctx.read_text())["context_quality"]["settings"]["scored_chunks"]["answers"] == 0


def test_validate_checks_a_trec_run_and_a_jsonl_run_as_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trec = tmp_path / "run.trec"
    trec.write_text(
        "# a comment\nq1 Q0 acme-faq-api 1 1.5 mine\nq1 Q0 nowhere 2 0.5 mine\nq2 Q0 acme-faq-api 1 x mine\n",
        encoding="utf-8",
    )
    assert main(["validate", str(trec), "--corpus", CORPUS]) == 1
    out = capsys.readouterr().out
    assert "read as a trec run: 1 case(s), 2 result(s)" in out  # the bad line is not counted
    assert "is not an integer" not in out  # not read as qrels
    assert ":4:" in out and "nowhere" in out  # the bad score, by line; the unknown id, as a warning
    jsonl = tmp_path / "run.jsonl"
    jsonl.write_text(
        '{"id": "acme-pricing-001", "retrieved": [{"chunk_id": "acme-faq-api", "score": 1.0}]}\n'
        '{"id": "acme-pricing-002", "error": "timeout"}\n',
        encoding="utf-8",
    )
    assert main(["validate", str(jsonl), "--dataset", GOLDEN]) == 0
    out = capsys.readouterr().out
    assert "read as a jsonl run: 2 case(s), 1 result(s), 1 case(s) recorded as failed" in out
    assert "2 of 84 dataset case(s) answered" in out and "82 case(s) of the dataset have no result" in out
    assert main(["validate", GOLDEN]) == 0
    assert "read as" not in capsys.readouterr().out  # a golden set stays a dataset
    stray = tmp_path / "stray.jsonl"
    stray.write_text(
        jsonl.read_text(encoding="utf-8") + '{"id": "acme-pricing-00l", "retrieved": ["acme-faq-api"]}\n',
        encoding="utf-8",
    )
    assert main(["validate", str(stray), "--dataset", GOLDEN]) == 0  # a warning: eval ignores the case
    out = capsys.readouterr().out
    assert "warning: 1 run case(s) are not in the dataset" in out and "'acme-pricing-00l'" in out
