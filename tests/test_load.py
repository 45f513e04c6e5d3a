"""Fault tolerance under load: 2,000 queries at concurrency 64 against a local server injecting faults.

The smaller sibling of ``bench/load_bench.py`` (10,000 queries, same server behaviour and checks):
every case comes back exactly once, with its own results or the expected reason; the results file
holds each case once; the error rate is reported by kind and gates; resuming a finished run sends
nothing.

Nothing here depends on how fast the machine is. The load run has no per-attempt deadline: with 64
queries in flight on a starved machine (load average 17 on 2 cores) a plain query waited over 3 s in
the queue, so a 3 s deadline failed cases that had no fault (3 runs in 5 under such load). Its faults
(503, reset, 429, bad JSON, bad score) are decided by the attempt count, never by the clock. The
deadline is checked on its own at concurrency 8, where a plain query takes a small fraction of it
even on a starved machine, with a reply that comes a full second after it. That the runner really
keeps 64 queries in flight is counted, not timed (it was a queries-per-second floor).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from load_bench import PERMANENT, fault_handler, fault_kind, make_cases, query, run_load, verify
from ragaudit.retrieval.http import HttpRetriever
from ragaudit.retrieval.protocol import RetrievedChunk
from ragaudit.runner.execute import run_cases
from ragaudit.security.error_rate import check_error_rate, classify_error, report_error_rate, run_error_rate
from servers import LocalServer

N = 2_000
CONCURRENCY = 64


class CountingRetriever:
    """An :class:`HttpRetriever` that counts the searches in flight at once (the runner's hooks pass through)."""

    def __init__(self, inner: HttpRetriever) -> None:
        self.inner = inner
        self.in_flight = 0
        self.peak = 0

    async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            return await self.inner.search(tenant_id=tenant_id, query=query, top_k=top_k)
        finally:
            self.in_flight -= 1

    def __getattr__(self, name: str) -> object:  # start_session / end_session size and close the pool
        return getattr(self.inner, name)


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    results = tmp_path_factory.mktemp("load") / "results.jsonl"
    with LocalServer(fault_handler(faults=True, slow=False)) as server:
        counting = CountingRetriever(HttpRetriever(server.url, timeout_s=600.0))
        result = asyncio.run(
            run_load(server.url, N, CONCURRENCY, results, retriever=counting, deadline=False)
        )
        sent = len(server.hits)
        again = run_cases(
            HttpRetriever(server.url),
            make_cases(N),
            5,
            results_path=results,
            resume=True,
            progress=False,
            name="load",
        )
        resumed = asyncio.run(again)
        after_resume = len(server.hits)
    return result, results, sent, resumed, after_resume, counting.peak


def test_nothing_is_lost_or_mixed_up_under_load(loaded) -> None:  # type: ignore[no-untyped-def]
    result, results, sent, *_, peak = loaded
    assert verify(result, faults=True, results_path=results) == []
    assert len(result.run.cases) == N
    retried = sum(1 for i in range(N) if fault_kind(i, slow=False) in (1, 2, 4))
    assert retried == 60 and sent == N + retried  # every retry went over the wire, and nothing else
    assert peak == CONCURRENCY  # 64 queries really were in flight at once


def test_a_reply_slower_than_the_deadline_is_abandoned_retried_and_not_mixed_up() -> None:
    """Query 3's first reply comes 4 s after it was asked (SLOW_S), a second after the 3 s deadline
    whatever the machine's speed; 7 other queries in flight at most, each of a few milliseconds."""
    n = 48  # faults 1-6 once each: 503, reset, slow, 429, bad JSON, bad score
    with LocalServer(fault_handler(faults=True)) as server:
        result = asyncio.run(run_load(server.url, n, 8))
        seen = server.queries()
    assert verify(result, faults=True) == []
    slow = result.run.cases["c3"]
    assert fault_kind(3) == 3 and slow.error is None and slow.attempts == 2
    assert slow.ranking == [f"{query(3)}#0", f"{query(3)}#1"]  # its own results, from the second reply
    assert seen[query(3)] == 2 and sum(seen.values()) == n + 4  # one retry each for faults 1-4


def test_error_rate_is_reported_by_kind_and_gates(loaded) -> None:  # type: ignore[no-untyped-def]
    result = loaded[0]
    permanent = sum(1 for i in range(N) if fault_kind(i) in PERMANENT)
    errors = result.errors
    assert errors.total == N and errors.failed == permanent and errors.rate == permanent / N
    assert errors.by_kind == {"malformed-response": permanent}
    assert errors.retried == sum(1 for i in range(N) if fault_kind(i, slow=False) in (1, 2, 4))
    assert len(errors.to_dict()["examples"]["malformed-response"]) == 5
    assert not check_error_rate(errors, 0.01).passed
    gate = check_error_rate(errors, 0.03)
    assert gate.passed and "error rate 2.00% (40 of 2000 cases failed: 40 malformed-response)" in gate.message


def test_resume_of_a_finished_run_sends_nothing(loaded) -> None:  # type: ignore[no-untyped-def]
    result, _, sent, resumed, after_resume, _ = loaded
    assert after_resume == sent
    assert {k: (c.ranking, c.error) for k, c in resumed.cases.items()} == {
        k: (c.ranking, c.error) for k, c in result.run.cases.items()
    }


def test_error_kinds_and_missing_cases() -> None:
    assert classify_error("timeout after 30s (3 attempts)") == "timeout"
    assert classify_error("no response within 30s (ReadTimeout)") == "timeout"
    assert classify_error("HTTP 503: overloaded (3 attempts)") == "http-5xx"
    assert classify_error("HTTP 504: gateway timeout") == "http-5xx"
    assert classify_error("HTTP 429: slow down") == "http-429"
    assert classify_error("HTTP 401: missing token (check the credential in $TOKEN)") == "http-4xx"
    assert classify_error("connection failed: RemoteProtocolError: Server disconnected") == "connection"
    assert classify_error("ConnectionResetError: peer reset (3 attempts)") == "connection"
    assert classify_error("response is not valid JSON (Expecting value)") == "malformed-response"
    assert (
        classify_error("TypeError: retriever returned dict, expected a list of chunks")
        == "malformed-response"
    )
    assert (
        classify_error("no tenant: the case has no tenant_id and no default tenant was given") == "no-tenant"
    )
    assert classify_error("ValueError: index is corrupt") == "other"
    from ragaudit.data.run import CaseRun, Run

    run = Run({"a": CaseRun([]), "b": CaseRun([], "HTTP 500", attempts=3)})
    summary = run_error_rate(run, ["a", "b", "c"])
    assert (summary.total, summary.failed, summary.by_kind) == (3, 2, {"http-5xx": 1, "missing": 1})
    report = {
        "per_case": [
            {"id": "a", "status": "ok"},
            {"id": "b", "status": "error", "error": "HTTP 502"},
            {"id": "c", "status": "missing"},
        ]
    }
    assert report_error_rate(report).by_kind == {"http-5xx": 1, "missing": 1}
    with pytest.raises(ValueError, match="within"):
        check_error_rate(summary, 1.5)
