"""Holes in the judgments and power in the reports: Judged@k per system in eval, compare and bench
(terminal, JSON, Markdown, HTML), the --min-judged warning naming the worst cases, --require-judged's
exit code, and each comparison's power figures (the same as ``ragaudit power --baseline``)."""

from __future__ import annotations

import asyncio
import json
import math
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import ragaudit
from conftest import KB
from ragaudit.artifacts.envelope import schema_errors
from ragaudit.cli.main import main
from ragaudit.data.schema import Dataset, GoldenCase
from ragaudit.evaluation.compare import load_report
from ragaudit.evaluation.holes import judged_k, report_holes
from ragaudit.evaluation.live import RunOptions
from ragaudit.experiments.benchmark import run_benchmark
from ragaudit.metrics.names import parse_metrics
from ragaudit.metrics.policy import Policy
from ragaudit.pipelines.config import parse_pipeline, preset
from ragaudit.report.markdown import render_markdown
from ragaudit.report.terminal import render_terminal
from ragaudit.report.view import build_view
from ragaudit.stats.power import estimate_power

QRELS = {"q1": {"a": 1, "b": 0}, "q2": {"c": 2}, "q3": {"d": 1}, "q4": {"e": 0}, "q5": {"f": 1}}
HOLEY = {"q1": ["a", "b", "x", "y"], "q2": ["c"], "q3": ["z1", "z2", "d"], "q4": ["e", "w"]}
POOLED = {"q1": ["a", "b"], "q2": ["c"], "q3": ["d"], "q4": ["e"], "q5": ["f"]}


def dataset() -> Dataset:
    cases = tuple(GoldenCase(q, f"query {q}", None, grades) for q, grades in QRELS.items())
    return Dataset(cases, "in-memory", "0" * 64, "qrels")


def html(report: dict[str, Any]) -> str:
    from ragaudit.report.html import render_html

    return render_html(build_view(json.loads(json.dumps(report)), resamples=200))


def test_the_k_is_the_first_cut_off_else_10() -> None:
    assert judged_k(parse_metrics("MAP,nDCG@3,R@100")) == 3
    assert judged_k(parse_metrics("MAP,MRR")) == 10


def test_an_eval_report_gives_judged_at_k_and_warns_naming_the_worst_cases() -> None:
    result = ragaudit.evaluate(dataset(), HOLEY, "nDCG@4,R@10")
    report = result.to_dict()
    holes = report["holes"]
    # q1: a, b judged of 4 returned; q2: 1 of 1; q3: d of 3; q4 unanswerable, q5 missing: not measured
    assert {c["id"]: c.get("judged") for c in report["per_case"]} == {
        "q1": 0.5,
        "q2": 1.0,
        "q3": pytest.approx(1 / 3),
        "q4": None,
        "q5": None,
    }
    assert holes["k"] == 4 and holes["cases"] == 3 and holes["below"] == 2
    assert holes["judged"] == pytest.approx((0.5 + 1 + 1 / 3) / 3)
    assert holes["status"] == "incomplete"
    assert [w["id"] for w in holes["worst"]] == ["q3", "q1"]  # worst first
    warning = holes["warning"]
    assert "lower bounds" in warning and "biased" in warning
    assert "2 case(s) under 80%, worst: q3 (33%), q1 (50%). Its scores are lower bounds" in warning
    assert report["notes"] == [f"incomplete judgments: {warning}"]
    assert schema_errors(json.loads(json.dumps(report))) == []
    terminal = render_terminal(report)
    assert "Judged@4: 61.1% of the top 4 judged" in terminal and "scores are lower bounds" in terminal
    assert "worst: q3 (33%), q1 (50%)" in terminal  # the note
    markdown = render_markdown(build_view(report, resamples=200))
    assert "Judged@4: 61.1% of the top 4 judged" in markdown and "worst: q3 (33.3%), q1 (50.0%)" in markdown
    page = html(report)
    holes = page[page.index('<section id="holes">') :]
    holes = holes[: holes.index("</section>")]
    assert "scores are lower bounds" in holes and "q3 (33.3%)" in holes


