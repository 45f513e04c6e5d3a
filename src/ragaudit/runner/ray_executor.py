"""The Ray executor: an experiment's cells as Ray tasks, corpus embedding with Ray Data.

Only Ray's own machinery is used:

- connecting: ``ray.init(address=...)`` with Ray's own rules (``None``: ``RAY_ADDRESS``, else the
  cluster last started on this machine, else a new local instance; ``"auto"``: an existing cluster
  or an error; ``"ray://host:port"``: Ray Client). A process that already called ``ray.init()`` is
  reused as it is (and left connected);
- shared objects: ``ray.put`` once; every task receives the reference, so a node fetches the object
  once, not once per task;
- cells: one ``@ray.remote`` task each, ``max_retries`` set, so a task whose worker dies (a lost
  node, a killed process) is re-run by Ray; an exception raised by the cell itself is not retried
  (``retry_exceptions=False``: it would fail the same way again) and reaches the caller. The tasks
  run with the driver's BLAS thread count (a ``runtime_env`` setting ``OMP_NUM_THREADS`` and
  friends): Ray gives its workers one BLAS thread, and a matrix product's last bits depend on the
  thread count, so the exact store's scores, and a near tie's order, would differ from the local run;
- the embedding cache: tasks and actors run with the driver's cache folder (``RAGAUDIT_CACHE_DIR`` in
  the ``runtime_env``, see :meth:`RayExecutor.cache_env`), so the cells read the vectors the driver
  wrote instead of a folder under the worker's own working directory, and with
  ``RAGAUDIT_CACHE_SHARED`` when the driver sets it, so every machine opens the cache file in the
  same journal mode (:mod:`ragaudit.sqlite_files`);
- embedding: a Ray Data dataset of text groups, ``map_batches`` over an actor pool
  (``concurrency=actors``): each actor loads the model once in its constructor and encodes one group
  per call, exactly as :meth:`~ragaudit.retrieval.embedder.Embedder.encode` does locally.

Ray is the ``ray`` extra, imported only here and only when this executor is made.
"""

from __future__ import annotations

import asyncio
import copy
import os
import socket
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Sequence
from typing import Any, TypeVar

import numpy as np

from ragaudit.cache import CACHE_ENV, default_cache_dir
from ragaudit.errors import MissingDependencyError
from ragaudit.retrieval.embedder import Embedder, FloatMatrix
from ragaudit.sqlite_files import SHARED_ENV

S = TypeVar("S")
C = TypeVar("C")
R = TypeVar("R")


def import_ray() -> Any:
    """The ``ray`` module, or :class:`MissingDependencyError` naming ``pip install 'ragaudit[ray]'``."""
    try:
        import ray
        import ray.data
    except ImportError:
        raise MissingDependencyError("ray[data]", "ray") from None
    return ray


BLAS_THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def blas_threads() -> int:
    """The threads this process's BLAS (numpy's matrix products) runs on: what threadpoolctl reports
    when it is installed, else the usual variables, else the CPU count (OpenBLAS's default)."""
    try:
        from threadpoolctl import threadpool_info

        counts = [int(i["num_threads"]) for i in threadpool_info() if i.get("user_api") == "blas"]
        if counts:
            return max(counts)
    except ImportError:
        pass
    for key in BLAS_THREAD_VARIABLES:
        value = os.environ.get(key, "").strip()
        if value.isdigit() and int(value) > 0:
            return int(value)
    return os.cpu_count() or 1


def _run_cell(fn: Callable[[Any, Any], Coroutine[Any, Any, Any]], shared: Any, cell: Any) -> Any:
    """The body of a cell task: the cell's coroutine in a fresh event loop on the worker."""
    return asyncio.run(fn(shared, cell))


class _EmbedActor:
    """A Ray Data actor: loads the model once, then encodes one group of texts per row."""

    def __init__(self, embedder: Embedder, threads: int) -> None:
        self.embedder = copy.copy(embedder)
        self.embedder.threads = threads  # ONNX Runtime threads = the CPUs Ray gave this actor
        self.embedder.encode(["ragaudit actor warm-up"])  # the one model load of this actor

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        blobs = []
        rows = []
        for texts in batch["texts"]:
            matrix = self.embedder.encode([str(t) for t in texts])
            blobs.append(np.ascontiguousarray(matrix, dtype="<f4").tobytes())
            rows.append(matrix.shape[0])
        return {
            "group": np.asarray(batch["group"], dtype=np.int64),
            "rows": np.asarray(rows, dtype=np.int64),
            "vectors": np.asarray(blobs, dtype=object),
        }


