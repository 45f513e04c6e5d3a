"""Executors without a cluster: the local executor, the choice of executor, Ray's missing-extra error."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from ragaudit.cli.main import build_parser
from ragaudit.errors import InputError, MissingDependencyError
from ragaudit.runner.executor import LocalExecutor, make_executor, run_once


async def _square(shared: int, cell: int) -> int:
    await asyncio.sleep(0)
    return shared * cell * cell


def test_local_executor_runs_cells_in_order_in_this_process() -> None:
    executor = make_executor("local")
    assert isinstance(executor, LocalExecutor)
    assert asyncio.run(executor.map(_square, 2, [3, 1, 2])) == [18, 2, 8]
    assert executor.info() == {"name": "local", "nodes": 1, "workers": 1}


def test_run_once_awaits_one_job_as_the_one_cell() -> None:
    """What eval-reranker, eval-rewrite and k-sweep run through an executor: one partial, one cell;
    a synchronous function goes through asyncio.to_thread."""
    import functools

    assert asyncio.run(run_once(LocalExecutor(), functools.partial(_square, 3, 2))) == 12
    assert asyncio.run(run_once(LocalExecutor(), functools.partial(asyncio.to_thread, pow, 2, 5))) == 32


def test_an_unknown_executor_is_refused_with_the_choices() -> None:
    with pytest.raises(InputError, match=r"unknown executor 'dask'.*local, ray"):
        make_executor("dask")


def test_ray_missing_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # as if ray were not installed
    with pytest.raises(MissingDependencyError, match=r"pip install 'ragaudit\[ray\]'"):
        make_executor("ray")


EXPERIMENTS = ["bench", "ablate", "sweep-chunking", "eval-reranker", "eval-rewrite", "k-sweep"]


@pytest.mark.parametrize("command", EXPERIMENTS)
def test_experiment_commands_take_an_executor(command: str) -> None:
    required = {
        "bench": [],
        "ablate": ["--config", "hybrid"],
        "sweep-chunking": [],
        "eval-reranker": ["--pipeline", "hybrid-rerank"],
        "eval-rewrite": ["--rm3"],
        "k-sweep": ["report.json"],
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


@pytest.mark.parametrize(
    "argv",
    [
        ["bench", "--pipelines", "bm25"],
        ["eval-rewrite", "--pipeline", "bm25", "--rm3"],
        ["k-sweep", "--run", "RUN"],
    ],
    ids=["bench", "eval-rewrite", "k-sweep"],
)
def test_executor_ray_without_the_extra_exits_2_naming_the_pip_command(
    argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from conftest import KB
    from ragaudit.cli.main import main

    run = tmp_path / "run.trec"
    run.write_text("kb-001 Q0 d1 1 1.0 x\n", encoding="utf-8")
    monkeypatch.setitem(sys.modules, "ray", None)
    data = ["--dataset", str(KB / "golden.jsonl"), "--corpus", str(KB / "corpus.jsonl")]
    argv = [str(run) if a == "RUN" else a for a in argv]
    assert main([*argv, *data, "--executor", "ray"]) == 2
    err = capsys.readouterr().err
    assert "pip install 'ragaudit[ray]'" in err and "Traceback" not in err
