"""The tenant audit's request mutations (issue 22, items 2 and 7): query shapes, pagination, the tenant a
second time in a header or parameter, Unicode tenant ids, top_k up to what the service accepts. Every
request-side leak style (security/leaky_requests.py) is caught by the default audit, and every honest
twin stays clean: the Python ones in process, the ones that need headers, the query string or extra body
fields through a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from conftest import KB
from ragaudit.cli.main import main
from ragaudit.corpus.loading import load_corpus
from ragaudit.corpus.model import Chunk
from ragaudit.retrieval.http import HttpRetriever
from ragaudit.retrieval.request_extras import ALL_CHANNELS, RequestExtras, channels_of
from ragaudit.security.canaries import load_canaries
from ragaudit.security.hostile_tenants import hostile_callers
from ragaudit.security.leaky import REQUEST_LEAKS, request_leak
from ragaudit.security.leaky_requests import HTTP_ONLY, TenantChannelService
from ragaudit.security.ownership import OwnershipIndex
from ragaudit.security.probes import Probe, generate_probes
from ragaudit.security.request_mutations import OWNER, MutationOptions, plan_mutations
from servers import LocalServer, Reply, Request
from test_tenant_audit import audit

CORPUS = str(KB / "corpus.jsonl")


@pytest.fixture(scope="module")
def demo(chunks: list[Chunk]) -> tuple[OwnershipIndex, list[Probe]]:
    kb = load_corpus(KB / "corpus.jsonl")
    canaries = load_canaries(KB / "canaries.jsonl", kb.documents)
    return OwnershipIndex.build(kb.documents, chunks, canaries), generate_probes(
        kb.documents, canaries=canaries
    )


# ------------------------------------------------------------------------------------ the plan


def test_every_mutation_is_applied_to_a_sample_and_channels_decide_what_applies() -> None:
    probes = [
        Probe(f"{t}/{i}", "title", f"Northwind Logistics contract {t} {i}", t)
        for t in "abc"
        for i in range(3)
    ]
    catalogue = MutationOptions().catalogue(10)
    names = [m.name for m in catalogue]
    for expected in (
        "empty query", "1 character", "2 characters", "long query (24 words)", "quoted phrase", "OR", "AND",
        "NOT", "field:value", "prefix wildcard", "match-all *", "offset=10 (body)", "?offset=10", "?page=2",
        "from=10 (body)", "?cursor=10", "header X-Tenant: <owner>", "header X-Tenant-Id: <owner>",
        "?tenant=<owner>", "?tenant_id=<owner>", "body tenant: <owner>",
    ):  # fmt: skip
        assert expected in names, expected
    assert "body tenant_id: <owner>" not in names  # the request's own tenant field is never doubled

    plain, skipped = plan_mutations(probes, ["a", "b", "c"], catalogue, 2, frozenset())
    assert {m.axis for m in skipped} == {"page-size", "pagination", "tenant-channel", "credential-conflict"}
    assert [m.name for m in skipped if m.axis == "page-size"] == ["top_k as a JSON string"]  # a body field
    assert {r.mutation.axis for r in plain} == {"query-shape", "page-size"}
    assert len(plain) == 15 * 6 + 2 * 3  # 2 probes of 3 tenants; empty and * once per calling tenant
    assert all(r.caller != r.probe.tenant_id for r in plain)
    texts = {r.mutation.name: r.text for r in plain if r.probe.id == "a/0"}
    assert texts["OR"] == "Northwind OR Logistics OR contract" and texts["2 characters"] == "No"
    assert texts["one word"] == "Northwind"
    assert texts["long query (24 words)"].startswith("Northwind Logistics contract a 0 Northwind ")
    assert len(texts["long query (24 words)"].split()) == 24 and texts["field:value"] == "title:Northwind"
    assert texts["tenant_id:<owner> in the query"] == "tenant_id:a Northwind"

    wired, skipped = plan_mutations(
        probes, ["a", "b", "c"], catalogue, 1, frozenset({"header", "param", "body"})
    )
    assert {m.axis for m in skipped} == {"credential-conflict"}  # no key per tenant to swap
    header = [r for r in wired if r.mutation.name == "header X-Tenant: <owner>"]
    assert [(r.caller, dict(r.extras.headers)) for r in header if r.extras] == [
        ("b", {"X-Tenant": "a"}), ("c", {"X-Tenant": "b"}), ("a", {"X-Tenant": "c"})
    ]  # fmt: skip
    assert all(OWNER not in json.dumps(r.extras.__dict__, default=dict) for r in wired if r.extras)
    assert MutationOptions(per_tenant=0).catalogue(10) == []


def test_tenant_ids_that_differ_by_accents_normalisation_confusables_and_patterns() -> None:
    callers = {h.caller: h for h in hostile_callers(["acme", "globex", "initech"])}
    nfc, nfd = "acm\u00e9", "acme\u0301"
    assert unicodedata.normalize("NFC", nfd) == nfc and nfc in callers and nfd in callers
    for expected in ("𝐚𝐜𝐦𝐞", "αcme", "асmе", "ınitech", "acm_", "acm.", "acme\x00", "acme\t", "a*"):
        assert expected in callers, expected
    assert callers[nfc].family == callers["αcme"].family == "unicode"
    assert callers["acm_"].family == "pattern" and callers["acme,globex"].family == "syntax"
    assert callers["ACME"].family == "near-miss" and callers[None].family == "fixed"
    assert not {"acme", "globex", "initech"} & set(callers)


# ------------------------------------------------------------------------------------ the wire


def test_the_http_retriever_sends_extra_headers_params_and_body_fields(tmp_path: Path) -> None:
    import asyncio

    seen: list[Request] = []

    def handle(request: Request) -> Reply:
        seen.append(request)
        return Reply(body=[])

    async def ask(retriever: HttpRetriever) -> None:
        extras = RequestExtras(
            headers={"X-Tenant": "globex", "Authorization": "Bearer forged"},
            params={"offset": "10"},
            body={"page": 2, "tenant_id": "globex"},
        )
        await retriever.search(tenant_id="acme", query="q", top_k=3, extras=extras)
        await retriever.search(tenant_id="acme", query="q", top_k=3)
        await retriever.aclose()

    with LocalServer(handle) as server:
        import os

        os.environ["RAGAUDIT_TEST_MUTATION_TOKEN"] = "s3cret-token-value"
        try:
            retriever = HttpRetriever(server.url + "?key=1", auth_header_env="RAGAUDIT_TEST_MUTATION_TOKEN")
            assert channels_of(retriever) == {"header", "param", "body"}
            asyncio.run(ask(retriever))
        finally:
            del os.environ["RAGAUDIT_TEST_MUTATION_TOKEN"]
    mutated, plain = seen
    assert dict(parse_qsl(urlsplit(mutated.path).query)) == {"key": "1", "offset": "10"}
    assert mutated.headers["x-tenant"] == "globex"
    assert mutated.headers["authorization"] == "Bearer s3cret-token-value"  # never replaced by extras
    assert mutated.json() == {"page": 2, "tenant_id": "acme", "query": "q", "top_k": 3}  # the caller stays
    assert urlsplit(plain.path).query == "key=1" and "x-tenant" not in plain.headers
    assert plain.json() == {"tenant_id": "acme", "query": "q", "top_k": 3}
    assert channels_of(object()) == frozenset()


# ------------------------------------------------------------------------------------ the proofs

FOUND_BY: dict[str, tuple[str, ...]] = {
    "short-query": ("empty query", "1 character", "2 characters"),
    "long-query": ("long query (24 words)",),
    "quoted-phrase": ("quoted phrase",),
    "boolean-query": ("OR", "AND", "NOT"),
    "field-query": ("field:value", "tenant_id:<owner> in the query"),
    "wildcard-query": ("prefix wildcard", "match-all *"),
    "deep-top-k": ("top_k=100",),
    "accent-fold": ("unicode",),
    "nfkc-fold": ("unicode",),
    "confusable-fold": ("unicode",),
    "offset-page": ("offset=10 (body)",),
    "page-param": ("?page=2",),
    "tenant-header": ("header X-Tenant: <owner>",),
    "tenant-param": ("?tenant=<owner>",),
    "non-ascii-query": ("non-ASCII query",),
    "filter-override": ("body filter: {tenant_id: <owner>}",),
}
"""The rows of the mutation table that must find each style's leak (every one of them)."""


