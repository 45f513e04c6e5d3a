"""Where an experiment's cells run: in this process (``local``) or as tasks on a Ray cluster (``ray``).

An experiment (a benchmark's pipelines, an ablation's variants, a chunking sweep's points) is a list
of independent *cells* and one *shared* object every cell reads (the corpus, the golden set, indexes
built once). :meth:`Executor.map` runs ``fn(shared, cell)`` for every cell and returns the results in
the cells' order:

- :class:`LocalExecutor` awaits the cells one after another in the caller's event loop: exactly what
  the experiments did before executors existed;
- :class:`~ragaudit.runner.ray_executor.RayExecutor` puts ``shared`` in Ray's object store once and
  runs each cell as one Ray task (retried by Ray when its worker is lost).

``fn`` must be a module-level ``async`` function (Ray pickles it by reference) whose result depends
only on ``shared`` and ``cell``, so both executors give the same result.

:meth:`Executor.embed_groups` embeds groups of texts with an :class:`~ragaudit.retrieval.embedder.Embedder`,
each group encoded as one call (the ONNX encoder batches within a group by token length, and int8
vectors depend on the batch, so the groups are the unit of reproducibility): locally in this process,
on Ray through Ray Data ``map_batches`` over an actor pool.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import Any, Protocol, TypeVar

from ragaudit.errors import InputError
from ragaudit.retrieval.embedder import Embedder, FloatMatrix

EXECUTORS = ("local", "ray")
S = TypeVar("S")
C = TypeVar("C")
R = TypeVar("R")


class Executor(Protocol):
    """Runs an experiment's cells and embeds groups of texts (see the module docstring)."""

    @property
    def name(self) -> str: ...

    async def map(self, fn: Callable[[S, C], Awaitable[R]], shared: S, cells: Sequence[C]) -> list[R]: ...

    def embed_groups(
        self, embedder: Embedder, groups: Sequence[Sequence[str]]
    ) -> Iterator[tuple[int, FloatMatrix]]:
        """``(group index, vectors)`` for every group, as each is done (any order), so the caller can
        store them while the rest are embedded."""
        ...

    def info(self) -> dict[str, Any]:
        """What a report's provenance records about where the work ran."""
        ...

    def close(self) -> None: ...


class LocalExecutor:
    """Every cell in this process, one after another (today's behaviour)."""

    name = "local"

    async def map(self, fn: Callable[[S, C], Awaitable[R]], shared: S, cells: Sequence[C]) -> list[R]:
        return [await fn(shared, cell) for cell in cells]

    def embed_groups(
        self, embedder: Embedder, groups: Sequence[Sequence[str]]
    ) -> Iterator[tuple[int, FloatMatrix]]:
        for index, group in enumerate(groups):
            yield index, embedder.encode(group)

    def info(self) -> dict[str, Any]:
        return {"name": "local", "nodes": 1, "workers": 1}

    def close(self) -> None:
        return None


async def _await_job(job: Callable[[], Awaitable[R]], _cell: int) -> R:
    return await job()


async def run_once(executor: Executor, job: Callable[[], Awaitable[R]]) -> R:
    """``await job()`` as the one cell of ``executor``: in this process, or as one Ray task. ``job`` is
    a ``functools.partial`` of a module-level ``async`` function (Ray pickles it by reference); a
    synchronous one goes through ``functools.partial(asyncio.to_thread, fn, ...)``."""
    (result,) = await executor.map(_await_job, job, [0])
    return result


def make_executor(
    name: str,
    *,
    address: str | None = None,
    embed_actors: int | None = None,
    actor_cpus: int = 1,
    task_retries: int = 3,
) -> Executor:
    """``local`` or ``ray``; for ``ray``, ``address`` follows ``ray.init()``'s own rules (``None``:
    ``RAY_ADDRESS``, else the cluster last started on this machine, else a new local instance;
    ``"auto"``: an existing cluster or an error; ``"ray://host:port"``: Ray Client)."""
    if name == "local":
        return LocalExecutor()
    if name == "ray":
        from ragaudit.runner.ray_executor import RayExecutor

        return RayExecutor(
            address=address, embed_actors=embed_actors, actor_cpus=actor_cpus, task_retries=task_retries
        )
    raise InputError("--executor", None, f"unknown executor {name!r}", f"use one of: {', '.join(EXECUTORS)}")
