"""A benchmark report whose in-sample marks were deleted (each ``pipelines[].in_sample`` and the
top-level section) or edited to ``held_out`` still reads IN-SAMPLE: ``ragaudit bench`` records what
recomputes them (each fitted pipeline's ``fitted``: its stages and the fingerprints of the cases it
scored) and every view recomputes them (before: the pages showed both learned-fusion pipelines as
clean, held-out figures). The honest twins: an unedited report is read as written, and bm25 (no
fitted stage) is never marked."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from ragaudit.artifacts.envelope import schema_errors
from ragaudit.evaluation.bench_in_sample import with_own_bench_in_sample
from ragaudit.report.kinds.benchmark import BenchmarkKind
from ragaudit.report.markdown import render_markdown
from ragaudit.report.view import build_view
from test_bench_in_sample_per_pipeline import report  # noqa: F401  (the module's fixture)


def _stripped(data: dict[str, Any]) -> dict[str, Any]:
    forged = copy.deepcopy(data)
    forged.pop("in_sample", None)
    for pipeline in forged["pipelines"]:
        pipeline.pop("in_sample", None)
    return forged


@pytest.mark.slow
def test_bench_records_what_recomputes_its_marks(report: dict[str, Any]) -> None:  # noqa: F811
    fitted = {p["name"]: p.get("fitted") for p in report["pipelines"]}
    assert fitted["bm25"] is None
    assert fitted["fused-a"]["stages"] and len(fitted["fused-a"]["scored"]) == 8
    assert schema_errors(report) == []
    assert with_own_bench_in_sample(report) is report  # the honest report is read as written


@pytest.mark.slow
def test_deleted_marks_are_recomputed_on_every_page(report: dict[str, Any]) -> None:  # noqa: F811
    forged = _stripped(report)
    assert BenchmarkKind().from_json(forged).in_sample == ()  # what the pages read before
    assert BenchmarkKind().from_json(with_own_bench_in_sample(forged)).in_sample == ("fused-a", "fused-b")
    page = render_markdown(build_view(forged))
    assert "IN-SAMPLE" in page and "fused-b" in page.split("IN-SAMPLE", 1)[1]


@pytest.mark.slow
def test_an_edited_held_out_state_is_recomputed(report: dict[str, Any]) -> None:  # noqa: F811
    forged = _stripped(report)
    forged["pipelines"][1]["in_sample"] = {"state": "held_out", "overlap": 0, "text": "held out"}
    fixed = with_own_bench_in_sample(forged)
    assert fixed["pipelines"][1]["in_sample"]["state"] == "in_sample"


def test_a_learned_pipeline_with_every_record_deleted_is_assumed_in_sample() -> None:
    forged = {"kind": "benchmark", "pipelines": [{"name": "bm25"}, {"name": "hybrid-rerank"}]}
    fixed = with_own_bench_in_sample(forged)
    assert "in_sample" not in fixed["pipelines"][0]
    section = fixed["pipelines"][1]["in_sample"]
    assert section["state"] == "in_sample" and section["assumed"] is True
    assert "cannot be read as held-out" in fixed["in_sample"]["text"]
    # the honest twin: a learned pipeline whose records say held-out stays held-out
    held_out = {
        "name": "hybrid-rerank",
        "in_sample": {"state": "held_out", "overlap": 0, "text": "held out"},
        "fitted": {
            "stages": [
                {"name": "learned", "fitted_on": {"dataset": {"sha256": "ab"}, "cases": {"q1": "f1"}}}
            ],
            "scored": {"q2": "f2"},
        },
    }
    honest = {"kind": "benchmark", "provenance": {"dataset_sha256": "ab"}, "pipelines": [held_out]}
    assert with_own_bench_in_sample(honest) is honest


@pytest.mark.slow
def test_the_mlflow_export_tags_recomputed_marks(report: dict[str, Any]) -> None:  # noqa: F811
    from ragaudit.report.mlflow_runs import runs_of

    tags = {run.name: run.tags.get("ragaudit.in_sample") for run in runs_of(_stripped(report))}
    assert tags == {"bm25": None, "fused-a": "in_sample", "fused-b": "in_sample"}


@pytest.mark.slow
def test_the_terminal_view_reads_recomputed_marks(report: dict[str, Any]) -> None:  # noqa: F811
    from ragaudit.report.terminal import render_terminal

    text = render_terminal(_stripped(report))
    assert text.startswith("IN-SAMPLE: ") and "fused-b (IN-SAMPLE)" in text
