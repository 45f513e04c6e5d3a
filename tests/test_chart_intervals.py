"""Charts that do not exaggerate (issue 23 item 7): each pipeline's dot in the comparison chart carries
its 95% CI and the axis includes the intervals; p-values are written one way (``p < 0.001``)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ragaudit
from ragaudit.artifacts.envelope import schema_errors
from ragaudit.artifacts.tables import delta_cells, fmt_p
from ragaudit.evaluation.compare import LoadedReport, compare_reports
from ragaudit.experiments.benchmark import BenchmarkResult, PipelineOutcome, mean_cis, rank_pipelines
from ragaudit.report.html import render_html
from ragaudit.report.svg import data_axis, dot_plot
from ragaudit.report.view import build_view
from ragaudit.runner.execute import PER_QUERY
from ragaudit.stats.bootstrap import bootstrap_mean_ci
from report_fixtures import build_reports


def test_p_values_are_written_one_way() -> None:
    assert fmt_p(0.0001) == "p < 0.001" and fmt_p(0.0) == "p < 0.001"
    assert fmt_p(0.001) == "p = 0.001" and fmt_p(0.01234) == "p = 0.012" and fmt_p(1.0) == "p = 1.000"
    assert fmt_p(None) == "p –" and fmt_p(math.nan) == "p –"
    assert fmt_p(0.0004, prefix=False) == "< 0.001" and fmt_p(0.5, prefix=False) == "0.500"
    row = {"delta": 0.1, "significant": True, "ci": (0.05, 0.15), "p_value_corrected": 0.0002,
           "wins": 3, "ties": 1, "losses": 0}  # fmt: skip
    assert delta_cells(row)[2] == "< 0.001"


def _ticks_of_row(svg: str, label: str) -> list[float]:
    """The tick values of one metric's row (the ticks between its label and the next row's label)."""
    start = svg.index(f">{label}</text>")
    rest = svg[start:]
    following = re.search(r'text-anchor="end">', rest[10:])
    row = rest[: 10 + following.start()] if following else rest
    return [float(t) for t in re.findall(r'<text class="tick"[^>]*>([^<]+)</text>', row)]


def test_each_dot_carries_its_interval_and_the_axis_includes_the_intervals() -> None:
    values = [("dense", [0.9622]), ("hybrid", [0.9667]), ("bm25", [0.9267])]
    cis = {"dense": [(0.922, 0.993)], "hybrid": [(0.92, 1.0)], "bm25": [(0.867, 0.973)]}
    plain = dot_plot(["R@5"], values, "t", "hybrid")
    drawn = dot_plot(["R@5"], values, "t", "hybrid", cis)
    assert "whisker" not in plain and drawn.count('class="whisker') == 3
    assert "95% CI [0.8670, 0.9730]" in drawn
    before, after = _ticks_of_row(plain, "R@5"), _ticks_of_row(drawn, "R@5")
    assert before[0] > 0.867  # the zoomed axis cut the intervals off ...
    assert after[0] <= 0.867 and after[-1] >= 0.993  # ... now it holds every whisker
    # the 0.0045 gap between dense and hybrid takes a smaller share of the axis than before
    assert 0.0045 / (after[-1] - after[0]) < 0.0045 / (before[-1] - before[0]) / 2
    assert data_axis([0.9622, 0.9667, 0.9267], cap_one=True)[0] == before[0]


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("bench-ci")
    reports = build_reports(folder)
    results = {
        name: ragaudit.evaluate(
            reports["golden"], ragaudit.load_run(folder / f"{name}.run.jsonl", name=name), "nDCG@10,R@5"
        )
        for name in ("base", "better")
    }
    outcomes = [PipelineOutcome(n, r, 1.0, 600.0, PER_QUERY) for n, r in results.items()]
    loaded = [LoadedReport(o.name, f"<{o.name}>", o.result.to_dict()) for o in outcomes]
    comparison = compare_reports(loaded, loaded[0], n_resamples=500)
    ranking = rank_pipelines(outcomes, "nDCG@10", 500)
    result = BenchmarkResult(outcomes, "base", comparison, 5, {"cases": 40, "top_k": 10}, ranking=ranking)
    data: dict[str, Any] = json.loads(json.dumps(result.to_dict()))
    data["_results"] = {n: r.per_case_values("nDCG@10") for n, r in results.items()}
    return data


def test_the_benchmark_records_each_mean_s_95_ci_and_its_page_draws_it(bench: dict[str, Any]) -> None:
    per_case = bench.pop("_results")
    assert schema_errors(bench) == []
    for pipeline in bench["pipelines"]:
        lo, hi = pipeline["metrics_ci"]["nDCG@10"]
        assert lo <= pipeline["metrics"]["nDCG@10"] <= hi
        expected = bootstrap_mean_ci(np.array(list(per_case[pipeline["name"]].values())), 0.95, 2000, seed=0)
        assert (lo, hi) == pytest.approx(expected)
    page = render_html(build_view(bench))
    ranking = page[page.index('<section id="benchmark">') :]
    ranking = ranking[: ranking.index("</section>")]
    assert ranking.count('class="whisker') == 2 * 2  # two pipelines, two metrics
    assert "95% bootstrap CI of the mean" in page
    assert re.search(r"p (&lt;|=) 0\.\d{3}", page) and "<0.001" not in page


def test_mean_cis_skip_metrics_without_finite_values(tmp_path: Path) -> None:
    golden = tmp_path / "g.jsonl"
    golden.write_text('{"id": "q1", "query": "x", "relevance": {"d1": 1}}\n', encoding="utf-8")
    result = ragaudit.evaluate(golden, {"q1": ["d1"]}, metrics="nDCG@10")
    assert mean_cis(result) == {"nDCG@10": [1.0, 1.0]}
