"""Run a :class:`~ragaudit.retrieval.protocol.Retriever` over golden cases, concurrently and bounded.

Every case comes back: with its ranking, or with the error that stopped it (an exception, a timeout,
a malformed result, no tenant). Nothing is dropped, and a failed case scores 0 downstream.

What the runner does per case:

- asks the case's tenant (else ``default_tenant``); at most ``concurrency`` requests are in flight;
- gives each attempt ``timeout_s`` and retries transient failures (timeouts, connection errors,
  HTTP 408/429/5xx) under a :class:`~ragaudit.retry.RetryPolicy`; the number of attempts is kept;
- records the latency of the attempt that answered, and the error of a case that failed;
- keeps the ranking as returned (a repeated id keeps its slot and is counted in ``duplicates``);
- checks every returned chunk's tenant against the caller's (:mod:`ragaudit.runner.tenancy`);
- appends the finished case to the results file, if one is given (:mod:`ragaudit.runner.checkpoint`),
  so ``resume=True`` continues an interrupted run without redoing finished cases.

Batch fast path: a retriever that also has ``search_many(*, tenant_id, queries, top_k)`` returning one
list of chunks per query (sync: run in a worker thread; or async) gets the cases grouped by tenant,
``batch_size`` at a time, one batch after another (in-process engines already use every core per
batch). A batch that fails as a whole is re-run case by case through ``search``, so errors, retries
and timeouts stay per case; the latency of a batched case is its batch's time divided by its size.
``Run.latency_basis`` says which it was (:func:`latency_basis`), and reports print it beside the figures:
only ``per query, one at a time`` is the latency one query sees on its own.

Retrievers that hold connections may define ``async start_session(*, concurrency)`` and
``async end_session()``; the runner calls them around the run (the HTTP adapter sizes its connection
pool from ``concurrency`` there).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ragaudit.data.run import CaseRun, LeakRecord, RankedItem, Run, count_duplicates, to_ranked_items
from ragaudit.data.schema import GoldenCase
from ragaudit.errors import InputError
from ragaudit.retrieval.protocol import Retriever
from ragaudit.retry import Attempted, RetryPolicy, call_with_retries, describe
from ragaudit.runner.checkpoint import ResultsWriter, open_results
from ragaudit.runner.progress import progress_bar
from ragaudit.runner.tenancy import CaseIsolation, assess_run, check_chunks, response_leaks

if TYPE_CHECKING:
    from ragaudit.runner.tenancy import ChunkOwnership

T = TypeVar("T")

NO_TENANT = "no tenant: the case has no tenant_id and no default tenant was given"
DEFAULT_RETRY = RetryPolicy()


PER_QUERY = "per query, one at a time"
"""The latency basis of a run that sent one query at a time, each timed on its own."""


def latency_basis(batched: bool, concurrency: int, batch_size: int) -> str:
    """What a case's ``latency_ms`` means in a run: each query timed alone (:data:`PER_QUERY`), timed
    alone but with others in flight (queueing, and engines that batch concurrent requests, count), or
    a batch call's time divided by its queries."""
    if batched:
        return f"batched: a call's time / its queries (up to {batch_size} per call)"
    return PER_QUERY if concurrency == 1 else f"per query, up to {concurrency} in flight"


def supports_batches(retriever: object) -> bool:
    """True when ``retriever`` offers the ``search_many`` batch fast path (and, when it says whether it
    can batch right now through a ``batchable`` attribute, says yes)."""
    return callable(getattr(retriever, "search_many", None)) and bool(getattr(retriever, "batchable", True))


