"""How hard the tenant audit looks (issue 10, item 3): owner-first rounds over several top_k values and
concurrency levels, a request budget with a stated detection power, hostile tenant-id syntax, a plain-form
retry of rejected probes, unverified requests counted, probes identical across processes; the
conditional leaky retrievers caught with the defaults (the cache and syntax ones through real HTTP),
honest services clean."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import KB
from ragaudit.cli.main import main
from ragaudit.corpus.loading import load_corpus
from ragaudit.corpus.model import Chunk
from ragaudit.retrieval.bm25 import BM25Retriever
from ragaudit.security.canaries import load_canaries
from ragaudit.security.hostile_tenants import hostile_callers
from ragaudit.security.leaky import CONDITIONAL, RareRaceLeakRetriever, make_leaky
from ragaudit.security.ownership import OwnershipIndex
from ragaudit.security.probes import Probe, generate_probes
from ragaudit.security.request_plan import (
    detection_power,
    one_in_for_power,
    plain_form,
    plan_round,
    rounds_for,
)
from ragaudit.security.tenant_audit import TenantAudit
from servers import LocalServer, Reply, Request
from test_tenant_audit import audit

CORPUS = str(KB / "corpus.jsonl")


@pytest.fixture(scope="module")
def demo(chunks: list[Chunk]) -> tuple[OwnershipIndex, list[Probe]]:
    """The demo KB's ownership index (with its canaries) and default probes."""
    kb = load_corpus(KB / "corpus.jsonl")
    canaries = load_canaries(KB / "canaries.jsonl", kb.documents)
    return OwnershipIndex.build(kb.documents, chunks, canaries), generate_probes(
        kb.documents, canaries=canaries
    )


# ------------------------------------------------------------------------------------ the plan


def test_every_probe_is_asked_by_its_owner_first_at_every_top_k() -> None:
    probes = [Probe(f"{t}/{i}", "title", f"{t} q{i}", t) for t in "ab" for i in range(2)]
    probes.append(Probe("g", "generic", "g", None))
    plan = plan_round(probes, ["a", "b", "c"], [1, 10, 50], 10, 0, hostile_probes=0)
    for k in (1, 10, 50):
        at_k = [(r.probe.id, r.caller, r.part) for r in plan if r.top_k == k]
        for probe in probes[:4]:
            asked = [(c, part) for pid, c, part in at_k if pid == probe.id]
            assert asked[0] == (probe.tenant_id, "owner") and len(asked) == 3  # then both other tenants
            assert {c for c, _ in asked[1:]} == {"a", "b", "c"} - {probe.tenant_id}
        assert sorted(c for pid, c, _ in at_k if pid == "g") == ["a", "b", "c"]
    assert len(plan) == 3 * (4 * 3 + 3)
    hostile = plan_round(probes, ["a", "b", "c"], [10], 10, 0, hostile_probes=1)[15:]
    assert hostile and all(r.part == "hostile" and r.top_k == 10 for r in hostile)
    assert rounds_for(1000, 3000, 2, None) == 3 and rounds_for(5000, 3000, 2, None) == 2
    assert rounds_for(10, 0, 1, None) == 1 and rounds_for(1000, 3000, 2, 1) == 1


def test_hostile_ids_cover_lists_roles_wildcards_encodings_json_and_paths() -> None:
    tenants = ["acme", "globex", "initech"]
    callers = {h.caller: h for h in hostile_callers(tenants)}
    for expected in (
        "acme,globex", "acme;globex", "acme|globex", "acme globex", "acme:admin", "acme/admin",
        "*", "%", "acme*", "acme%2Cglobex", "%61%63%6D%65", "ＡＣＭＥ".lower(), "аcme", "acme\u200b",
        '["acme", "globex"]', "acme/../globex", "../globex", "ACME", " acme", "acm", None, "",
    ):  # fmt: skip
        assert expected in callers, expected
    assert not set(tenants) & set(callers)
    assert callers["acme,globex"].names == ("acme", "globex") and callers["*"].names == ()
    assert callers["initech,acme"].names == ("initech", "acme")  # the last tenant wraps round


