"""The tenant audit against a service it cannot reach: it stops within seconds, is never clean, and says why.

Before the stop existed, an audit of a dead address retried each of its ~3,300 planned requests and took
15 minutes to say "incomplete"; a service that goes down mid-audit did the same.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import KB
from ragaudit.cli.main import main
from ragaudit.corpus.model import Chunk
from ragaudit.report.terminal import render_terminal
from ragaudit.retrieval.bm25 import BM25Retriever
from ragaudit.security.audit_verdict import audit_verdict
from ragaudit.security.request_loop import DOWN_AFTER, UNREACHABLE_AFTER, Stopper
from servers import LocalServer, Reply, Request

CORPUS = str(KB / "corpus.jsonl")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _audit(url: str, out: Path, *extra: str) -> tuple[int, dict[str, Any], float]:
    started = time.perf_counter()
    code = main(
        ["audit-tenants", "--corpus", CORPUS, "--endpoint", url, "--out", str(out), "--no-progress", *extra]
    )
    return code, json.loads(out.read_text(encoding="utf-8")), time.perf_counter() - started


# ------------------------------------------------------------------------------------ the stop rule


def test_the_stopper_counts_only_failures_to_reach_the_service() -> None:
    stopper = Stopper()
    for _ in range(10):  # refusals and garbage prove the service is up
        stopper.record("HTTP 400 Bad Request: rejected")
        stopper.record("response is not valid JSON")
    assert stopper.reason is None and stopper.reached
    fresh = Stopper()
    for _ in range(UNREACHABLE_AFTER - 1):
        fresh.record("connection failed: ConnectError: All connection attempts failed (3 attempts)")
    assert fresh.reason is None
    fresh.record("no response within 1.0 s (timeout)")
    assert fresh.reason is not None and "could not be reached" in fresh.reason


def test_after_the_service_answered_it_takes_a_longer_run_of_failures() -> None:
    stopper = Stopper()
    stopper.record(None)
    for _ in range(DOWN_AFTER - 1):
        stopper.record("connection failed: ConnectError: connection refused")
    stopper.record(None)  # one answer resets the run
    for _ in range(DOWN_AFTER - 1):
        stopper.record("connection failed: ConnectError: connection refused")
    assert stopper.reason is None
    stopper.record("connection failed: ConnectError: connection refused")
    assert stopper.reason is not None and "stopped answering" in stopper.reason


def test_a_leak_found_before_the_stop_is_still_a_leak() -> None:
    common: dict[str, Any] = {
        "checked": 10, "unattributed": 0, "failed": 0, "tenant_requests": 10, "errors_within_limit": True,
        "allow_unattributed": False,
    }  # fmt: skip
    verdict, check = audit_verdict(leaks=1, stopped="3 planned requests were not sent; down", **common)
    assert verdict == "leak" and check.state == "fail"
    verdict, check = audit_verdict(leaks=0, stopped="3 planned requests were not sent; down", **common)
    assert verdict == "incomplete" and check.state == "not_verified" and "stopped early" in check.reason


# ------------------------------------------------------------------------------------ end to end


@pytest.mark.parametrize("max_error_rate", ["0", "1"])
def test_an_unreachable_endpoint_stops_within_seconds_and_is_not_verified(
    max_error_rate: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"http://127.0.0.1:{_free_port()}/search"
    code, report, seconds = _audit(url, tmp_path / "audit.json", "--max-error-rate", max_error_rate)
    printed = capsys.readouterr().out
    assert code == 1 and report["verdict"] == "incomplete" and report["passed"] is False
    assert report["isolation"]["state"] == "not_verified"
    stopped = report["stopped"]
    assert stopped["not_sent"] > 1000 and "could not be reached" in stopped["reason"]
    assert report["asking"]["requests"]["total"] == UNREACHABLE_AFTER
    assert report["asking"]["max_top_k"]["rejected"] == []  # a dead address rejects nothing
    # the requests that never reached it are errors, not "0 of 0 requests failed"
    assert report["errors"]["failed"] == UNREACHABLE_AFTER and report["errors"]["by_kind"] == {
        "connection": UNREACHABLE_AFTER
    }
    assert (
        f"errors: {UNREACHABLE_AFTER} of {UNREACHABLE_AFTER} requests as the corpus's tenants failed"
        in printed
    )
    # no round ran: not "3 sent in 3 rounds"
    assert f"requests: {UNREACHABLE_AFTER} sent before the audit stopped early (3 rounds planned)" in printed
    assert "STOPPED EARLY" in printed and "could not be reached" in printed and "--endpoint" in printed
    assert "no request was answered" in printed
    assert seconds < 60  # the retries of three requests, not of three thousand


def test_a_service_that_times_out_stops_the_audit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with LocalServer(lambda request: Reply(body=[], delay_s=5.0)) as server:
        code, report, seconds = _audit(server.url, tmp_path / "audit.json", "--timeout", "0.2")
    capsys.readouterr()
    assert code == 1 and report["verdict"] == "incomplete"
    assert "timed out" in report["stopped"]["reason"] or "timeout" in report["stopped"]["reason"]
    assert seconds < 60


def test_a_service_that_goes_down_mid_audit_is_incomplete_not_clean(
    chunks: list[Chunk], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An honest service that answers 300 requests, then resets every connection."""
    bm25 = BM25Retriever.from_chunks(chunks)
    lock, served = threading.Lock(), [0]

    def handle(request: Request) -> Reply:
        with lock:
            served[0] += 1
            down = served[0] > 300
        if down:
            return Reply(reset=True)
        body = request.json()
        tenant = body.get("tenant_id")
        if not isinstance(tenant, str) or not tenant.strip():
            return Reply(status=400, body={"detail": "no tenant"})
        hits = bm25.search_many(tenant, [body["query"]], body["top_k"])[0]
        return Reply(body=[{k: h[k] for k in ("chunk_id", "score", "content", "tenant_id")} for h in hits])

    with LocalServer(handle) as server:
        code, report, _ = _audit(server.url, tmp_path / "audit.json")
    printed = capsys.readouterr().out
    assert code == 1 and report["verdict"] == "incomplete" and report["leaks"]["count"] == 0
    assert "stopped answering" in report["stopped"]["reason"] and report["stopped"]["not_sent"] > 0
    assert report["checked_chunks"] > 0  # what was answered before the stop was checked
    assert "STOPPED EARLY" in printed


def test_the_stopped_report_reads_back_not_verified_in_every_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "audit.json"
    _audit(f"http://127.0.0.1:{_free_port()}/search", out)
    capsys.readouterr()
    report = json.loads(out.read_text(encoding="utf-8"))
    assert "STOPPED EARLY" in render_terminal(report)
    md = tmp_path / "audit.md"
    assert main(["report", str(out), "--format", "md", "--out", str(md)]) == 0
    text = md.read_text(encoding="utf-8")
    assert "stopped early" in text and "✅" not in text
    from ragaudit.gates.audit_tie import audit_unverified  # what `ragaudit gate --audit` asks of it

    why = audit_unverified(report)
    assert why is not None and "incomplete" in why and "stopped early" in why
