"""The async runner: every case accounted for, retries, timeouts, leaks, results file and resume."""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from ragaudit.corpus.model import Chunk
from ragaudit.data.run import CaseRun, RankedItem, Run
from ragaudit.data.run_jsonl import load_jsonl_run
from ragaudit.data.schema import Dataset, GoldenCase
from ragaudit.errors import InputError, PermanentRetrievalError, TransientRetrievalError, ValidationError
from ragaudit.evaluation.evaluate import evaluate
from ragaudit.retrieval.http import HttpRetriever
from ragaudit.retry import NO_RETRY, RetryPolicy
from ragaudit.runner.checkpoint import encode_line, read_results
from ragaudit.runner.chunk_owners import KnownChunkOwner, PipelineChunkOwnership
from ragaudit.runner.execute import NO_TENANT, run_cases
from ragaudit.runner.progress import active_counts, progress_bar

sys.path.insert(0, str(Path(__file__).resolve().parent))
from servers import LocalServer, Reply, Request, echo_handler

FAST = RetryPolicy(max_attempts=3, base_delay_s=0.001, max_delay_s=0.01)


def make_cases(n: int, tenant: str | None = "acme") -> list[GoldenCase]:
    return [GoldenCase(f"c{i}", f"query {i}", (f"query {i}#0",), tenant_id=tenant) for i in range(n)]


def go(retriever: Any, cases: Sequence[GoldenCase], **kwargs: Any) -> Run:
    kwargs.setdefault("retry", FAST)
    kwargs.setdefault("progress", False)
    return asyncio.run(run_cases(retriever, cases, 3, **kwargs))