def test_detection_power_formula() -> None:
    assert detection_power(3000, 1000) == pytest.approx(1 - (1 - 1 / 1000) ** 3000)
    assert detection_power(3000, 1000) == pytest.approx(0.9503, abs=1e-4)
    assert detection_power(0, 1000) == 0.0 and detection_power(10, 1) == 1.0
    n95 = one_in_for_power(3000)
    assert detection_power(3000, n95) == pytest.approx(0.95) and 1000 < n95 < 1002
    # the race retriever's own draws: over 400 seeds, the share seeing a race within 3000 calls
    seen = 0
    for seed in range(400):
        race = RareRaceLeakRetriever([], one_in=1000, seed=seed)
        seen += any(race.draws.random() < 1 / 1000 for _ in range(3000))
    assert abs(seen / 400 - detection_power(3000, 1000)) < 0.04


def test_plain_form() -> None:
    assert plain_form("Price-protection RIDER «AC-7731» (café)!") == "Price protection RIDER AC 7731 cafe"
    assert len(plain_form(" ".join(["word"] * 40)).split()) == 16


def test_probe_generation_is_identical_across_hash_seeds(tmp_path: Path) -> None:
    from test_tenant_audit import generate_corpus

    corpus_path, canary_path = generate_corpus(tmp_path)
    script = (
        "import json, sys\n"
        "from ragaudit.corpus.loading import load_corpus\n"
        "from ragaudit.security.canaries import load_canaries\n"
        "from ragaudit.security.probes import generate_probes\n"
        "c = load_corpus(sys.argv[1])\n"
        "p = generate_probes(c.documents, canaries=load_canaries(sys.argv[2], c.documents), per_tenant=8)\n"
        "print(json.dumps([x.to_json() for x in p]))\n"
    )
    outputs = []
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": os.pathsep.join(sys.path)}
        done = subprocess.run(
            [sys.executable, "-c", script, str(corpus_path), str(canary_path)],
            env=env, capture_output=True, text=True, check=True, timeout=120,
        )  # fmt: skip
        outputs.append(json.loads(done.stdout))
    assert len(outputs[0]) == 20 * 8 + 5
    assert outputs[0] == outputs[1] == outputs[2]


# ------------------------------------------------------------------------------------ leaks caught


def _only_when(kind: str) -> Callable[[TenantAudit], bool]:
    """What the leaks of each conditional kind must show about how they were asked."""
    asked = lambda r: [leak.asked or {} for leak in r.leaks]  # noqa: E731
    checks: dict[str, Callable[[TenantAudit], bool]] = {
        "top-k-path": lambda r: all(a["top_k"] > 20 for a in asked(r)),
        "concurrency-overflow": lambda r: all(a["concurrency"] > 8 for a in asked(r)),
        "warm-path": lambda r: all(a["sequence"] > 2000 for a in asked(r)),
        "rare-race": lambda r: len({a["sequence"] for a in asked(r)}) >= 1,
        # the owner filled the cache, another tenant was served the owner's chunk
        "tenantless-cache": lambda r: any(
            not leak.hostile and leak.probe.tenant_id in leak.owners and leak.caller != leak.probe.tenant_id
            for leak in r.leaks
        ),
        "list-syntax": lambda r: all(leak.hostile and "," in str(leak.caller) for leak in r.leaks),
        "role-syntax": lambda r: (
            all(leak.hostile and ":" in str(leak.caller) for leak in r.leaks)
            and any(leak.caller == "acme:admin" for leak in r.leaks)
        ),
    }
    return checks[kind]


@pytest.mark.parametrize("kind", CONDITIONAL)
def test_the_default_audit_catches_every_conditional_leak(
    kind: str, chunks: list[Chunk], demo: tuple[OwnershipIndex, list[Probe]]
) -> None:
    result = audit(make_leaky(kind, chunks), *demo)
    assert result.verdict() == "leak", kind
    assert _only_when(kind)(result), [leak.to_json() for leak in result.leaks[:3]]
    report = result.to_dict()
    assert report["leaks"]["records"][0]["asked"]["top_k"] in report["asking"]["top_k_values"]