@dataclass(frozen=True)
class _Job:
    """What every case of one run shares."""

    retriever: Retriever
    top_k: int
    default_tenant: str | None
    timeout_s: float | None
    retry: RetryPolicy
    require_tenant_labels: bool
    ownership: ChunkOwnership | None = None
    shared: frozenset[str] = frozenset()
    """Shared tenants: their chunks may be returned to every tenant (:mod:`ragaudit.runner.tenancy`)."""
    checks: dict[str, CaseIsolation] = field(default_factory=dict)
    """The tenant check of every case this job ran, by case id: the run's verdict reuses it
    (``assess_run(checked=...)``), so each returned chunk's owner is established once."""

    def outcome(
        self, case_id: str, tenant: str, got: Attempted[list[RankedItem]], beside: Sequence[LeakRecord] = ()
    ) -> CaseRun:
        """The case's run; ``beside``: the leaks in the response's other values (:func:`response_leaks`)."""
        if got.error is not None or got.value is None:
            return CaseRun(
                [], got.error or "no result", got.latency_ms, attempts=got.attempts, tenant_id=tenant
            )
        items = got.value  # a repeated id keeps its slot (and gains nothing): the metrics policy
        found = check_chunks(items, tenant, self.ownership, self.require_tenant_labels, self.shared)
        self.checks[case_id] = found
        leaks = [*found.leaks, *beside]
        return CaseRun(items, None, got.latency_ms, count_duplicates(items), got.attempts, leaks, tenant)

    def beside(self, returned: object, tenant: str, query: str) -> list[LeakRecord]:
        return response_leaks(returned, tenant, query, self.ownership, self.shared)

    async def one(self, case: GoldenCase) -> CaseRun:
        tenant = case.tenant_id or self.default_tenant
        if not tenant:
            return CaseRun([], NO_TENANT, attempts=0)

        beside: list[LeakRecord] = []  # of the attempt that answered

        async def fetch() -> list[RankedItem]:
            returned = await self.retriever.search(tenant_id=tenant, query=case.query, top_k=self.top_k)
            items = to_ranked_items(returned)
            beside[:] = self.beside(returned, tenant, case.query)
            return items

        got = await call_with_retries(fetch, self.retry, case.id, self.timeout_s)
        return self.outcome(case.id, tenant, got, beside)

    async def batch(self, tenant: str, cases: Sequence[GoldenCase]) -> list[CaseRun] | None:
        """One ``search_many`` call for ``cases``; ``None`` when the call as a whole failed."""
        search_many: Callable[..., Any] = getattr(self.retriever, "search_many")  # noqa: B009
        queries = [case.query for case in cases]
        call = (
            search_many(tenant_id=tenant, queries=queries, top_k=self.top_k)
            if inspect.iscoroutinefunction(search_many)
            else asyncio.to_thread(search_many, tenant_id=tenant, queries=queries, top_k=self.top_k)
        )
        started = time.perf_counter()
        try:
            deadline = self.timeout_s * len(cases) if self.timeout_s is not None else None
            raw = await asyncio.wait_for(call, deadline)
        except Exception:
            return None
        if not isinstance(raw, list) or len(raw) != len(cases):
            return None
        each_ms = (time.perf_counter() - started) * 1000.0 / len(cases)
        outcomes: list[CaseRun] = []
        for case, result in zip(cases, raw, strict=True):
            try:
                got = Attempted(to_ranked_items(result), None, 1, each_ms)
                outcomes.append(self.outcome(case.id, tenant, got, self.beside(result, tenant, case.query)))
            except TypeError as exc:
                outcomes.append(CaseRun([], describe(exc), each_ms, tenant_id=tenant))
        return outcomes


async def _drain(items: Iterable[T], handle: Callable[[T], Awaitable[None]], workers: int) -> None:
    """Run ``handle`` over ``items`` with ``workers`` concurrent workers; on any failure stop them all."""
    queue = iter(items)

    async def worker() -> None:
        for item in queue:  # one shared iterator: each item goes to exactly one worker
            await handle(item)

    tasks = [asyncio.ensure_future(worker()) for _ in range(workers)]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


async def _run_batched(
    job: _Job,
    todo: Sequence[GoldenCase],
    batch_size: int,
    concurrency: int,
    record: Callable[[str, CaseRun], None],
) -> None:
    by_tenant: dict[str, list[GoldenCase]] = {}
    for case in todo:
        tenant = case.tenant_id or job.default_tenant
        if tenant:
            by_tenant.setdefault(tenant, []).append(case)
        else:
            record(case.id, CaseRun([], NO_TENANT, attempts=0))

    async def singly(case: GoldenCase) -> None:
        record(case.id, await job.one(case))

    for tenant, group in by_tenant.items():
        for start in range(0, len(group), batch_size):
            chunk = group[start : start + batch_size]
            outcomes = await job.batch(tenant, chunk)
            if outcomes is None:
                await _drain(chunk, singly, min(concurrency, len(chunk)))
                continue
            for case, outcome in zip(chunk, outcomes, strict=True):
                record(case.id, outcome)


