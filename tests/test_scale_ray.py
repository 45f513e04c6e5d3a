"""``--executor ray`` on a real Ray cluster started here: a head and one worker node on 127.0.0.1.

Every address stays on the loopback: the nodes get ``node_ip_address=127.0.0.1`` and Ray's own
switch ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` makes it resolve "this machine" to 127.0.0.1 instead of
the host's routable address. The cluster is tiny (1 CPU per node, no dashboard) and shut down by the
fixture. The tests check the issue's promises: vectors embedded by Ray Data actors are the local
ones bit for bit, a sweep / benchmark gives the local result (timing and provenance aside), and a
cell whose worker process is killed mid-sweep is re-run by Ray.

Marked ``ray`` (registered in pyproject.toml): they need the ``ray`` extra and take about a minute
on 2 cores, so the default ``pytest`` run leaves them out and ``make test-ray`` runs them
(docs/scale.md).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import pytest

from conftest import KB
from ragaudit.cache import CACHE_ENV, default_cache_dir
from ragaudit.corpus.loading import Corpus, load_corpus
from ragaudit.data.loading import load_dataset
from ragaudit.data.schema import Dataset
from ragaudit.evaluation.live import RunOptions
from ragaudit.experiments.benchmark import run_benchmark
from ragaudit.experiments.chunking_sweep import chunking_grid, sweep_chunking
from ragaudit.metrics.names import parse_metrics
from ragaudit.metrics.policy import Policy
from ragaudit.pipelines.build import chunk_with
from ragaudit.pipelines.config import PipelineConfig, StageConfig, preset
from ragaudit.pipelines.distribute import prefill_embeddings
from ragaudit.retrieval.embedder import Embedder
from ragaudit.retrieval.embedding_cache import CACHE_FILE, EmbeddingCache
from ragaudit.sqlite_files import SHARED_ENV

pytestmark = pytest.mark.ray

SPECS = parse_metrics("R@5,nDCG@10")
TIMING = {
    "created_at",
    "latency_ms",
    "index_build_seconds",
    "build_seconds",
    "embed_seconds",
    "first_stage_ms",
    "rerank_added_ms",
    "git",
    # how latency was timed and what the build found in the embedding cache: timing, not results
    "latency_timed",
    "latency_basis",
    "latency",
    "embeddings",
}


def _untimed(value: Any) -> Any:
    """A report without its timing fields and with provenance reduced to what must match."""
    if isinstance(value, dict):
        out = {k: _untimed(v) for k, v in value.items() if k not in TIMING and k != "executor"}
        if isinstance(out.get("notes"), list):  # a note on the embedding cache's state is about timing
            out["notes"] = [n for n in out["notes"] if "embedding cache" not in str(n)]
        return out
    if isinstance(value, list):
        return [_untimed(v) for v in value]
    return value


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[Any]:
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # "this machine" is 127.0.0.1 for Ray
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"  # nothing reported to Ray's servers
    ray = pytest.importorskip("ray")
    cluster_utils = pytest.importorskip("ray.cluster_utils")
    node = {"node_ip_address": "127.0.0.1", "num_cpus": 1, "object_store_memory": 80 * 1024 * 1024}
    cluster = cluster_utils.Cluster(initialize_head=True, head_node_args={**node, "include_dashboard": False})
    try:
        cluster.add_node(**node)
        assert cluster.address.startswith("127.0.0.1:")
        ray.init(address=cluster.address, log_to_driver=False)
        ray.data.DataContext.get_current().enable_progress_bars = False
        yield cluster
    finally:
        ray.shutdown()
        cluster.shutdown()


@pytest.fixture(scope="module")
def executor(ray_cluster: Any) -> Iterator[Any]:
    from ragaudit.runner.ray_executor import RayExecutor

    made = RayExecutor(task_retries=3)
    yield made
    made.close()  # joined an existing connection: leaves it to the cluster fixture


@pytest.fixture(scope="module")
def demo() -> tuple[Dataset, Corpus]:
    return load_dataset(KB / "golden.jsonl"), load_corpus(KB / "corpus.jsonl")


def _hybrid(cache_dir: Path) -> PipelineConfig:
    """The hybrid preset with its dense component's embedding cache in ``cache_dir``."""
    base = preset("hybrid")
    parts = tuple(
        replace(c, params=MappingProxyType({**dict(c.params), "cache_dir": str(cache_dir)}))
        if c.type == "dense"
        else c
        for c in base.retriever.components
    )
    return replace(base, retriever=StageConfig(base.retriever.type, base.retriever.params, parts))