def test_the_default_audit_is_clean_on_bm25_and_says_how_hard_it_looked(
    chunks: list[Chunk], demo: tuple[OwnershipIndex, list[Probe]]
) -> None:
    result = audit(BM25Retriever.from_chunks(chunks), *demo)
    report = result.to_dict()
    asking = report["asking"]
    assert result.verdict() == "clean" and result.errors.failed == 0 and not result.unverified
    assert asking["top_k_values"] == [1, 10, 100] and asking["concurrency_levels"] == [1, 32]
    assert asking["requests"]["total"] >= 3000 and asking["rounds"] == 3
    assert report["requests"]["total"] == asking["requests"]["total"]
    # 3 rounds x 3 top_k values: 72 tenant probes by their owner, by 2 others; 5 generic by 3 tenants
    assert report["requests"]["owner"] == 9 * 72 and report["requests"]["cross_tenant"] == 9 * (144 + 15)
    assert report["requests"]["tenant"] == result.errors.total == 9 * (72 + 144 + 15)
    assert asking["detection_power"]["probability"] > 0.95
    assert asking["detection_power"]["one_in_at_power"] >= 1000
    assert set(asking["requests"]["by_part"]) == {
        "owner", "cross-tenant", "generic", "hostile", "discovery", "mutation"
    }  # fmt: skip
    # the request mutations: 15 query shapes and 2 page sizes on 2 probes of each tenant (empty and *
    # once per tenant); a string top_k, pagination and tenant channels need HTTP: not applicable to a
    # Python retriever
    rows = {r["mutation"]: r for r in asking["mutations"]}
    assert (
        report["requests"]["mutation"]
        == 15 * 6 + 2 * 3
        == sum(r["requests"] for r in rows.values() if r["axis"] in ("query-shape", "page-size"))
    )
    assert rows["top_k=50 (page size)"]["requests"] == 6 and rows["non-Latin script query"]["answered"] == 6
    assert rows["OR"]["answered"] == 6 and rows["empty query"]["requests"] == 3
    assert not rows["?offset=10"]["applicable"] and "param channel" in rows["?offset=10"]["reason"]
    assert (
        not rows["header X-Tenant: <owner>"]["applicable"]
        and rows["header X-Tenant: <owner>"]["requests"] == 0
    )
    assert rows["top_k=100"]["requests"] == 3 * (72 + 144 + 15) and rows["unicode"]["requests"] > 0


# ------------------------------------------------------------------------------------ over real HTTP


def _serve(answer: Callable[[str, str, int], list[dict[str, Any]]], reject: Callable[[dict[str, Any]], bool]):
    def handle(request: Request) -> Reply:
        body = request.json()
        tenant = body.get("tenant_id")
        if not isinstance(tenant, str) or not tenant.strip():
            return Reply(status=400, body={"detail": "rejected"})
        try:
            if reject(body):
                return Reply(status=400, body={"detail": "rejected"})
            hits = answer(tenant, body["query"], body["top_k"])
        except TypeError:  # "10" > 20: a web framework answers 500 (the string top_k mutation)
            return Reply(status=500, body={"detail": "Internal Server Error"})
        return Reply(body=[{k: h[k] for k in ("chunk_id", "score", "content", "tenant_id")} for h in hits])

    return handle


def _audit_endpoint(url: str, out: Path, *extra: str) -> tuple[int, dict[str, Any], str]:
    code = main(
        ["audit-tenants", "--corpus", CORPUS, "--endpoint", url, "--out", str(out), "--no-progress", *extra]
    )
    return code, json.loads(out.read_text(encoding="utf-8")), ""