async def _call_hook(retriever: object, name: str, **kwargs: Any) -> None:
    hook = getattr(retriever, name, None)
    if hook is not None and inspect.iscoroutinefunction(hook):
        await hook(**kwargs)


def _unique(cases: Sequence[GoldenCase]) -> list[GoldenCase]:
    seen: set[str] = set()
    out: list[GoldenCase] = []
    for case in cases:
        if case.id not in seen:
            seen.add(case.id)
            out.append(case)
    return out


async def run_cases(
    retriever: Retriever,
    cases: Sequence[GoldenCase],
    top_k: int,
    *,
    default_tenant: str | None = None,
    concurrency: int = 8,
    timeout_s: float | None = 30.0,
    name: str = "retriever",
    on_done: Callable[[str, CaseRun], None] | None = None,
    retry: RetryPolicy | None = None,
    results_path: str | Path | None = None,
    resume: bool = False,
    progress: bool | None = None,
    require_tenant_labels: bool = False,
    batch_size: int = 64,
    ownership: ChunkOwnership | None = None,
    identity: Mapping[str, str] | None = None,
    shared_tenants: frozenset[str] = frozenset(),
) -> Run:
    """Query ``retriever`` for each case (the case's tenant, else ``default_tenant``), at most
    ``concurrency`` at a time; return a :class:`Run` holding every case, in the order given.

    ``retry`` defaults to :data:`DEFAULT_RETRY` (3 attempts); pass ``NO_RETRY`` to try once.
    ``results_path`` appends each finished case to a JSONL results file; with ``resume=True`` the
    cases already in it are taken from it, not queried again. ``progress`` shows a bar on stderr
    (``None``: only when stderr is a terminal). ``require_tenant_labels`` counts a chunk without a
    tenant label as a leak. ``batch_size`` > 1 enables the ``search_many`` fast path when the retriever
    has one. ``on_done(case_id, case_run)`` is called for each case this call runs (resumed ones are
    not re-announced). Case ids repeated in ``cases`` are run once. ``ownership`` (an index over the
    corpus) decides who owns each returned chunk by id and content instead of trusting the service's
    label; the run's tenant-isolation verdict is in ``Run.isolation`` (:mod:`ragaudit.runner.tenancy`).
    ``identity`` (what runs: hashes of the dataset, config and corpus, the endpoint) is stored beside
    the results file, and resuming a file another system wrote is refused.
    ``shared_tenants``' chunks may be returned to every tenant (counted, not leaks).
    """
    if top_k <= 0:
        raise ValueError(f"top_k must be a positive integer (got {top_k})")
    if concurrency <= 0:
        raise ValueError(f"concurrency must be a positive integer (got {concurrency})")
    if timeout_s is not None and timeout_s <= 0:
        raise ValueError(f"timeout_s must be positive or None (got {timeout_s})")
    unique = _unique(cases)
    _check_questions(unique)
    writer: ResultsWriter | None = None
    finished: dict[str, CaseRun] = {}
    if results_path is not None:
        writer, finished = open_results(
            results_path, resume=resume, top_k=top_k, name=name, identity=identity
        )
    wanted = {case.id for case in unique}
    results = {case_id: case for case_id, case in finished.items() if case_id in wanted}
    todo = [case for case in unique if case.id not in results]
    job = _Job(
        retriever,
        top_k,
        default_tenant,
        timeout_s,
        retry or DEFAULT_RETRY,
        require_tenant_labels,
        ownership,
        shared_tenants,
    )
    bar = progress_bar(len(unique), initial=len(unique) - len(todo), enabled=progress, desc=name)

    def record(case_id: str, outcome: CaseRun) -> None:
        results[case_id] = outcome
        if writer is not None:
            writer.append(case_id, outcome)
        bar.update()
        if on_done is not None:
            on_done(case_id, outcome)

    async def singly(case: GoldenCase) -> None:
        record(case.id, await job.one(case))

    batched = batch_size > 1 and supports_batches(retriever)
    try:
        if todo:
            await _call_hook(retriever, "start_session", concurrency=concurrency)
            try:
                if batched:
                    await _run_batched(job, todo, batch_size, concurrency, record)
                else:
                    await _drain(todo, singly, min(concurrency, len(todo)))
            finally:
                await _call_hook(retriever, "end_session")
    finally:
        bar.close()
        if writer is not None:
            writer.close()
    source = str(results_path) if results_path is not None else None
    run = Run({case.id: results[case.id] for case in unique}, name=name, source=source)
    run.latency_basis = latency_basis(batched, min(concurrency, max(len(todo), 1)), batch_size)
    tenants = {case.id: case.tenant_id or default_tenant for case in unique}
    assess_run(run, tenants, ownership, require_tenant_labels, shared_tenants, job.checks)
    return run