def test_cluster_is_two_nodes_on_the_loopback(ray_cluster: Any, executor: Any) -> None:
    import ray

    nodes = [n for n in ray.nodes() if n["Alive"]]
    assert {n["NodeManagerAddress"] for n in nodes} == {"127.0.0.1"}
    from ragaudit.runner.ray_executor import blas_threads

    assert executor.info() == {
        "name": "ray",
        "nodes": 2,
        "cpus": 2,
        "ray_version": ray.__version__,
        "blas_threads": blas_threads(),
    }
    # cells run with the driver's BLAS threads: a matrix product's last bits depend on the count
    assert executor.cell_env()["OMP_NUM_THREADS"] == str(blas_threads())


def test_actor_vectors_are_the_local_vectors_bit_for_bit(
    demo: tuple[Dataset, Corpus], executor: Any, tmp_path: Path
) -> None:
    _, corpus = demo
    config = replace(_hybrid(tmp_path / "ray"), chunking=replace(preset("hybrid").chunking, size=96))
    prefill = prefill_embeddings([config], corpus, executor)
    texts = [c.index_text for c in chunk_with(config, corpus)]
    distinct = len(set(texts))
    assert prefill.cells == [{"embedded": distinct, "cached": 0}]
    assert prefill.runs[0]["actors"] == min(2, prefill.groups)
    assert prefill.runs[0]["model_batch_size"] == 32
    with EmbeddingCache(Embedder(), tmp_path / "local") as local:
        expected = local.embed(texts)  # the local path: missing texts in batches of 256
        assert local.misses == distinct
    with EmbeddingCache(Embedder(), tmp_path / "ray") as filled:
        assert filled.missing(texts) == {}
        got = filled.embed(texts)
        assert filled.misses == 0
    assert got.tobytes() == expected.tobytes()
    assert np.array_equal(got, expected)
    again = prefill_embeddings([config], corpus, executor)  # a second run reuses every vector
    assert again.texts == 0
    assert again.cells == [{"embedded": 0, "cached": distinct}]


def _sweep(dataset: Dataset, corpus: Corpus, config: PipelineConfig, executor: Any) -> Any:
    grid, _ = chunking_grid(["fixed", "recursive"], [128], [0])
    return asyncio.run(
        sweep_chunking(
            dataset,
            corpus,
            config,
            grid,
            SPECS,
            Policy(),
            RunOptions(top_k=10, progress=False, concurrency=1),
            resamples=500,
            executor=executor,
        )
    )


def test_ray_sweep_equals_the_local_sweep(
    demo: tuple[Dataset, Corpus], executor: Any, tmp_path: Path
) -> None:
    dataset, corpus = demo
    local = _sweep(dataset, corpus, _hybrid(tmp_path / "local"), None).to_dict()
    remote = _sweep(dataset, corpus, _hybrid(tmp_path / "ray"), executor).to_dict()
    assert "executor" not in local["provenance"]
    where = remote["provenance"]["executor"]
    assert (where["name"], where["nodes"], where["cpus"]) == ("ray", 2, 2)
    assert where["embedding"]["texts"] == sum(p["index"]["embedded_texts"] for p in local["points"])
    local["pipeline"] = remote["pipeline"] = None  # the configs differ in their cache_dir only
    local["provenance"]["pipeline"] = remote["provenance"]["pipeline"] = None
    assert _untimed(remote) == _untimed(local)
    assert [p["index"]["embedded_texts"] for p in remote["points"]] == [
        p["index"]["embedded_texts"] for p in local["points"]
    ]


def _descendants(root: int) -> set[int]:
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found: set[int] = set()
    frontier = {root}
    while frontier:
        frontier = {pid for pid, ppid in parents.items() if ppid in frontier} - found
        found |= frontier
    return found