def _rows(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["mutation"]: r for r in report["asking"]["mutations"]}


def test_every_request_leak_style_has_an_honest_twin_and_a_proof() -> None:
    assert set(FOUND_BY) == set(REQUEST_LEAKS) and len(REQUEST_LEAKS) == 16
    assert set(HTTP_ONLY) <= set(REQUEST_LEAKS)


@pytest.mark.parametrize("style", [s for s in REQUEST_LEAKS if s not in HTTP_ONLY])
def test_the_default_audit_catches_each_python_request_leak_and_keeps_its_twin_clean(
    style: str, chunks: list[Chunk], demo: tuple[OwnershipIndex, list[Probe]]
) -> None:
    leaky = audit(request_leak(style, chunks), *demo)
    rows = _rows(leaky.to_dict())
    assert leaky.verdict() == "leak", style
    for name in FOUND_BY[style]:
        assert rows[name]["leaks"] > 0, (name, rows[name])
    if style == "deep-top-k":
        assert rows["top_k=1"]["leaks"] == rows["top_k=10"]["leaks"] == 0
        assert all((leak.asked or {})["top_k"] > 64 for leak in leaky.leaks)
    honest = audit(request_leak(style, chunks, honest=True), *demo)
    report = honest.to_dict()
    assert honest.verdict() == "clean", (style, [leak.to_json() for leak in honest.leaks[:2]])
    assert honest.errors.failed == 0 and not honest.unverified and honest.checked_chunks > 0
    if style == "deep-top-k":  # the honest twin refuses top_k above 64: found, and asked up to it
        assert report["asking"]["max_top_k"] == {
            "requested": 100,
            "accepted": 64,
            "rejected": [100, 75, 68, 65],
        }
        assert report["asking"]["top_k_values"] == [1, 10, 64]
    if style == "short-query":  # the empty query is refused: recorded as rejected, not as a failure
        assert _rows(report)["empty query"]["rejected"] == 3 and report["verdict"] == "clean"


