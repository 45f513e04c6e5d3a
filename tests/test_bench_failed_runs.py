"""A benchmark whose pipelines' runs failed on some cases (errors, missing: each scored 0) does not
recommend a winner in plain words: the recommendation says whose runs failed and on how many cases
(before: "hybrid is significantly ahead of ..." over a runner-up whose cases timed out, with no word
of it). The honest twin: a benchmark with no failed case reads as before."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from ragaudit.report.kinds.benchmark import BenchmarkKind

GOLD = Path(__file__).parent / "gold" / "inputs" / "benchmark.json"


def _report() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(GOLD.read_text(encoding="utf-8"))
    return data


def test_a_failed_run_is_named_in_the_recommendation() -> None:
    data = copy.deepcopy(_report())
    data["pipelines"][0]["counts"]["errors"] = 7
    data["pipelines"][0]["counts"]["missing"] = 2
    words = BenchmarkKind().from_json(data).recommendation()
    assert words is not None
    assert "but the runs of bm25 (9 of 84 cases) failed on some cases, each scored 0" in words


def test_a_benchmark_without_failed_cases_reads_as_before() -> None:
    words = BenchmarkKind().from_json(_report()).recommendation()
    assert words is not None and "failed" not in words