class Scripted:
    """An in-process retriever whose behaviour is chosen by the query text."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.in_flight = 0
        self.max_in_flight = 0

    async def search(self, *, tenant_id: str, query: str, top_k: int) -> Any:
        self.calls[query] += 1
        n = self.calls[query]
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(0.002)
            if query == "raises":
                raise ValueError("index is corrupt")
            if query == "hangs":
                await asyncio.sleep(5)
            if query == "hangs-once" and n == 1:
                await asyncio.sleep(5)
            if query == "flaky" and n < 3:
                raise ConnectionResetError("peer reset")
            if query == "transient-always":
                raise TransientRetrievalError("service overloaded")
            if query == "permanent":
                raise PermanentRetrievalError("index 'x' does not exist")
            if query == "not-a-list":
                return {"chunk_id": "a"}
            if query == "no-id":
                return [{"score": 1.0}]
            if query == "dupes":
                return [{"chunk_id": "a", "tenant_id": tenant_id}, {"chunk_id": "a"}, {"chunk_id": "b"}]
            return [{"chunk_id": f"{query}#0", "score": 1.0, "tenant_id": tenant_id}][:top_k]
        finally:
            self.in_flight -= 1


def test_every_case_is_accounted_for_with_its_reason() -> None:
    queries = [
        "ok",
        "raises",
        "hangs",
        "hangs-once",
        "flaky",
        "transient-always",
        "permanent",
        "not-a-list",
        "no-id",
        "dupes",
    ]
    cases = [GoldenCase(q, q, ("x",), tenant_id="acme") for q in queries]
    cases.append(GoldenCase("orphan", "no tenant here", ("x",)))
    retriever = Scripted()
    run = go(retriever, cases, timeout_s=0.2, concurrency=4)
    assert list(run.cases) == [*queries, "orphan"]
    outcome = {cid: (c.error, c.attempts) for cid, c in run.cases.items()}
    assert outcome["ok"] == (None, 1)
    assert outcome["raises"] == ("ValueError: index is corrupt", 1)
    assert outcome["hangs"] == ("timeout after 0.2s (3 attempts)", 3)
    assert outcome["hangs-once"] == (None, 2)
    assert outcome["flaky"] == (None, 3)
    assert outcome["transient-always"] == ("service overloaded (3 attempts)", 3)
    assert outcome["permanent"] == ("index 'x' does not exist", 1)
    assert outcome["not-a-list"][0] == "TypeError: retriever returned dict, expected a list of chunks"
    assert outcome["no-id"][0] == "TypeError: result #1 has no 'chunk_id' string"
    assert outcome["orphan"] == (NO_TENANT, 0)
    assert run.cases["dupes"].ranking == ["a", "a", "b"] and run.cases["dupes"].duplicates == 1
    assert retriever.calls["raises"] == 1 and retriever.calls["not-a-list"] == 1  # not retried
    assert run.cases["hangs-once"].latency_ms is not None and run.cases["hangs-once"].latency_ms < 190
    assert all(c.tenant_id == "acme" for cid, c in run.cases.items() if cid != "orphan")


def test_failed_cases_score_zero_and_are_counted() -> None:
    cases = [GoldenCase("good", "ok", ("ok#0",)), GoldenCase("bad", "raises", ("x",))]
    run = go(Scripted(), cases, default_tenant="acme")
    result = evaluate(Dataset(tuple(cases), "mem", "", "jsonl"), run, "R@3")
    assert result.counts.errors == 1
    assert {c.id: c.metrics["R@3"] for c in result.per_case} == {"good": 1.0, "bad": 0.0}
    assert result.metrics["R@3"] == 0.5


def test_concurrency_is_bounded_and_used() -> None:
    retriever = Scripted()
    run = go(retriever, make_cases(40), concurrency=5)
    assert len(run.cases) == 40 and retriever.max_in_flight == 5


def test_duplicate_case_ids_run_once_and_on_done_sees_each_case() -> None:
    retriever = Scripted()
    seen: list[str] = []
    cases = make_cases(3) + make_cases(1)
    run = go(retriever, cases, on_done=lambda cid, cr: seen.append(cid))
    assert list(run.cases) == ["c0", "c1", "c2"] and sorted(seen) == ["c0", "c1", "c2"]
    assert retriever.calls["query 0"] == 1


def test_arguments_are_checked() -> None:
    for bad in ({"concurrency": 0}, {"timeout_s": 0}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            go(Scripted(), make_cases(1), **bad)
    with pytest.raises(ValueError, match="top_k"):
        asyncio.run(run_cases(Scripted(), make_cases(1), 0))


@pytest.mark.backoff
def test_backoff_is_exponential_jittered_seeded_and_leaves_global_rng_alone() -> None:
    policy = RetryPolicy(base_delay_s=1.0, max_delay_s=5.0, jitter=0.5, seed=3)
    state = random.getstate()
    delays = [policy.delay_s("case-1", n) for n in range(1, 6)]
    assert random.getstate() == state
    assert delays == [policy.delay_s("case-1", n) for n in range(1, 6)]  # reproducible
    for n, delay in enumerate(delays, start=1):
        cap = min(5.0, 2.0 ** (n - 1))
        assert cap * 0.5 <= delay <= cap
    assert policy.delay_s("case-2", 1) != policy.delay_s("case-1", 1)  # decorrelated across cases
    assert RetryPolicy(seed=4).delay_s("case-1", 1) != RetryPolicy(seed=3).delay_s("case-1", 1)
    assert RetryPolicy(jitter=0.0, base_delay_s=0.5).delay_s("k", 3) == 2.0
    assert policy.delay_s("k", 1, retry_after_s=3.0) == 3.0
    assert policy.delay_s("k", 1, retry_after_s=60.0) == 5.0  # capped
    with pytest.raises(ValueError, match="max_attempts"):
        RetryPolicy(max_attempts=0)


def test_no_retry_policy_tries_once() -> None:
    retriever = Scripted()
    run = go(retriever, [GoldenCase("f", "flaky", ("x",), tenant_id="t")], retry=NO_RETRY)
    assert run.cases["f"].error == "ConnectionResetError: peer reset" and retriever.calls["flaky"] == 1


def test_leaks_are_recorded_per_case_and_kept_in_the_ranking() -> None:
    class Leaky:
        async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[dict[str, Any]]:
            return [
                {"chunk_id": "mine", "tenant_id": tenant_id},
                {"chunk_id": "foreign", "tenant_id": "globex"},
                {"chunk_id": "unlabelled"},
            ]

    lenient = go(Leaky(), make_cases(1)).cases["c0"]
    strict = go(Leaky(), make_cases(1), require_tenant_labels=True).cases["c0"]
    assert lenient.ranking == ["mine", "foreign", "unlabelled"]
    assert [(x.chunk_id, x.rank, x.claimed_tenant, x.caller_tenant) for x in lenient.leaks] == [
        ("foreign", 2, "globex", "acme")
    ]
    assert [x.chunk_id for x in strict.leaks] == ["foreign", "unlabelled"]


@pytest.mark.parametrize("batch_size", [1, 8])
def test_each_returned_chunk_is_attributed_once_and_the_verdict_reuses_it(batch_size: int) -> None:
    """The per-case leaks and the run's isolation verdict come from one check of each chunk."""
    chunks = [Chunk(f"query {i}#0", f"query {i}", "acme", 0, 1, "x") for i in range(3)]
    chunks.append(Chunk("foreign", "foreign", "globex", 0, 1, "y"))
    asked: Counter[str] = Counter()

    class Counting(PipelineChunkOwnership):
        def attribute_item(self, item: RankedItem) -> KnownChunkOwner:
            asked[item.chunk_id] += 1
            return super().attribute_item(item)

    class WithForeign:
        def ranking(self, query: str) -> list[dict[str, str]]:
            return [{"chunk_id": f"{query}#0"}, {"chunk_id": "foreign"}]

        async def search(self, *, tenant_id: str, query: str, top_k: int) -> Any:
            return self.ranking(query)

        def search_many(self, tenant_id: str, queries: Sequence[str], top_k: int) -> list[Any]:
            return [self.ranking(q) for q in queries]

    run = go(WithForeign(), make_cases(3), ownership=Counting(chunks), batch_size=batch_size)
    assert asked == Counter({"query 0#0": 1, "query 1#0": 1, "query 2#0": 1, "foreign": 3})
    assert [[(x.chunk_id, x.rank) for x in c.leaks] for c in run.cases.values()] == [[("foreign", 2)]] * 3
    assert run.isolation is not None
    assert (run.isolation.state, run.isolation.failures, run.isolation.verified) == ("fail", 3, 6)


