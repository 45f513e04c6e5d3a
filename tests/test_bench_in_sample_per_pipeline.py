"""A benchmark of several pipelines with a fitted stage marks each one that is IN-SAMPLE, not only the
first: its own ``pipelines[].in_sample`` in the JSON (schema-valid), the ranked table of every view
(terminal, Markdown, HTML), the recommendation, and the MLflow export's ``ragaudit.in_sample`` tag.
Before: two learned-fusion pipelines fitted on the golden set, only ``fused-a`` (the first) was named
and tagged; ``fused-b`` read as a clean figure everywhere."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import ragaudit
from conftest import KB
from ragaudit.artifacts.envelope import schema_errors
from ragaudit.evaluation.compare import compare_reports, load_report
from ragaudit.report.html import render_html
from ragaudit.report.kinds.benchmark import BenchmarkKind
from ragaudit.report.markdown import render_markdown
from ragaudit.report.mlflow_runs import runs_of
from ragaudit.report.terminal import render_terminal
from ragaudit.report.view import build_view
from test_in_sample_experiments import _fitted_on_its_golden


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("fused")
    golden, model = _fitted_on_its_golden(folder)
    configs = []
    for name, top_n in (("fused-a", 20), ("fused-b", 10)):
        config = folder / f"{name}.toml"
        config.write_text(
            f'name = "{name}"\n[retriever]\ntype = "hybrid"\nmethod = "rrf"\n'
            'components = [{ type = "bm25" }, { type = "dense" }]\n'
            f'[rerank]\ntype = "learned"\nmodel = "{model}"\ntop_n = {top_n}\n',
            encoding="utf-8",
        )
        configs.append(str(config))
    result = ragaudit.bench(golden, KB / "corpus.jsonl", ["bm25", *configs], metrics="nDCG@10", resamples=200)
    return result.to_dict()


@pytest.mark.slow
def test_each_fitted_pipeline_carries_its_own_in_sample_state(report: dict[str, Any]) -> None:
    states = {p["name"]: (p.get("in_sample") or {}).get("state") for p in report["pipelines"]}
    assert states == {"bm25": None, "fused-a": "in_sample", "fused-b": "in_sample"}
    assert report["in_sample"]["systems"] == ["pipeline fused-a", "pipeline fused-b"]
    assert report["in_sample"]["system"] == "pipeline fused-a"  # kept for readers of the old section
    assert "pipeline fused-a: all 8" in report["in_sample"]["text"]
    assert "pipeline fused-b: all 8" in report["in_sample"]["text"]
    assert schema_errors(report) == []


@pytest.mark.slow
def test_every_view_and_the_recommendation_mark_each_in_sample_pipeline(report: dict[str, Any]) -> None:
    typed = BenchmarkKind().from_json(report)
    assert typed.in_sample == ("fused-a", "fused-b")
    advice = typed.recommendation() or ""
    winner = typed.ranking.winner if typed.ranking else ""
    assert winner in ("fused-a", "fused-b")  # a fitted stage on its own training cases wins here
    assert f"but {winner}'s figures are IN-SAMPLE" in advice
    view = build_view(report)
    for text in (render_terminal(report), render_markdown(view), render_html(view)):
        assert "fused-a (IN-SAMPLE)" in text and "fused-b (IN-SAMPLE)" in text
        assert "bm25 (IN-SAMPLE)" not in text


@pytest.mark.slow
def test_mlflow_tags_every_in_sample_pipeline(report: dict[str, Any]) -> None:
    tags = {run.name: run.tags for run in runs_of(report)}
    assert tags["fused-a"]["ragaudit.in_sample"] == "in_sample"
    assert tags["fused-b"]["ragaudit.in_sample"] == "in_sample"
    assert "ragaudit.in_sample" not in tags["bm25"]


def test_an_older_report_names_its_pipelines_through_the_report_level_section() -> None:
    section = {"state": "in_sample", "text": "IN-SAMPLE: ...", "system": "pipeline a"}
    old = {
        "kind": "benchmark",
        "pipelines": [
            {"name": "a", "metrics": {}},
            {"name": "b", "metrics": {}},
            {"name": "c", "metrics": {}},
        ],
        "comparisons": [],
        "in_sample": {**section, "systems": ["pipeline a", "pipeline b"]},
    }
    assert BenchmarkKind().from_json(old).in_sample == ("a", "b")
    assert [r.name for r in runs_of(old) if "ragaudit.in_sample" in r.tags] == ["a", "b"]
    first_only = {**old, "in_sample": section}
    assert BenchmarkKind().from_json(first_only).in_sample == ("a",)


def test_a_comparison_naming_an_in_sample_system_is_schema_valid(tmp_path: Path) -> None:
    golden = KB / "golden.jsonl"
    ids = [json.loads(line)["id"] for line in golden.read_text(encoding="utf-8").splitlines() if line]
    paths = []
    for name, ranking in (("a", ["x"]), ("b", [])):
        result = ragaudit.evaluate(golden, dict.fromkeys(ids, ranking), metrics="R@5")
        data = result.to_dict()
        if name == "a":
            data["in_sample"] = {
                "state": "in_sample",
                "cases": 75,
                "overlap": 75,
                "text": "IN-SAMPLE: all 75 ...",
            }
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        paths.append(path)
    compared = compare_reports([load_report(p) for p in paths], metrics=["R@5"], n_resamples=100)
    assert compared["in_sample"]["systems"] == [load_report(paths[0]).label]
    assert schema_errors(compared) == []  # before: 'in_sample' was unexpected in a compare report
