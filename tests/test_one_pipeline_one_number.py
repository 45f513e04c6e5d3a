"""eval = bench = demo = pool (issue 23.2): one pipeline config over the same data gives the same
rankings, scores and metrics from every command and ``--latency`` mode, each command starting from an
empty embedding cache (so each embeds the corpus and the queries itself, in its own batches)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import DemoBuild
from ragaudit.cli.main import main

pytestmark = pytest.mark.slow

KB = Path(__file__).resolve().parents[1] / "src" / "ragaudit" / "demo_data" / "kb"
PIPELINES = ("bm25", "dense", "hybrid")
DATA = ["--dataset", str(KB / "golden.jsonl"), "--corpus", str(KB / "corpus.jsonl")]
DEMO_SETTINGS = ["--top-k", "10", "--metrics", "nDCG@10,R@5,R@10,MRR@10,P@5"]  # what bench and demo use
Report = dict[str, Any]


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory, demo_build: DemoBuild) -> dict[str, dict[str, Report]]:
    """Each command's report per pipeline: ``{"eval": {"bm25": report, ...}, "bench per-query": ...}``."""
    root = tmp_path_factory.mktemp("one-number")
    out: dict[str, dict[str, Report]] = {"eval": {}}

    def read(folder: Path) -> dict[str, Report]:
        return {p: json.loads((folder / f"{p}.json").read_text(encoding="utf-8")) for p in PIPELINES}

    with pytest.MonkeyPatch.context() as patch:
        for pipeline in PIPELINES:
            patch.setenv("RAGAUDIT_CACHE_DIR", str(root / f"cache-eval-{pipeline}"))
            target = root / f"eval-{pipeline}.json"
            argv = ["eval", *DATA, *DEMO_SETTINGS, "--pipeline", pipeline, "--out", str(target), "--quiet"]
            assert main([*argv, "--no-history"]) == 0
            out["eval"][pipeline] = json.loads(target.read_text(encoding="utf-8"))
        for latency in ("per-query", "batched"):
            patch.setenv("RAGAUDIT_CACHE_DIR", str(root / f"cache-bench-{latency}"))
            folder = root / f"bench-{latency}"
            argv = [
                "bench",
                *DATA,
                "--pipelines",
                ",".join(PIPELINES),
                "--latency",
                latency,
                "--out-dir",
                str(folder),
            ]
            assert main([*argv, "--no-history", "--no-progress"]) == 0
            out[f"bench {latency}"] = read(folder)
        # the run's one demo (conftest's demo_build: exit 0, from an empty embedding cache of its own)
        out["demo"] = read(demo_build.folder)
        patch.setenv("RAGAUDIT_CACHE_DIR", str(root / "cache-pool"))
        pool = root / "pool.jsonl"
        argv = ["pool", *DATA, "--pipelines", ",".join(PIPELINES), "--depth", "10", "--out", str(pool)]
        assert main([*argv, "--no-progress"]) == 0
        out["pool"] = pool_rankings(pool)
    return out


def pool_rankings(pool: Path) -> dict[str, Report]:
    """Each system's top 10 per case, rebuilt from the pool's ``found_by`` ranks (1-based)."""
    lines = [json.loads(line) for line in pool.read_text(encoding="utf-8").splitlines()[1:]]
    rankings: dict[str, Report] = {p: {} for p in PIPELINES}
    for case in lines:
        for pipeline in PIPELINES:
            found = [
                (c["found_by"][pipeline], c["chunk_id"])
                for c in case["candidates"]
                if pipeline in c["found_by"]
            ]
            rankings[pipeline][case["case_id"]] = [chunk for _, chunk in sorted(found)]
    return rankings


def ranked(report: Report) -> dict[str, list[tuple[str, float]]]:
    return {
        case["id"]: [(r["chunk_id"], r["score"]) for r in case["retrieved"]] for case in report["per_case"]
    }


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_every_command_gives_the_same_rankings_scores_and_metrics(
    reports: dict[str, dict[str, Report]], pipeline: str
) -> None:
    reference = reports["eval"][pipeline]
    for command in ("bench per-query", "bench batched", "demo"):
        report = reports[command][pipeline]
        assert report["pipeline"]["config_sha256"] == reference["pipeline"]["config_sha256"], command
        assert ranked(report) == ranked(reference), command
        assert set(report["metrics"]) == set(reference["metrics"])
        for metric in reference["metrics"]:
            assert report["metrics"][metric] == pytest.approx(reference["metrics"][metric], abs=1e-12), (
                command,
                metric,
            )
    top10 = {case: [chunk for chunk, _ in rows] for case, rows in ranked(reference).items()}
    assert reports["pool"][pipeline] == top10
