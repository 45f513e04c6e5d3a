"""Log a ragaudit report to MLflow (``ragaudit export mlflow REPORT.json``): one run per pipeline
(:func:`ragaudit.report.mlflow_runs.runs_of`), with the per-case table (``per_case.csv`` and
``per_case.json``), the pipeline config (``pipeline.json``), the report itself and its HTML page as
artifacts. MLflow is imported here only (``pip install 'ragaudit[mlflow]'``); the tracking URI is
MLflow's own: ``MLFLOW_TRACKING_URI``, else MLflow's default, unless one is given."""

from __future__ import annotations

import csv
import io
import time
from collections.abc import Mapping
from typing import Any

from ragaudit.errors import MissingDependencyError
from ragaudit.report.mlflow_runs import MlflowRun, runs_of

DEFAULT_EXPERIMENT = "ragaudit"


def export_to_mlflow(
    report: Mapping[str, Any],
    *,
    html: str | None = None,
    experiment: str = DEFAULT_EXPERIMENT,
    tracking_uri: str | None = None,
    where: str = "report",
) -> list[str]:
    """Log ``report`` (one run per pipeline) into ``experiment``; the ids of the runs made."""
    try:
        from mlflow import MlflowClient
        from mlflow.entities import Metric, Param, RunTag
    except ImportError:
        raise MissingDependencyError("mlflow-skinny", "mlflow") from None
    runs = runs_of(report, where)
    client = MlflowClient(tracking_uri=tracking_uri)
    found = client.get_experiment_by_name(experiment)
    experiment_id = found.experiment_id if found is not None else client.create_experiment(experiment)
    now = int(time.time() * 1000)
    made = []
    for run in runs:
        created = client.create_run(experiment_id, run_name=run.name, tags=dict(run.tags))
        run_id = created.info.run_id
        client.log_batch(
            run_id,
            metrics=[Metric(k, v, now, 0) for k, v in run.metrics.items()],
            params=[Param(k, v) for k, v in run.params.items()],
            tags=[RunTag(k, v) for k, v in run.tags.items()],
        )
        _artifacts(client, run_id, run, report, html)
        client.set_terminated(run_id)
        made.append(run_id)
    return made


def html_page(report: Mapping[str, Any], path: str = "report") -> str:
    """The self-contained HTML page of ``report`` (what ``ragaudit report --format html`` writes)."""
    from ragaudit.report.html import render_html
    from ragaudit.report.view import build_view

    return render_html(build_view(report, None, report_path=path))


def _artifacts(client: Any, run_id: str, run: MlflowRun, report: Mapping[str, Any], html: str | None) -> None:
    if run.per_case:
        client.log_text(run_id, per_case_csv(run.per_case), "per_case.csv")
        client.log_dict(run_id, run.per_case, "per_case.json")
    for name, content in run.json_artifacts.items():
        client.log_dict(run_id, content, name)
    client.log_dict(run_id, dict(report), "report.json")
    if html is not None:
        client.log_text(run_id, html, "report.html")


def per_case_csv(cases: list[dict[str, Any]]) -> str:
    """One row per case: id, status, answered, answerable, then each metric; retrieved ids in rank order."""
    metric_names = sorted({m for case in cases for m in case.get("metrics", {}) or {}})
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["id", "status", "answered", "answerable", *metric_names, "retrieved"])
    for case in cases:
        metrics = case.get("metrics", {}) or {}
        retrieved = " ".join(str(r.get("chunk_id")) for r in case.get("retrieved", []) or [])
        writer.writerow(
            [
                case.get("id"),
                case.get("status"),
                case.get("answered"),
                case.get("answerable"),
                *(metrics.get(m, "") for m in metric_names),
                retrieved,
            ]
        )
    return out.getvalue()
