"""Resume refuses a results file another system wrote (issue 23 item 3): the sidecar records what ran
(dataset, config and corpus hashes, or the endpoint / retriever), a mismatch exits 2 naming both, and
the history never replaces another system's entry."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from conftest import KB
from ragaudit.artifacts.history import query_runs
from ragaudit.cli.main import main
from ragaudit.data.schema import GoldenCase
from ragaudit.errors import InputError
from ragaudit.runner.execute import run_cases

A = 'name = "mine"\n[retriever]\ntype = "bm25"\n'
B = 'name = "mine"\n[chunking]\nstrategy = "fixed"\nsize = 64\noverlap = 0\n[retriever]\ntype = "bm25"\n'


def _eval(config: Path, results: Path, *extra: str) -> int:
    return main(
        [
            "eval",
            "--dataset",
            str(KB / "golden.jsonl"),
            "--corpus",
            str(KB / "corpus.jsonl"),
            "--config",
            str(config),
            "--results",
            str(results),
            *extra,
        ]
    )


def test_resuming_config_a_results_with_config_b_exits_2_naming_both_hashes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    history = tmp_path / "h.sqlite"
    monkeypatch.setenv("RAGAUDIT_HISTORY", str(history))
    a, b = tmp_path / "a.toml", tmp_path / "b.toml"
    a.write_text(A, encoding="utf-8")
    b.write_text(B, encoding="utf-8")
    results = tmp_path / "r.jsonl"
    assert _eval(a, results) == 0
    before = results.read_bytes()
    capsys.readouterr()
    assert _eval(b, results, "--resume") == 2
    err = capsys.readouterr().err
    assert "written by another system" in err and "config_sha256" in err
    assert "cases reused" not in err  # refused before claiming to reuse anything
    from ragaudit.pipelines.config import resolve_pipeline

    hash_a, hash_b = resolve_pipeline(str(a)).sha256(), resolve_pipeline(str(b)).sha256()
    assert hash_a in err and hash_b in err
    assert results.read_bytes() == before
    runs = query_runs(history)
    assert len(runs) == 1 and runs[0].config_sha256 == hash_a
    # the system that wrote it resumes it, and stays one history entry
    assert _eval(a, results, "--resume") == 0
    assert "84 of 84 cases reused" in capsys.readouterr().err
    assert [r.config_sha256 for r in query_runs(history)] == [hash_a]


def test_a_fresh_run_of_another_config_never_replaces_the_first_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    history = tmp_path / "h.sqlite"
    monkeypatch.setenv("RAGAUDIT_HISTORY", str(history))
    a, b = tmp_path / "a.toml", tmp_path / "b.toml"
    a.write_text(A, encoding="utf-8")
    b.write_text(B, encoding="utf-8")
    results = tmp_path / "r.jsonl"
    assert _eval(a, results) == 0
    results.unlink()  # the same results path, a new system: a new entry, A's is kept
    assert _eval(b, results) == 0
    assert _eval(b, results, "--resume") == 0
    hashes = [r.config_sha256 for r in query_runs(history)]
    assert len(hashes) == 2 and len(set(hashes)) == 2


class _Fixed:
    async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[dict[str, object]]:
        return [{"chunk_id": "d1", "score": 1.0, "tenant_id": tenant_id}]


def test_the_runner_refuses_another_identity_and_accepts_its_own(tmp_path: Path) -> None:
    cases = [GoldenCase(f"c{i}", f"q{i}", ("d1",), tenant_id="t") for i in range(3)]
    path = tmp_path / "r.jsonl"

    def go(identity: dict[str, str], resume: bool) -> object:
        return asyncio.run(
            run_cases(_Fixed(), cases, 5, results_path=path, resume=resume, progress=False, identity=identity)
        )

    go({"dataset_sha256": "d", "endpoint": "http://a/search"}, False)
    with pytest.raises(InputError, match="endpoint: file 'http://a/search', this run 'http://b/search'"):
        go({"dataset_sha256": "d", "endpoint": "http://b/search"}, True)
    with pytest.raises(InputError, match="dataset_sha256"):
        go({"dataset_sha256": "other", "endpoint": "http://a/search"}, True)
    go({"dataset_sha256": "d", "endpoint": "http://a/search"}, True)