def _wire(service: Any) -> Callable[[Request], Reply]:
    def handle(request: Request) -> Reply:
        params = dict(parse_qsl(urlsplit(request.path).query))
        status, body = service.handle(request.json(), request.headers, params)
        return Reply(status=status, body=body)

    return handle


def _audit_endpoint(url: str, out: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    code = main(
        ["audit-tenants", "--corpus", CORPUS, "--endpoint", url, "--out", str(out), "--no-progress", *extra]
    )
    return code, json.loads(out.read_text(encoding="utf-8"))


@pytest.mark.parametrize("style", HTTP_ONLY)
def test_the_default_audit_catches_each_http_request_leak_and_keeps_its_twin_clean(
    style: str, chunks: list[Chunk], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the leak is in the mutations, sent before the rounds: one round (of the default three) shows it
    with LocalServer(_wire(request_leak(style, chunks))) as server:
        code, report = _audit_endpoint(server.url, tmp_path / "leaky.json", "--rounds", "1")
    printed = capsys.readouterr().out
    rows = _rows(report)
    assert code == 1 and report["verdict"] == "leak", style
    for name in FOUND_BY[style]:
        assert rows[name]["leaks"] > 0 and f"{name}: {rows[name]['leaks']} foreign chunk(s)" in printed
    records = report["leaks"]["records"]
    assert all(r["asked"]["part"] == "mutation" for r in records), {r["asked"]["part"] for r in records}

    with LocalServer(_wire(request_leak(style, chunks, honest=True))) as server:
        code, report = _audit_endpoint(server.url, tmp_path / "honest.json")
    printed = capsys.readouterr().out
    rows = _rows(report)
    assert code == 0 and report["verdict"] == "clean", report["leaks"]["records"][:2]
    assert report["errors"]["failed"] == 0
    assert all(r["applicable"] != (r["axis"] == "credential-conflict") for r in rows.values())
    assert all("--endpoint-keys" in r["reason"] for r in rows.values() if not r["applicable"])
    if style == "tenant-header":  # refuses the disagreeing header: rejected, never a failure
        assert (
            rows["header X-Tenant: <owner>"]["rejected"] == rows["header X-Tenant: <owner>"]["requests"] == 6
        )
        assert "rejected by the service every time" in printed


def test_a_tenant_channel_the_audit_cannot_guess_is_missed_until_it_is_named(
    chunks: list[Chunk], tmp_path: Path
) -> None:
    """The threat model's limit, and the flag that lifts it: a service that takes the tenant from an
    ``X-Workspace`` header is clean to the default audit (the audit never sends that header), and
    caught once ``--tenant-headers`` names it."""
    service = TenantChannelService(chunks, "header", name="X-Workspace")
    few = ("--budget", "0", "--rounds", "1", "--probes-per-tenant", "3", "--mutation-probes", "1")
    with LocalServer(_wire(service)) as server:
        code, report = _audit_endpoint(server.url, tmp_path / "default.json", *few)
        assert code == 0 and report["verdict"] == "clean"
        code, report = _audit_endpoint(
            server.url, tmp_path / "named.json", *few,
            "--tenant-headers", "X-Workspace", "--tenant-params", "", "--page-params", "",
        )  # fmt: skip
    rows = _rows(report)
    assert code == 1 and rows["header X-Workspace: <owner>"]["leaks"] > 0
    assert not any(r["axis"] == "pagination" for r in rows.values())
    assert [r["mutation"] for r in rows.values() if r["axis"] == "tenant-channel"] == [
        "header X-Workspace: <owner>"
    ]


def test_a_credential_conflict_sends_the_callers_key_and_names_the_owner() -> None:
    """The ``credential-conflict`` axis needs the ``credential`` channel; planned, each request names
    the probe's owner in its tenant field and carries the caller's credential."""
    probes = [Probe(f"{t}/0", "canary", "Northwind Logistics contract", t, f"{t}-doc") for t in "ab"]
    conflicts = [m for m in MutationOptions().catalogue(10) if m.axis == "credential-conflict"]
    assert [m.name for m in conflicts] == [
        "<caller>'s key, body tenant_id: <owner>",
        "<caller>'s key, body tenant_id: <owner> + header X-Tenant",
        "<caller>'s key, body tenant_id: <owner> + ?tenant",
        "<caller>'s key, body tenant_id: <caller> then tenant_id: <owner> (duplicate key)",
        "<caller>'s key, body tenant_id: <owner> then tenant_id: <caller> (duplicate key)",
        "<caller>'s JWT, tenant claim set to <owner> (signature kept), body tenant_id: <owner>",
        "<caller>'s JWT as alg none, tenant claim <owner>, body tenant_id: <owner>",
    ]
    sent, skipped = plan_mutations(probes, ["a", "b"], conflicts, 1, frozenset({"header", "param", "body"}))
    assert sent == [] and skipped == conflicts  # no key per tenant: not applicable
    keys_only = frozenset(ALL_CHANNELS) - {"forged-token"}  # keys that are no JWTs: nothing to forge
    sent, skipped = plan_mutations(probes, ["a", "b"], conflicts, 1, keys_only)
    assert len(sent) == 10 and [m.name for m in skipped] == [m.name for m in conflicts[5:]]
    duplicated = [r for r in sent if r.extras is not None and r.extras.repeat_tenant is not None]
    assert [(r.tenant_id, r.extras.repeat_tenant) for r in duplicated if r.extras is not None] == [
        (r.caller, r.probe.tenant_id) for r in duplicated[:2]
    ] + [(r.probe.tenant_id, r.caller) for r in duplicated[2:]]
    sent = [r for r in sent if r not in duplicated]
    forged, _ = plan_mutations(probes, ["a", "b"], conflicts[5:], 1, frozenset(ALL_CHANNELS))
    assert [r.extras.forge for r in forged if r.extras is not None] == ["claim-swap"] * 2 + ["alg-none"] * 2
    for request in sent:
        assert request.caller != request.probe.tenant_id and request.tenant_id == request.probe.tenant_id
        assert request.extras is not None and request.extras.credential_of == request.caller
    assert sent[2].extras is not None and sent[2].extras.headers == {"X-Tenant": sent[2].probe.tenant_id}