def _kill_first_cell_worker(stop: threading.Event, killed: list[int]) -> None:
    """SIGKILL the first process of this test's cluster that is running a cell task (``ray::_run_cell``)."""
    while not stop.is_set() and not killed:
        for pid in _descendants(os.getpid()):
            try:
                title = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
            except OSError:
                continue
            if title.startswith(b"ray::_run_cell"):
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
                return
        time.sleep(0.02)


def test_a_cell_whose_worker_is_killed_is_rerun_and_the_benchmark_completes(
    demo: tuple[Dataset, Corpus], executor: Any
) -> None:
    dataset, corpus = demo
    configs = [
        preset("bm25"),
        replace(preset("bm25"), name="bm25-b", chunking=replace(preset("bm25").chunking, size=64)),
    ]
    options = RunOptions(top_k=10, progress=False, concurrency=1)

    def bench(runner: Any) -> dict[str, Any]:
        result = asyncio.run(
            run_benchmark(dataset, corpus, configs, SPECS, Policy(), options, resamples=500, executor=runner)
        )
        out: dict[str, Any] = result.to_dict()
        return out

    local = bench(None)
    stop, killed = threading.Event(), []
    killer = threading.Thread(target=_kill_first_cell_worker, args=(stop, killed))
    killer.start()
    try:
        remote = bench(executor)
    finally:
        stop.set()
        killer.join()
    assert killed, "no cell task was seen running, so none was killed"
    assert (
        not Path(f"/proc/{killed[0]}").exists()
        or b"zombie" in Path(f"/proc/{killed[0]}/status").read_bytes().lower()
    )
    assert _untimed(remote) == _untimed(local)
    assert remote["provenance"]["executor"]["name"] == "ray"


def test_without_retries_the_killed_cell_fails_the_run(
    demo: tuple[Dataset, Corpus], ray_cluster: Any
) -> None:
    """The control for the test above: it is Ray's task retry that saves the run."""
    import ray

    from ragaudit.runner.ray_executor import RayExecutor

    dataset, corpus = demo
    stop, killed = threading.Event(), []
    killer = threading.Thread(target=_kill_first_cell_worker, args=(stop, killed))
    killer.start()
    try:
        with pytest.raises(ray.exceptions.WorkerCrashedError):
            asyncio.run(
                run_benchmark(
                    dataset,
                    corpus,
                    [preset("bm25")],
                    SPECS,
                    Policy(),
                    RunOptions(top_k=10, progress=False),
                    resamples=200,
                    executor=RayExecutor(task_retries=0),
                )
            )
    finally:
        stop.set()
        killer.join()
    assert killed


def _cli(tmp_path: Path, name: str, argv: list[str]) -> dict[str, Any]:
    from ragaudit.cli.main import main

    out = tmp_path / f"{name}.json"
    dataset = ["--dataset", str(KB / "golden.jsonl"), "--corpus", str(KB / "corpus.jsonl")]
    assert main([*argv, *dataset, "--out", str(out), "--resamples", "200", "--no-progress"]) == 0
    report: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return report


RERANKED = """name = "hybrid-bi"
[retriever]
type = "hybrid"
components = [{ type = "bm25" }, { type = "dense" }]
[rerank]
type = "bi-encoder"
top_n = 30
"""


def test_eval_reranker_and_ablate_commands_on_ray(ray_cluster: Any, tmp_path: Path) -> None:
    address = ["--executor", "ray", "--ray-address", ray_cluster.address]
    pipeline = tmp_path / "hybrid-bi.toml"
    pipeline.write_text(RERANKED, encoding="utf-8")
    rerank = ["eval-reranker", "--pipeline", str(pipeline), "--top-n", "10"]
    local = _cli(tmp_path, "local", rerank)
    remote = _cli(tmp_path, "ray", [*rerank, *address])
    assert remote["provenance"]["executor"]["nodes"] == 2
    assert _untimed(remote) == _untimed(local)
    out_dir = tmp_path / "ablation"
    from ragaudit.cli.main import main

    argv = ["ablate", "--config", str(pipeline), "--toggle", "rerank", "--out-dir", str(out_dir)]
    dataset = ["--dataset", str(KB / "golden.jsonl"), "--corpus", str(KB / "corpus.jsonl")]
    assert main([*argv, *dataset, "--resamples", "200", "--no-progress", *address]) == 0
    ablation = json.loads((out_dir / "ablation.json").read_text(encoding="utf-8"))
    assert ablation["provenance"]["executor"]["name"] == "ray"
    assert [v["name"] for v in ablation["variants"]] == [
        "full",
        "full-minus-rerank",
        "bare",
        "bare-plus-rerank",
    ]


