"""The audit artifact: every report kind ragaudit writes validates against the shipped JSON Schema,
broken reports do not, and the provenance block is right (git commit, environment, hashes)."""

from __future__ import annotations

import asyncio
import copy
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator  # type: ignore[import-untyped,unused-ignore]

import ragaudit
from conftest import KB
from ragaudit.artifacts.envelope import REPORT_KINDS, read_report, report_schema, schema_errors
from ragaudit.artifacts.provenance import collect_provenance, environment, git_state
from ragaudit.errors import InputError
from ragaudit.evaluation.compare import compare_reports, load_report
from ragaudit.evaluation.live import RunOptions
from ragaudit.experiments.benchmark import run_benchmark
from ragaudit.metrics.names import parse_metrics
from ragaudit.metrics.policy import Policy
from ragaudit.pipelines.config import parse_pipeline, preset
from report_fixtures import build_reports, load, with_extras


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return build_reports(tmp_path_factory.mktemp("reports"))


def assert_valid(report: Any) -> None:
    errors = schema_errors(report)
    assert errors == [], "\n".join(errors)


def test_the_schema_is_draft_2020_12_and_lists_every_kind() -> None:
    schema = report_schema()
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["properties"]["kind"]["enum"] == list(REPORT_KINDS)
    assert schema["properties"]["schema_version"] == {"const": 1}


def test_eval_reports_validate_with_and_without_provenance_and_extras(reports: dict[str, Path]) -> None:
    report = load(reports["base"])
    assert report["security"]["leaks"] == 1 and report["counts"]["missing"] == 1 and report["errors"]
    assert_valid(report)
    assert_valid(with_extras(report))
    context: dict[str, Any] = {k: report[k] for k in ("pipeline", "corpus", "retrieval") if k in report}
    report["provenance"] = collect_provenance(report["dataset"], context, report["policy"])
    assert_valid(report)


class LeakyRetriever:
    """A real retriever over a fixed table that returns one foreign chunk for globex queries."""

    async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[Any]:
        hits = [
            {"chunk_id": f"{tenant_id}-d{n}", "score": 1.0 / (n + 1), "content": query, "source_id": "s"}
            for n in range(top_k)
        ]
        if tenant_id == "globex":
            hits[1] = {
                "chunk_id": "acme-d1",
                "score": 0.9,
                "content": "x",
                "source_id": "s",
                "tenant_id": "acme",
            }
        return [{**h, "tenant_id": h.get("tenant_id", tenant_id)} for h in hits]


def test_a_live_eval_report_with_leaks_and_latency_validates(reports: dict[str, Path]) -> None:
    result = asyncio.run(ragaudit.evaluate_retriever(LeakyRetriever(), reports["golden"], top_k=5))
    report = result.to_dict()
    assert report["security"]["leaks"] > 0 and report["latency_ms"] is not None
    report["provenance"] = collect_provenance(report["dataset"], {}, report["policy"])
    assert_valid(report)


def test_compare_reports_validate(reports: dict[str, Path]) -> None:
    loaded = [load_report(reports["base"]), load_report(reports["better"])]
    result = compare_reports(loaded, n_resamples=500)
    assert any(c["significant"] for c in result["comparisons"])
    assert_valid(json.loads(json.dumps(result)))


def test_benchmark_and_its_per_pipeline_reports_validate(tmp_path: Path) -> None:
    dataset = ragaudit.load_dataset(KB / "golden.jsonl")
    chunked = parse_pipeline(
        {
            "name": "bm25-fixed",
            "chunking": {"strategy": "fixed", "size": 64, "overlap": 8},
            "retriever": {"type": "bm25"},
        }
    )
    asyncio.run(
        run_benchmark(
            dataset,
            str(KB / "corpus.jsonl"),  # type: ignore[arg-type]
            [preset("bm25"), chunked],
            parse_metrics("nDCG@10,R@5"),
            Policy(),
            RunOptions(top_k=10, progress=False),
            report_dir=tmp_path,
            resamples=200,
        )
    )
    written = sorted(p.name for p in tmp_path.glob("*.json"))
    assert written == ["benchmark.json", "bm25-fixed.json", "bm25.json"]
    for path in tmp_path.glob("*.json"):
        assert_valid(load(path))
    assert load(tmp_path / "bm25-fixed.json")["pipeline"]["config"]["chunking"]["strategy"] == "fixed"