def _check_questions(cases: Sequence[GoldenCase]) -> None:
    """Refuse cases with no question to send: a TREC qrels file holds judgments only, and querying a live
    source with "" returned nothing for every case, a run of zeros that exited 0 as if it had worked."""
    blank = [case.id for case in cases if not case.query.strip()]
    if blank:
        shown = ", ".join(repr(i) for i in blank[:3]) + (" ..." if len(blank) > 3 else "")
        raise InputError(
            "dataset",
            None,
            f"{len(blank)} of {len(cases)} case(s) have no question to send ({shown}): a TREC qrels file holds "
            "judgments, not queries",
            "give the questions (a golden JSONL, or a BEIR folder with queries.jsonl), or score a run file "
            "with --run",
        )


async def run_interleaved(
    retrievers: Mapping[str, Retriever],
    cases: Sequence[GoldenCase],
    top_k: int,
    *,
    default_tenant: str | None = None,
    timeout_s: float | None = 30.0,
    retry: RetryPolicy | None = None,
    progress: bool | None = None,
    require_tenant_labels: bool = False,
    ownership: Mapping[str, ChunkOwnership] | None = None,
    shared_tenants: frozenset[str] = frozenset(),
) -> dict[str, Run]:
    """Every case through every retriever, one query at a time, the retrievers taking turns case by case
    (case i starts with retriever i mod n): ``{name: Run}``, each as :func:`run_cases` would return it.

    Timed one after another, a benchmark's pipelines would each meet whatever load the machine had
    during their own stretch; taking turns, they meet the same load, so their per-query latencies can
    be compared. Latency basis: :data:`PER_QUERY`. ``ownership[name]`` checks retriever ``name``'s
    chunks from the corpus (:func:`run_cases`).
    """
    if top_k <= 0:
        raise ValueError(f"top_k must be a positive integer (got {top_k})")
    names = list(retrievers)
    unique = _unique(cases)
    owners = ownership or {}
    jobs = {
        n: _Job(
            r,
            top_k,
            default_tenant,
            timeout_s,
            retry or DEFAULT_RETRY,
            require_tenant_labels,
            owners.get(n),
            shared_tenants,
        )
        for n, r in retrievers.items()
    }
    results: dict[str, dict[str, CaseRun]] = {n: {} for n in names}
    bar = progress_bar(len(unique) * len(names), enabled=progress, desc="pipelines taking turns")
    started: list[Retriever] = []
    try:
        for name in names:
            await _call_hook(retrievers[name], "start_session", concurrency=1)
            started.append(retrievers[name])
        for i, case in enumerate(unique):
            for j in range(len(names)):
                name = names[(i + j) % len(names)]
                results[name][case.id] = await jobs[name].one(case)
                bar.update()
    finally:
        for retriever in started:
            await _call_hook(retriever, "end_session")
        bar.close()
    tenants = {case.id: case.tenant_id or default_tenant for case in unique}
    runs: dict[str, Run] = {}
    for name in names:
        run = Run({case.id: results[name][case.id] for case in unique}, name=name)
        run.latency_basis = PER_QUERY
        assess_run(run, tenants, owners.get(name), require_tenant_labels, shared_tenants, jobs[name].checks)
        runs[name] = run
    return runs


async def warm_up(retriever: Retriever, cases: Sequence[GoldenCase], tenant: str | None, top_k: int) -> None:
    """Send the first case that has a tenant once before a timed run, so loading models (and a cold
    connection) is not counted as the first case's latency. The text is made new (a marker is added),
    so an embedding cache that already holds the query cannot answer it without loading the model. A
    failure here is ignored: the timed run meets and reports it per case."""
    for case in cases:
        caller = case.tenant_id or tenant
        if caller:
            query = f"{case.query} (ragaudit warm-up {time.time_ns()})"
            with contextlib.suppress(Exception):
                await retriever.search(tenant_id=caller, query=query, top_k=top_k)
            return