class RayExecutor:
    """Cells as Ray tasks, embedding through Ray Data (see the module docstring).

    ``embed_actors``: actors in the embedding pool (default: the cluster's CPUs / ``actor_cpus``, at
    least 1); ``actor_cpus``: CPUs Ray reserves for each actor, which are also its ONNX Runtime
    threads; ``task_retries``: Ray's ``max_retries`` for a cell task whose worker is lost.
    """

    name = "ray"

    def __init__(
        self,
        *,
        address: str | None = None,
        embed_actors: int | None = None,
        actor_cpus: int = 1,
        task_retries: int = 3,
    ) -> None:
        if embed_actors is not None and embed_actors < 1:
            raise ValueError(f"embed_actors must be a positive integer (got {embed_actors})")
        if actor_cpus < 1:
            raise ValueError(f"actor_cpus must be a positive integer (got {actor_cpus})")
        self.actor_cpus = actor_cpus
        self.ray = import_ray()
        self._owns = not self.ray.is_initialized()
        if self._owns:
            self.ray.init(address=address, log_to_driver=False, configure_logging=False)
        self.embed_actors = embed_actors
        self.task_retries = task_retries
        self.blas_threads = blas_threads()
        self.last_embedding: dict[str, Any] | None = None

    def cell_env(self) -> dict[str, str]:
        """The environment variables every cell task runs with: the driver's BLAS thread count and
        :meth:`cache_env`."""
        return {**{key: str(self.blas_threads) for key in BLAS_THREAD_VARIABLES}, **self.cache_env()}

    def one_machine(self) -> bool:
        """Every alive node of the cluster runs on this machine (its host name)."""
        here = socket.gethostname()
        return all(n.get("NodeManagerHostname") == here for n in self.ray.nodes() if n.get("Alive"))

    def cache_env(self) -> dict[str, str]:
        """The cache settings tasks and actors get from the driver.

        ``RAGAUDIT_CACHE_DIR``: the driver's cache folder as an absolute path, when the driver sets the
        variable (on a cluster: a folder every node mounts at that path), or when every node is this
        machine (the default ``./.ragaudit/cache`` would otherwise be under each worker's working
        directory, the one the cluster was started in, not the driver's). Unset on a cluster of
        several machines, each node keeps its own default folder and embeds what it does not find.
        ``RAGAUDIT_CACHE_SHARED``: passed on as the driver has it, so every machine opens the SQLite
        file in the same journal mode."""
        env: dict[str, str] = {}
        if os.environ.get(CACHE_ENV, "").strip() or self.one_machine():
            env[CACHE_ENV] = str(default_cache_dir().absolute())
        shared = os.environ.get(SHARED_ENV, "").strip()
        if shared:
            env[SHARED_ENV] = shared
        return env

    def cluster(self) -> dict[str, Any]:
        """Alive nodes and the cluster's CPUs, as Ray reports them now."""
        nodes = [n for n in self.ray.nodes() if n.get("Alive")]
        cpus = self.ray.cluster_resources().get("CPU", 0.0)
        return {"nodes": len(nodes), "cpus": int(cpus)}

    def actors(self) -> int:
        return self.embed_actors or max(1, self.cluster()["cpus"] // self.actor_cpus)

    async def map(self, fn: Callable[[S, C], Awaitable[R]], shared: S, cells: Sequence[C]) -> list[R]:
        ray = self.ray
        shared_ref = ray.put(shared)
        task = ray.remote(
            max_retries=self.task_retries,
            retry_exceptions=False,
            num_cpus=1,
            runtime_env={"env_vars": self.cell_env()},
        )(_run_cell)
        refs = [task.remote(fn, shared_ref, cell) for cell in cells]
        results: list[R] = await asyncio.to_thread(ray.get, refs)
        return results

    def embed_groups(
        self, embedder: Embedder, groups: Sequence[Sequence[str]]
    ) -> Iterator[tuple[int, FloatMatrix]]:
        """Each group encoded by one ``Embedder.encode`` call on a pool actor, yielded as it arrives
        (streamed from Ray Data, so the driver never holds every vector at once)."""
        if not groups:
            return
        ray = self.ray
        actors = min(self.actors(), len(groups))
        started = time.perf_counter()
        items = [{"group": i, "texts": list(g)} for i, g in enumerate(groups)]
        dataset = ray.data.from_items(items, override_num_blocks=len(items))
        out = dataset.map_batches(
            _EmbedActor,
            fn_constructor_args=(embedder, self.actor_cpus),
            batch_size=1,
            batch_format="numpy",
            concurrency=actors,
            num_cpus=self.actor_cpus,
            runtime_env={"env_vars": self.cache_env()},
        )
        seen: set[int] = set()
        dim = embedder.dim
        for row in out.iter_rows():
            index = int(row["group"])
            vectors = np.frombuffer(row["vectors"], dtype="<f4").reshape(int(row["rows"]), dim)
            seen.add(index)
            yield index, vectors.astype(np.float32)
        if len(seen) != len(groups):
            missing = sorted(set(range(len(groups))) - seen)
            raise RuntimeError(f"Ray Data returned no vectors for groups {missing[:5]}")
        self.last_embedding = {
            "actors": actors,
            "actor_cpus": self.actor_cpus,
            "groups": len(groups),
            "texts": sum(len(g) for g in groups),
            "group_size": max(len(g) for g in groups),
            "model_batch_size": embedder.batch_size,
            "seconds": round(time.perf_counter() - started, 3),
        }

    def info(self) -> dict[str, Any]:
        return {
            "name": "ray",
            **self.cluster(),
            "ray_version": str(self.ray.__version__),
            "blas_threads": self.blas_threads,
        }

    def close(self) -> None:
        """Disconnect, if this executor was the one that called ``ray.init()``."""
        if self._owns and self.ray.is_initialized():
            self.ray.shutdown()