def test_a_top_k_judged_enough_passes_without_a_warning() -> None:
    full = ragaudit.evaluate(dataset(), POOLED, "nDCG@10").to_dict()
    assert full["holes"]["status"] == "complete" and full["holes"]["judged"] == 1.0
    assert full["holes"]["warning"] is None and full["notes"] == []
    lenient = replace(ragaudit.evaluate(dataset(), HOLEY, "nDCG@4"), min_judged=0.5).to_dict()["holes"]
    assert lenient["status"] == "complete" and lenient["below"] == 1 and lenient["warning"] is None


def test_an_older_report_is_measured_from_its_retrieved_lists() -> None:
    report = ragaudit.evaluate(dataset(), HOLEY, "nDCG@4").to_dict()
    written = report_holes(report, "x", 0.8)
    del report["holes"]
    for case in report["per_case"]:
        case.pop("judged", None)
    older = report_holes(report, "x", 0.8)
    assert older == written and older.judged == pytest.approx((0.5 + 1 + 1 / 3) / 3)


def write_trec(tmp_path: Path, run: dict[str, list[str]], name: str) -> Path:
    path = tmp_path / f"{name}.trec"
    lines = [f"{q} Q0 {d} {i} {len(ids) - i} {name}" for q, ids in run.items() for i, d in enumerate(ids, 1)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def qrels_file(tmp_path: Path) -> Path:
    path = tmp_path / "qrels.txt"
    path.write_text("".join(f"{q} 0 {d} {g}\n" for q, gr in QRELS.items() for d, g in gr.items()))
    return path


def test_the_fast_engine_says_judged_was_not_measured(tmp_path: Path) -> None:
    from ragaudit.evaluation.fast_trec import evaluate_trec_files

    fast = evaluate_trec_files(qrels_file(tmp_path), write_trec(tmp_path, HOLEY, "holey"), "nDCG@4")
    holes = fast.to_eval_result().to_dict()["holes"]
    assert holes["status"] == "not_measured" and holes["judged"] is None
    assert "not measured (the --fast TREC engine keeps no per-case result lists)" in holes["warning"]


def test_eval_warns_but_exits_0_unless_judged_is_required(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [
        "eval",
        "--dataset",
        str(qrels_file(tmp_path)),
        "--run",
        str(write_trec(tmp_path, HOLEY, "holey")),
    ]
    argv += ["--metrics", "nDCG@4", "--no-history", "--max-error-rate", "1", "--fast", "off"]
    assert main(argv) == 0
    assert "note: incomplete judgments: holey: only 61.1% of the top 4 is judged" in capsys.readouterr().out
    assert main([*argv, "--require-judged"]) == 1
    assert "--require-judged: holey: incomplete (Judged@4 under --min-judged 0.8)" in capsys.readouterr().err
    assert main([*argv, "--require-judged", "--min-judged", "0.6"]) == 0
    assert main([*argv, "--fast", "on", "--require-judged", "--min-judged", "0.6"]) == 1  # not measured
    assert "holey: not measured" in capsys.readouterr().err
    assert main([*argv, "--min-judged", "1.5"]) == 2


def eval_reports(tmp_path: Path) -> tuple[Path, Path]:
    pooled, holey = tmp_path / "pooled.json", tmp_path / "holey.json"
    ragaudit.evaluate(dataset(), POOLED, "nDCG@4,MRR", Policy()).write_json(pooled)
    ragaudit.evaluate(dataset(), HOLEY, "nDCG@4,MRR", Policy()).write_json(holey)
    return pooled, holey


def test_compare_shows_each_systems_judged_share_and_power(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pooled, holey = eval_reports(tmp_path)
    out = tmp_path / "compare.json"
    argv = ["compare", str(pooled), str(holey), "--resamples", "200", "--out", str(out)]
    assert main(argv) == 1  # their runs lack cases of the dataset: a failed run makes no verdict
    assert main([*argv, "--max-error-rate", "1"]) == 0  # tolerated, as eval's own test does
    terminal = capsys.readouterr().out
    report = json.loads(out.read_text())
    assert schema_errors(report) == []
    assert [(h["system"], h["status"]) for h in report["holes"]] == [
        ("pooled", "complete"),
        ("holey", "incomplete"),
    ]
    assert any("lower bounds" in note for note in report["notes"])  # beside the failed-run note
    assert "WARNING incomplete judgments" in terminal and "LOWER BOUND" in terminal
    assert "smallest detectable" in terminal and "cases for delta 0.02" in terminal
    base, system = load_report(pooled), load_report(holey)
    for row in report["comparisons"]:
        a, b = base.per_case(row["metric"]), system.per_case(row["metric"])
        diffs = [b[i] - a[i] for i in sorted(set(a) & set(b))]
        expected = estimate_power(diffs, 0.02, 0.05, 0.8).to_json()
        assert row["power"]["cases_needed"] == expected["cases_needed"]
        assert row["power"]["smallest_detectable_delta"] == pytest.approx(
            expected["smallest_detectable_delta"]
        )
    # the same figures as `ragaudit power --baseline`
    power_out = tmp_path / "power.json"
    assert (
        main(["power", str(holey), "--baseline", str(pooled), "--metric", "MRR", "--out", str(power_out)])
        == 0
    )
    mrr = next(r for r in report["comparisons"] if r["metric"] == "MRR")["power"]
    assert json.loads(power_out.read_text())["metrics"][0] == {"metric": "MRR", **mrr}
    tolerant = ["compare", str(pooled), str(holey), "--resamples", "50", "--max-error-rate", "1"]
    assert main([*tolerant, "--require-judged"]) == 1
    assert main([*tolerant, "--delta", "0.05"]) == 0
    assert "cases for delta 0.05" in capsys.readouterr().out
    markdown = render_markdown(build_view(report))
    assert "#### Judged share" in markdown and "#### Power" in markdown
    page = html(report)
    assert re.findall(r'<section id="([^"]+)"', page) == [
        "compare",
        "holes",
        "power",
        "provenance",
    ]  # the judged-share warnings (the report's notes) are in the holes section
    assert "WARNING incomplete judgments" in page.split('id="holes"')[1].split("</section>")[0]


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    chunked = parse_pipeline(
        {
            "name": "bm25-fixed",
            "chunking": {"strategy": "fixed", "size": 64, "overlap": 8},
            "retriever": {"type": "bm25"},
        }
    )
    result = asyncio.run(
        run_benchmark(
            ragaudit.load_dataset(KB / "golden.jsonl"),
            str(KB / "corpus.jsonl"),  # type: ignore[arg-type]
            [preset("bm25"), chunked],
            parse_metrics("nDCG@10,R@5"),
            Policy(),
            RunOptions(top_k=10, progress=False),
            report_dir=tmp_path_factory.mktemp("bench"),
            resamples=200,
            delta=0.05,
            min_judged=0.5,
        )
    )
    return json.loads(json.dumps(result.to_dict()))


def test_bench_shows_each_pipelines_judged_share_and_power(bench: dict[str, Any]) -> None:
    assert schema_errors(bench) == []
    holes = [p["holes"] for p in bench["pipelines"]]
    assert [h["system"] for h in holes] == ["bm25", "bm25-fixed"]
    for h in holes:
        assert h["k"] == 10 and h["min_judged"] == 0.5 and 0.0 < h["judged"] <= 1.0
        assert h["status"] == ("complete" if h["judged"] >= 0.5 else "incomplete")
    warned = [h["system"] for h in holes if h["warning"]]
    assert [n for n in bench["notes"] if "incomplete judgments" in n] == [
        f"incomplete judgments: {h['warning']}" for h in holes if h["warning"]
    ]
    assert len(warned) == sum(h["status"] != "complete" for h in holes)
    row = bench["comparisons"][0]
    assert row["power"]["delta"] == 0.05 and row["power"]["cases"] == row["n"]
    assert math.isfinite(row["power"]["smallest_detectable_delta"])
    terminal = render_terminal(bench)
    assert (
        "Judged@10" in terminal and "smallest detectable" in terminal and "cases for delta 0.05" in terminal
    )
    markdown = render_markdown(build_view(bench))
    assert "#### Judged share" in markdown and "#### Power" in markdown
    sections = re.findall(r'<section id="([^"]+)"', html(bench))
    assert "holes" in sections and "power" in sections and sections[0] == "recommendation"