# -- results file and resume ---------------------------------------------------------------------


def file_ids(path: Path) -> list[str]:
    return [json.loads(line)["id"] for line in path.read_text(encoding="utf-8").splitlines()]


def test_results_file_has_one_line_per_case_and_is_a_run_file(tmp_path: Path) -> None:
    path = tmp_path / "out" / "results.jsonl"
    cases = [*make_cases(5), GoldenCase("bad", "raises", ("x",), tenant_id="acme")]
    run = go(Scripted(), cases, results_path=path)
    assert sorted(file_ids(path)) == sorted(run.cases)
    loaded = load_jsonl_run(path)
    assert {cid: c.ranking for cid, c in loaded.cases.items()} == {
        cid: c.ranking for cid, c in run.cases.items()
    }
    assert loaded.cases["bad"].error == "ValueError: index is corrupt"
    assert run.source == str(path)
    meta = json.loads((tmp_path / "out" / "results.jsonl.meta.json").read_text())
    assert meta == {"format": "ragaudit-results/1", "top_k": 3, "name": "retriever", "identity": {}}


def test_existing_results_are_not_overwritten_without_resume(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    go(Scripted(), make_cases(2), results_path=path)
    with pytest.raises(InputError, match="resume"):
        go(Scripted(), make_cases(2), results_path=path)
    with pytest.raises(InputError, match="top_k=3"):
        asyncio.run(run_cases(Scripted(), make_cases(2), 5, results_path=path, resume=True, progress=False))


def test_resume_skips_finished_cases_and_redoes_a_torn_last_line(tmp_path: Path) -> None:
    cases = make_cases(6)
    path = tmp_path / "r.jsonl"
    first = go(Scripted(), cases[:3], results_path=path)
    torn = encode_line("c3", CaseRun([], "x"))[:17]  # a crash in the middle of writing c3
    with path.open("a", encoding="utf-8") as handle:
        handle.write(torn)
    retriever = Scripted()
    resumed = go(retriever, cases, results_path=path, resume=True)
    assert set(retriever.calls) == {"query 3", "query 4", "query 5"}  # finished ones not re-queried
    assert list(resumed.cases) == [c.id for c in cases]
    assert resumed.cases["c0"].ranking == first.cases["c0"].ranking
    ids = file_ids(path)
    assert sorted(ids) == sorted(c.id for c in cases) and len(ids) == len(set(ids))
    again = Scripted()
    go(again, cases, results_path=path, resume=True)
    assert again.calls == Counter()  # nothing left to do


def test_resume_tolerates_an_unreadable_last_complete_line(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    go(Scripted(), make_cases(2), results_path=path)
    with path.open("ab") as handle:
        handle.write(b'{"id": "c2", "retrie\x00\x00\n')
    finished, intact = read_results(path)
    assert set(finished) == {"c0", "c1"} and intact < path.stat().st_size
    retriever = Scripted()
    go(retriever, make_cases(3), results_path=path, resume=True)
    assert set(retriever.calls) == {"query 2"} and sorted(file_ids(path)) == ["c0", "c1", "c2"]


def test_resume_refuses_a_file_damaged_in_the_middle(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    go(Scripted(), make_cases(3), results_path=path)
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[1] = "not json"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ValidationError) as info:
        go(Scripted(), make_cases(3), results_path=path, resume=True)
    assert info.value.problems[0].line == 2 and str(path) in str(info.value)


CHILD = textwrap.dedent(
    """
    import asyncio, sys
    from ragaudit.data.schema import GoldenCase
    from ragaudit.retrieval.http import HttpRetriever
    from ragaudit.runner.execute import run_cases

    url, path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    cases = [GoldenCase(f"c{i}", f"query {i}", (f"query {i}#0",), tenant_id="acme") for i in range(n)]
    asyncio.run(run_cases(HttpRetriever(url), cases, 3, concurrency=4, results_path=path, progress=False))
    """
)


def test_kill_9_mid_run_then_resume_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    n = 60
    path = tmp_path / "results.jsonl"
    script = tmp_path / "child.py"
    script.write_text(CHILD, encoding="utf-8")
    released = threading.Event()
    echo = echo_handler(delay_s=0.01)

    def handle(request: Request) -> Reply:
        # The first n/2 requests are answered; later ones stall until the child has been killed,
        # so the kill always lands mid-run, with requests in flight.
        reply = echo(request)
        if not released.is_set() and len(server.hits) > n // 2:
            reply.delay_s = 30.0
        return reply

    with LocalServer(handle) as server:
        child = subprocess.Popen([sys.executable, str(script), server.url, str(path), str(n)])
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and child.poll() is None:
                if path.exists() and path.read_bytes().count(b"\n") >= n // 2:
                    break
                time.sleep(0.005)
            os.kill(child.pid, signal.SIGKILL)
        finally:
            child.wait(30)
        assert child.returncode == -signal.SIGKILL
        released.set()
        finished_before, _ = read_results(path)
        assert len(finished_before) == n // 2
        hits_before = server.queries()
        cases = make_cases(n)
        resumed = go(HttpRetriever(server.url), cases, results_path=path, resume=True, concurrency=8)
        hits_after = server.queries()
    assert len(resumed.cases) == n and all(c.error is None for c in resumed.cases.values())
    ids = file_ids(path)
    assert sorted(ids) == sorted(c.id for c in cases) and len(ids) == n  # none lost, none duplicated
    by_id = {c.id: c.query for c in cases}
    for case_id in finished_before:
        assert hits_after[by_id[case_id]] == hits_before[by_id[case_id]]  # not re-queried
    for case_id in set(by_id) - set(finished_before):
        assert hits_after[by_id[case_id]] >= 1
    assert sum(hits_after.values()) - sum(hits_before.values()) == n - len(finished_before)


# -- batch fast path -----------------------------------------------------------------------------


class Batched(Scripted):
    def __init__(self, fail_batches: bool = False, short: bool = False) -> None:
        super().__init__()
        self.batches: list[tuple[str, int]] = []
        self.fail_batches = fail_batches
        self.short = short

    def search_many(self, tenant_id: str, queries: Sequence[str], top_k: int) -> list[Any]:
        self.batches.append((tenant_id, len(queries)))
        if self.fail_batches:
            raise RuntimeError("batch endpoint down")
        out: list[Any] = [[{"chunk_id": f"{q}#0", "tenant_id": tenant_id}] for q in queries]
        if "no-id" in queries:
            out[list(queries).index("no-id")] = [{"score": 1}]
        return out[:-1] if self.short else out


def test_batch_path_groups_by_tenant_and_matches_single_queries() -> None:
    cases = make_cases(5, "acme") + [
        GoldenCase(f"g{i}", f"gq {i}", ("x",), tenant_id="globex") for i in range(3)
    ]
    cases.append(GoldenCase("bad", "no-id", ("x",), tenant_id="acme"))
    cases.append(GoldenCase("orphan", "q", ("x",)))
    batched = Batched()
    run = go(batched, cases, batch_size=4)
    single = go(Scripted(), cases, batch_size=1)
    assert batched.batches == [("acme", 4), ("acme", 2), ("globex", 3)]
    assert batched.calls == Counter()  # search() never needed
    assert list(run.cases) == [c.id for c in cases]
    for cid in run.cases:
        if cid not in ("bad", "orphan"):
            assert run.cases[cid].ranking == single.cases[cid].ranking
    assert run.cases["bad"].error == "TypeError: result #1 has no 'chunk_id' string"
    assert run.cases["orphan"].error == NO_TENANT


@pytest.mark.parametrize("kind", ["fail", "short"])
def test_a_failed_batch_falls_back_to_single_queries(kind: str) -> None:
    retriever = Batched(fail_batches=kind == "fail", short=kind == "short")
    run = go(retriever, make_cases(3), batch_size=8)
    assert retriever.batches == [("acme", 3)]
    assert sum(retriever.calls.values()) == 3
    assert all(c.error is None for c in run.cases.values())


def test_progress_bar_writes_to_stderr_only_when_asked(capsys: pytest.CaptureFixture[str]) -> None:
    go(Scripted(), make_cases(3), progress=True)
    captured = capsys.readouterr()
    assert "/3 [" in captured.err and "q/s" in captured.err and captured.out == ""
    go(Scripted(), make_cases(3), progress=None)  # stderr is not a terminal under pytest
    assert capsys.readouterr().err == ""
    silent = progress_bar(10, enabled=False, desc="cases")  # draws nothing, still counts for the watcher
    silent.update(3)
    assert active_counts() == ("cases", 3, 10) and capsys.readouterr().err == ""
    silent.close()
    assert active_counts() is None