def test_cells_on_every_node_use_the_driver_cache_folder(
    executor: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def _where(_shared: None, pause_s: float) -> tuple[str, str | None, str]:
        """A cell reporting the cache folder it would use, the sharing setting, and its node (defined
        here: the workers cannot import this test module, so Ray ships the function by value)."""
        import ray

        time.sleep(pause_s)  # 1.5 s: two 1-CPU nodes busy at once, so two such cells run on different nodes
        return str(default_cache_dir()), os.environ.get(SHARED_ENV), ray.get_runtime_context().get_node_id()

    # set after the cluster started: the workers' own environment has another folder (conftest's)
    shared = tmp_path / "nfs" / "cache"
    monkeypatch.setenv(CACHE_ENV, str(shared))
    monkeypatch.setenv(SHARED_ENV, "1")
    seen = asyncio.run(executor.map(_where, None, [1.5, 1.5]))
    assert [s[:2] for s in seen] == [(str(shared), "1")] * 2
    assert len({s[2] for s in seen}) == 2, "the two cells ran on one node"
    # unset on a one-machine cluster: the driver's default folder, not the cluster's working directory
    monkeypatch.delenv(CACHE_ENV)
    monkeypatch.delenv(SHARED_ENV)
    monkeypatch.chdir(tmp_path)
    assert executor.one_machine()
    ((folder, flag, _),) = asyncio.run(executor.map(_where, None, [0.0]))  # one cell: no node to share
    assert (folder, flag) == (str(tmp_path / ".ragaudit" / "cache"), None)


def test_eval_rewrite_and_k_sweep_on_ray_fill_the_driver_cache_once(
    ray_cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The driver embeds the corpus once (Ray Data actors) into the cache folder it names; the cell
    builds both systems from it without embedding anything; the figures are the local run's."""
    from ragaudit.cli.main import main

    cache = tmp_path / "shared-cache"
    monkeypatch.setenv(CACHE_ENV, str(cache))
    address = ["--executor", "ray", "--ray-address", ray_cluster.address]
    rewrite = ["eval-rewrite", "--pipeline", "hybrid", "--rm3", "--metrics", "R@5,nDCG@10"]
    remote = _cli(tmp_path, "ray", [*rewrite, *address, "--reports-dir", str(tmp_path / "ray")])
    where = remote["provenance"]["executor"]
    texts = where["embedding"]["texts"]
    assert (where["name"], where["nodes"], texts > 0) == ("ray", 2, True)
    for side in ("baseline", "rewrite"):
        assert remote["pipelines"][side]["embeddings"] == {"cached": texts, "computed": 0}
    with sqlite3.connect(cache / CACHE_FILE) as conn:
        assert conn.execute("SELECT COUNT(*) FROM embeddings").fetchone() == (texts,)
    local = _cli(tmp_path, "local", [*rewrite, "--reports-dir", str(tmp_path / "local")])
    assert local["pipelines"]["baseline"]["embeddings"] == {"cached": texts, "computed": 0}
    assert "executor" not in local["provenance"]
    assert _untimed(remote) == _untimed(local)
    for side in ("baseline.json", "rewrite.json"):  # written by the driver
        a, b = (json.loads((tmp_path / d / side).read_text(encoding="utf-8")) for d in ("ray", "local"))
        assert a["metrics"] == b["metrics"]
    sweeps = {}
    for name, extra in (("ray", address), ("local", [])):
        out = tmp_path / f"k-{name}.json"
        assert main(["k-sweep", str(tmp_path / "ray" / "baseline.json"), "--out", str(out), *extra]) == 0
        sweeps[name] = json.loads(out.read_text(encoding="utf-8"))
    assert sweeps["ray"]["provenance"]["executor"]["nodes"] == 2
    assert _untimed(sweeps["ray"]) == _untimed(sweeps["local"])
    assert main(["k-sweep", str(tmp_path / "ray" / "baseline.json"), "--max-k", "11", *address]) == 2
