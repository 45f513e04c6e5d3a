"""An IN-SAMPLE report exported to MLflow says so: its run carries ``ragaudit.in_sample``, so a tracker
never shows a fitted stage's in-sample nDCG@10 as if it were a figure on new queries."""

from __future__ import annotations

from ragaudit.report.mlflow_runs import runs_of

FITTED = "learned fusion (fusion.json sha256:6eb8b6c37bdb)"


def _section(state: str, **extra: str) -> dict[str, object]:
    return {
        "state": state,
        "cases": 75,
        "overlap": 54 if state == "in_sample" else 0,
        "text": "...",
        "stages": [{"stage": FITTED, "state": state}],
        **extra,
    }


def test_an_in_sample_eval_report_is_tagged() -> None:
    report = {
        "kind": "eval",
        "pipeline": {"name": "hybrid-rerank"},
        "metrics": {"nDCG@10": 0.9546},
        "in_sample": _section("in_sample"),
    }
    (run,) = runs_of(report)
    assert run.tags["ragaudit.in_sample"] == "in_sample" and run.metrics == {"ndcg_at_10": 0.9546}
    (held_out,) = runs_of({**report, "in_sample": _section("held_out")})
    assert held_out.tags["ragaudit.in_sample"] == "held_out"
    (plain,) = runs_of({"kind": "eval", "pipeline": {"name": "bm25"}, "metrics": {"nDCG@10": 0.81}})
    assert "ragaudit.in_sample" not in plain.tags  # no fitted stage, no tag


def test_a_benchmark_tags_the_pipeline_it_names_in_sample() -> None:
    report = {
        "kind": "benchmark",
        "pipelines": [
            {"name": "hybrid", "metrics": {"nDCG@10": 0.88}},
            {"name": "hybrid-rerank", "metrics": {"nDCG@10": 0.95}},
        ],
        "in_sample": _section("in_sample", system="pipeline hybrid-rerank"),
    }
    tags = {r.name: r.tags for r in runs_of(report)}
    assert tags["hybrid-rerank"]["ragaudit.in_sample"] == "in_sample"
    assert "ragaudit.in_sample" not in tags["hybrid"]