def _mutations() -> dict[str, Any]:
    def kind(r: dict[str, Any]) -> None:
        r["kind"] = "evaluation"

    def version(r: dict[str, Any]) -> None:
        r["schema_version"] = 2

    def case_key(r: dict[str, Any]) -> None:
        r["per_case"][0]["surprise"] = 1

    def counts(r: dict[str, Any]) -> None:
        del r["counts"]

    def created(r: dict[str, Any]) -> None:
        r["created_at"] = "yesterday"

    def sha(r: dict[str, Any]) -> None:
        r["dataset"]["sha256"] = "not-a-hash"

    def scalar_extra(r: dict[str, Any]) -> None:
        r["stray"] = "a top-level scalar"

    def sweep(r: dict[str, Any]) -> None:
        r["k_sweep"] = {"k": [1, 5], "series": [{"values": [0.1, 0.2]}]}

    def gate(r: dict[str, Any]) -> None:
        r["gate"] = {"passed": "yes"}

    def grade(r: dict[str, Any]) -> None:
        r["per_case"][0]["retrieved"][0]["grade"] = "high"

    return {
        f.__name__: f
        for f in (kind, version, case_key, counts, created, sha, scalar_extra, sweep, gate, grade)
    }


@pytest.mark.parametrize("mutation", list(_mutations()))
def test_broken_eval_reports_are_rejected(reports: dict[str, Path], mutation: str) -> None:
    report = copy.deepcopy(load(reports["base"]))
    _mutations()[mutation](report)
    assert schema_errors(report)


def test_compare_reports_are_strict_and_experiment_kinds_open(reports: dict[str, Path]) -> None:
    loaded = [load_report(reports["base"]), load_report(reports["better"])]
    compare = json.loads(json.dumps(compare_reports(loaded, n_resamples=100)))
    assert schema_errors({**compare, "stray": 1})
    assert schema_errors({**compare, "comparisons": [{**compare["comparisons"][0], "stray": 1}]})
    envelope = {"schema_version": 1, "ragaudit_version": "0.1.0", "created_at": "2026-01-31T12:00:00+00:00"}
    assert_valid({**envelope, "kind": "k-sweep", "anything": [1, 2], "k_sweep": {"k": [1], "series": []}})
    assert schema_errors({**envelope, "kind": "k-sweep", "k_sweep": {"k": [], "series": []}})
    assert schema_errors({"kind": "tenant-audit", "schema_version": 1})


def test_read_report_refuses_what_is_not_a_report(tmp_path: Path, reports: dict[str, Path]) -> None:
    assert read_report(reports["base"])["kind"] == "eval"
    bad = tmp_path / "bad.json"
    bad.write_text('{\n  "kind": "eval",\n  oops\n}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"bad\.json:3: not valid JSON"):
        read_report(bad)
    cases = {
        "list.json": ("[1, 2]", "not a ragaudit report"),
        "v2.json": ('{"kind": "eval", "schema_version": 2}', "schema_version 2"),
        "odd.json": ('{"kind": "poem", "schema_version": 1}', "unknown report kind 'poem'"),
    }
    for name, (text, message) in cases.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        with pytest.raises(InputError, match=message):
            read_report(tmp_path / name)
    with pytest.raises(InputError, match="report not found"):
        read_report(tmp_path / "absent.json")


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_provenance_reads_the_git_commit_of_the_working_directory(tmp_path: Path) -> None:
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    repo.mkdir()
    outside.mkdir()

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
        return done.stdout.strip()

    git("init", "-q")
    (repo / "golden.jsonl").write_text("{}\n", encoding="utf-8")
    git("add", "golden.jsonl")
    git("-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "golden set")
    state = git_state(str(repo))
    assert state == {"commit": git("rev-parse", "HEAD"), "dirty": False}
    (repo / "golden.jsonl").write_text("{}\n{}\n", encoding="utf-8")
    git_state.cache_clear()
    assert git_state(str(repo)) == {"commit": git("rev-parse", "HEAD"), "dirty": True}
    assert git_state(str(outside)) is None


def test_provenance_gathers_hashes_models_k_and_environment() -> None:
    context = {
        "pipeline": {"name": "hybrid", "config_sha256": "a" * 64, "models": {"embedding": ["MiniLM"]}},
        "corpus": {"path": "c.jsonl", "sha256": "b" * 64},
        "retrieval": {"top_k": 10},
    }
    prov = collect_provenance({"sha256": "c" * 64}, context, Policy().to_dict())
    assert prov["dataset_sha256"] == "c" * 64 and prov["corpus_sha256"] == "b" * 64
    assert prov["pipeline"] == {"name": "hybrid", "config_sha256": "a" * 64}
    assert prov["models"] == {"embedding": ["MiniLM"]} and prov["k"] == 10 and prov["policy_version"] == 1
    env = environment()
    assert env["python"].count(".") == 2 and "numpy" in env["packages"] and "ragaudit" in env["packages"]
    bare = collect_provenance({}, {}, {})
    assert bare["pipeline"] is None and bare["k"] is None and bare["corpus_sha256"] is None
