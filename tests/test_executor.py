"""Executors without a cluster: the local executor, the choice of executor, Ray's missing-extra error."""

from __future__ import annotations

import asyncio
import sys

import pytest

from ragaudit.cli.main import build_parser
from ragaudit.errors import InputError, MissingDependencyError
from ragaudit.runner.executor import LocalExecutor, make_executor


async def _square(shared: int, cell: int) -> int:
    await asyncio.sleep(0)
    return shared * cell * cell


def test_local_executor_runs_cells_in_order_in_this_process() -> None:
    executor = make_executor("local")
    assert isinstance(executor, LocalExecutor)
    assert asyncio.run(executor.map(_square, 2, [3, 1, 2])) == [18, 2, 8]
    assert executor.info() == {"name": "local", "nodes": 1, "workers": 1}


def test_an_unknown_executor_is_refused_with_the_choices() -> None:
    with pytest.raises(InputError, match=r"unknown executor 'dask'.*local, ray"):
        make_executor("dask")


def test_ray_missing_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # as if ray were not installed
    with pytest.raises(MissingDependencyError, match=r"pip install 'ragaudit\[ray\]'"):
        make_executor("ray")


@pytest.mark.parametrize("command", ["bench", "ablate", "sweep-chunking", "eval-reranker"])
def test_experiment_commands_take_an_executor(command: str) -> None:
    required = {
        "bench": [],
        "ablate": ["--config", "hybrid"],
        "sweep-chunking": [],
        "eval-reranker": ["--pipeline", "hybrid-rerank"],
    }[command]
    args = build_parser().parse_args(
        [
            command,
            "--dataset",
            "d.jsonl",
            "--corpus",
            "c.jsonl",
            *required,
            "--executor",
            "ray",
            "--ray-address",
            "ray://127.0.0.1:10001",
            "--embed-actors",
            "2",
        ]
    )
    assert (args.executor, args.ray_address, args.embed_actors, args.task_retries) == (
        "ray",
        "ray://127.0.0.1:10001",
        2,
        3,
    )
    assert (
        build_parser().parse_args([command, "--dataset", "d", "--corpus", "c", *required]).executor == "local"
    )


def test_executor_ray_without_the_extra_exits_2_naming_the_pip_command(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from conftest import KB
    from ragaudit.cli.main import main

    monkeypatch.setitem(sys.modules, "ray", None)
    data = ["--dataset", str(KB / "golden.jsonl"), "--corpus", str(KB / "corpus.jsonl")]
    assert main(["bench", *data, "--pipelines", "bm25", "--executor", "ray"]) == 2
    assert "pip install 'ragaudit[ray]'" in capsys.readouterr().err
