"""Fault tolerance under load: 2,000 queries at concurrency 64 against a local server injecting faults.

The smaller sibling of ``bench/load_bench.py`` (10,000 queries, same server behaviour and checks):
every case comes back exactly once, with its own results or the expected reason; the results file
holds each case once; the error rate is reported by kind and gates; resuming a finished run sends
nothing.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from load_bench import PERMANENT, fault_handler, fault_kind, make_cases, run_load, verify
from ragaudit.retrieval.http import HttpRetriever
from ragaudit.runner.execute import run_cases
from ragaudit.security.error_rate import check_error_rate, classify_error, report_error_rate, run_error_rate
from servers import LocalServer

N = 2_000


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    results = tmp_path_factory.mktemp("load") / "results.jsonl"
    with LocalServer(fault_handler(faults=True)) as server:
        result = asyncio.run(run_load(server.url, N, 64, results))
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
    return result, results, sent, resumed, after_resume


def test_nothing_is_lost_or_mixed_up_under_load(loaded) -> None:  # type: ignore[no-untyped-def]
    result, results, sent, _, _ = loaded
    assert verify(result, faults=True, results_path=results) == []
    assert len(result.run.cases) == N
    retried = sum(1 for i in range(N) if fault_kind(i) in (1, 2, 3, 4))
    assert sent >= N + retried  # every retry really went over the wire
    assert result.per_second > 50  # a floor that only a broken runner misses, even on a loaded machine


def test_error_rate_is_reported_by_kind_and_gates(loaded) -> None:  # type: ignore[no-untyped-def]
    result = loaded[0]
    permanent = sum(1 for i in range(N) if fault_kind(i) in PERMANENT)
    errors = result.errors
    assert errors.total == N and errors.failed == permanent and errors.rate == permanent / N
    assert errors.by_kind == {"malformed-response": permanent}
    assert errors.retried >= sum(1 for i in range(N) if fault_kind(i) in (1, 2, 3, 4))
    assert len(errors.to_dict()["examples"]["malformed-response"]) == 5
    assert not check_error_rate(errors, 0.01).passed
    gate = check_error_rate(errors, 0.03)
    assert gate.passed and "error rate 2.00% (40 of 2000 cases failed: 40 malformed-response)" in gate.message


def test_resume_of_a_finished_run_sends_nothing(loaded) -> None:  # type: ignore[no-untyped-def]
    result, _, sent, resumed, after_resume = loaded
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
