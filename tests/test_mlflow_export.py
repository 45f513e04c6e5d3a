"""``ragaudit export mlflow``: an eval report logged to a real MLflow SQLite store, then read back with
MLflow's own client: params, MLflow-safe metric names, tags with the verdicts, artifacts."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")  # MLflow's usage telemetry: off in tests

from ragaudit.cli.main import main
from ragaudit.errors import InputError
from ragaudit.report.mlflow_runs import mlflow_name, runs_of

KB = Path(__file__).resolve().parents[1] / "src" / "ragaudit" / "demo_data" / "kb"


def mlflow_client(uri: str) -> Any:
    """MLflow's own client, imported here instead of at collection: importing mlflow takes seconds,
    which every pytest-xdist worker paid while collecting, whatever it ran."""
    from mlflow import MlflowClient

    return MlflowClient(tracking_uri=uri)


@pytest.fixture(scope="module")
def bm25_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report") / "bm25.json"
    args = ["eval", "--dataset", str(KB / "golden.jsonl"), "--corpus", str(KB / "corpus.jsonl")]
    code = main(
        [*args, "--pipeline", "bm25", "--metrics", "nDCG@10,R@5,MRR@10", "--no-history", "--out", str(out)]
    )
    assert code == 0
    return out


def test_metric_names_become_mlflow_safe() -> None:
    assert [mlflow_name(m) for m in ("nDCG@10", "R@5", "MRR", "MAP@100")] == [
        "ndcg_at_10",
        "r_at_5",
        "mrr",
        "map_at_100",
    ]


def test_an_eval_report_is_one_mlflow_run_read_back_with_mlflows_client(
    bm25_report: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)  # as MLflow users set it; no --tracking-uri given
    monkeypatch.chdir(tmp_path)
    assert main(["export", "mlflow", str(bm25_report), "--experiment", "demo"]) == 0
    run_ids = capsys.readouterr().out.split()
    assert len(run_ids) == 1

    client = mlflow_client(uri)
    run = client.get_run(run_ids[0])
    report = json.loads(bm25_report.read_text())
    assert run.info.run_name == "bm25" and run.info.status == "FINISHED"
    assert client.get_experiment(run.info.experiment_id).name == "demo"
    assert run.data.metrics["ndcg_at_10"] == pytest.approx(report["metrics"]["nDCG@10"])
    assert {"ndcg_at_10", "r_at_5", "mrr_at_10", "cases_answerable"} <= set(run.data.metrics)
    params = run.data.params
    assert params["dataset.sha256"] == report["dataset"]["sha256"]
    assert params["corpus.sha256"] == report["corpus"]["sha256"]
    assert params["pipeline.config_sha256"] == report["pipeline"]["config_sha256"]
    assert json.loads(params["pipeline.config"]) == report["pipeline"]["config"]
    assert params["policy.gain"] == "exponential" and params["pipeline.name"] == "bm25"
    assert run.data.tags["ragaudit.isolation"] == report["security"]["isolation"]["state"] == "not_verified"

    artifacts = {a.path for a in client.list_artifacts(run_ids[0])}
    assert {"per_case.csv", "per_case.json", "pipeline.json", "report.json", "report.html"} <= artifacts
    local = Path(client.download_artifacts(run_ids[0], "per_case.csv", str(tmp_path)))
    rows = local.read_text().splitlines()
    assert rows[0].startswith("id,status,answered,answerable,MRR@10,R@5,nDCG@10")
    assert len(rows) == 1 + report["counts"]["cases"]
    html = Path(client.download_artifacts(run_ids[0], "report.html", str(tmp_path))).read_text()
    assert "<html" in html.lower() and "nDCG@10" in html


def test_a_benchmark_report_is_one_run_per_pipeline() -> None:
    report = {
        "kind": "benchmark",
        "provenance": {"dataset_sha256": "d" * 64, "corpus_sha256": "c" * 64},
        "policy": {"gain": "linear"},
        "gate": {"passed": False},
        "pipelines": [
            {
                "name": "bm25",
                "metrics": {"nDCG@10": 0.8},
                "isolation": {"state": "pass"},
            },  # a recorded pass of golden questions earns nothing
            {"name": "dense", "metrics": {"nDCG@10": 0.7}, "isolation": {"state": "fail"}},
        ],
    }
    runs = runs_of(report)
    assert [(r.name, r.metrics, r.tags) for r in runs] == [
        # a gate section that lists no gate checked nothing: NOT VERIFIED, as the pages show it
        (
            "bm25",
            {"ndcg_at_10": 0.8},
            {"ragaudit.isolation": "not_verified", "ragaudit.gate": "not_verified"},
        ),
        ("dense", {"ndcg_at_10": 0.7}, {"ragaudit.isolation": "fail", "ragaudit.gate": "not_verified"}),
    ]
    assert all(r.params["dataset.sha256"] == "d" * 64 and r.params["policy.gain"] == "linear" for r in runs)
    assert all(r.params["corpus.sha256"] == "c" * 64 for r in runs)


def test_a_report_without_pipeline_runs_is_refused() -> None:
    with pytest.raises(InputError, match="no pipeline runs to export"):
        runs_of({"kind": "tenant-audit"})


def test_eval_with_mlflow_logs_the_same_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    monkeypatch.chdir(tmp_path)
    demo = KB.parent
    out = tmp_path / "lesson.json"
    args = ["eval", "--dataset", str(demo / "lesson_golden.jsonl"), "--run", str(demo / "lesson_run.trec")]
    assert main([*args, "--metrics", "nDCG@10,R@5", "--no-history", "--out", str(out), "--mlflow"]) == 0
    client = mlflow_client(uri)
    experiment = client.get_experiment_by_name("ragaudit")
    assert experiment is not None
    (run,) = client.search_runs([experiment.experiment_id])
    report = json.loads(out.read_text())
    assert run.data.metrics["ndcg_at_10"] == pytest.approx(report["metrics"]["nDCG@10"])
    assert run.data.params["dataset.sha256"] == report["dataset"]["sha256"]
    assert {"per_case.csv", "report.html"} <= {a.path for a in client.list_artifacts(run.info.run_id)}