@pytest.mark.parametrize("kind", ["tenantless-cache", "list-syntax", "role-syntax"])
def test_http_services_with_cache_or_syntax_leaks_fail_the_default_audit(
    kind: str, chunks: list[Chunk], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    leaky: Any = make_leaky(kind, chunks)
    with LocalServer(_serve(leaky.answer, lambda body: False)) as server:
        code, report, _ = _audit_endpoint(server.url, tmp_path / "audit.json")
    printed = capsys.readouterr().out
    assert code == 1 and report["verdict"] == "leak" and "verdict: LEAK" in printed
    records = report["leaks"]["records"]
    if kind == "tenantless-cache":
        assert any(not r["hostile_caller"] and r["probe"]["tenant"] in r["owner"] for r in records)
    else:
        marker = "," if kind == "list-syntax" else ":"
        assert records and all(r["hostile_caller"] and marker in r["caller"] for r in records)
    assert f"requests: {report['asking']['requests']['total']:,} sent" in printed


def test_an_honest_http_service_with_limits_stays_clean(
    chunks: list[Chunk], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """At most 3 results whatever top_k, its own chunk ids, top_k above 20 rejected with 400, queries
    with punctuation rejected with 400: clean, the max top_k found, rejected probes asked in plain form."""
    bm25 = BM25Retriever.from_chunks(chunks)

    def answer(tenant: str, query: str, top_k: int) -> list[dict[str, Any]]:
        hits = bm25.search_many(tenant, [query], top_k)[0][:3]
        return [{**h, "chunk_id": f"{tenant}:{h['chunk_id']}"} for h in hits]

    def reject(body: dict[str, Any]) -> bool:
        return body["top_k"] > 20 or bool(re.search(r"[^\w\s]", body["query"]))

    with LocalServer(_serve(answer, reject)) as server:
        code, report, _ = _audit_endpoint(server.url, tmp_path / "audit.json", "--budget", "1000")
    printed = capsys.readouterr().out
    assert code == 0 and report["verdict"] == "clean", report["unverified"]
    assert report["asking"]["max_top_k"] == {"requested": 100, "accepted": 20, "rejected": [100, 50, 25, 21]}
    assert report["asking"]["top_k_values"] == [1, 10, 20]
    assert report["asking"]["plain_retries"]["count"] > 0
    retries, rows = report["asking"]["plain_retries"], report["asking"]["mutations"]
    refused = sum(r["rejected"] for r in rows if r["mutation"].startswith("body tenant_id: "))
    refused += sum(r["errored"] for r in rows if r["mutation"] == "top_k as a JSON string")  # a 500
    assert 0 < retries["count"] - retries["recovered"] <= refused  # a tenant_id as a JSON value: refused
    assert report["unverified"]["count"] == 0 and "rejected top_k 100, 50, 25, 21" in printed
    # mutations with punctuation (quoted, field:value, wildcards) are rejected: recorded, never a failure
    rows = {r["mutation"]: r for r in report["asking"]["mutations"]}
    assert rows["quoted phrase"]["rejected"] == rows["quoted phrase"]["requests"] > 0
    assert rows["?offset=10"]["answered"] == rows["?offset=10"]["requests"] > 0
    assert report["errors"]["failed"] == 0 and "rejected by the service every time" in printed


def test_probes_rejected_even_in_plain_form_are_unverified_not_clean(
    chunks: list[Chunk], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bm25 = BM25Retriever.from_chunks(chunks)

    def answer(tenant: str, query: str, top_k: int) -> list[dict[str, Any]]:
        return bm25.search_many(tenant, [query], top_k)[0]

    with LocalServer(_serve(answer, lambda body: "northwind" in body["query"].lower())) as server:
        code, report, _ = _audit_endpoint(server.url, tmp_path / "audit.json", "--budget", "0")
    printed = capsys.readouterr().out
    assert code == 1 and report["verdict"] == "incomplete" and report["leaks"]["count"] == 0
    unverified = report["unverified"]
    assert unverified["count"] > 0 and unverified["count"] == report["errors"]["failed"]
    record = unverified["records"][0]
    assert "northwind" in record["text"].lower() and "plain form" in record["reason"]
    assert "HTTP 400" in record["reason"] and "UNVERIFIED" in printed


# ------------------------------------------------------------------------------------ CLI


def test_cli_prints_requests_and_detection_power_and_checks_its_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "audit.json"
    code = main(
        ["audit-tenants", "--corpus", CORPUS, "--pipeline", "bm25", "--out", str(out), "--no-progress",
         "--top-k-values", "2,5", "--concurrency-levels", "1,4,16", "--rounds", "3", "--probes-per-tenant", "4"]
    )  # fmt: skip
    printed = capsys.readouterr().out
    report = json.loads(out.read_text(encoding="utf-8"))
    asking = report["asking"]
    assert code == 0 and asking["top_k_values"] == [2, 5] and asking["concurrency_levels"] == [1, 4, 16]
    mutated = report["requests"]["mutation"]
    assert asking["rounds"] == 3 and asking["requests"]["total"] == 3 * asking["requests_per_round"] + mutated
    assert f"{asking['requests']['total']:,} sent in 3 rounds" in printed
    assert "detection power: a leak on 1 request in 1,000 would be seen with probability" in printed
    wording = f"request mutations: 17 of 60 applicable, {mutated} requests sent"  # no channel in Python
    assert wording in printed
    assert "43 not applicable (page-size, pagination, tenant-channel, credential-conflict: " in printed
    for bad in (
        ["--top-k-values", "1,x"],
        ["--concurrency-levels", "0"],
        ["--max-top-k", "0"],
        ["--budget", "-1"],
    ):
        code = main(["audit-tenants", "--corpus", CORPUS, "--pipeline", "bm25", *bad])
        assert code == 2 and bad[0] in capsys.readouterr().err
