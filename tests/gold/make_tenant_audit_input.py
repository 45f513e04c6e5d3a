"""Rebuild ``tests/gold/inputs/tenant-audit.json``: a real ``ragaudit audit-tenants`` run over the demo
knowledge base against a leaky HTTP service on 127.0.0.1, trimmed and given hostile ids.

    PYTHONPATH=src python tests/gold/make_tenant_audit_input.py

The service (for this fixture only) leaks in several ways, so the report has several leak classes and
request mutations that found them: a later page (``offset`` in the body) comes from the unfiltered index
(attributed by id and content); a quoted phrase adds ``related`` document ids of every tenant beside the
results (by id, at ``$.related[i]``); an ``OR`` query is answered from the unfiltered index with opaque
ids (by content, canaries); accents are folded off tenant ids (``acmé`` is served acme's data). It
refuses an ``X-Tenant`` header that disagrees with the body (a rejected mutation) and fails one probe
with HTTP 500 (unverified requests). Then the records are trimmed to a varied 14 of the 125 leaks.
"""

from __future__ import annotations

import json
import sys
import unicodedata
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from ragaudit.cli.main import main  # noqa: E402
from ragaudit.corpus.chunkers import chunk_corpus, make_chunker  # noqa: E402
from ragaudit.corpus.loading import load_corpus  # noqa: E402
from ragaudit.security.leaky_requests import PaginationService  # noqa: E402
from servers import LocalServer, Reply, Request  # noqa: E402

KB = ROOT / "src" / "ragaudit" / "demo_data" / "kb"
OUT = Path(__file__).parent / "inputs" / "tenant-audit.json"
KEEP = (0, 1, 2, 6, 7, 8, 9, 41, 42, 46, 47, 59, 60, 61)
"""The leak records kept: related ids, opaque OR hits, later pages, an accented tenant id."""
SCRIPT = "<script>document.title='pwned'</script>"
IMG = '<img src=x onerror="alert(3)">'


def _unaccent(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")


def _service() -> Any:
    chunks = chunk_corpus(load_corpus(KB / "corpus.jsonl"), make_chunker("whole"))
    service = PaginationService(chunks, "offset")
    docs = {c.chunk_id: (c.metadata or {}).get("doc_id", c.chunk_id) for c in chunks}

    def handle(request: Request) -> Reply:
        body = request.json()
        tenant, query = body.get("tenant_id"), str(body.get("query", ""))
        if "admin password" in query:
            return Reply(status=500, body={"detail": "search backend timed out"})
        header = request.headers.get("x-tenant")
        if header is not None and header != tenant:
            return Reply(status=400, body={"detail": "X-Tenant disagrees with tenant_id"})
        if isinstance(tenant, str) and tenant not in service.tenants:
            if _unaccent(tenant) not in service.tenants:
                return Reply(status=403, body={"detail": "unknown tenant"})
            tenant = _unaccent(tenant)  # the bug: accents folded off before the tenant check
        params = dict(parse_qsl(urlsplit(request.path).query))
        status, hits = service.handle({**body, "tenant_id": tenant}, request.headers, params)
        if status != 200:
            return Reply(status=status, body=hits)
        extra: dict[str, Any] = {}
        if query.startswith('"'):  # the bug: "related documents" from the unfiltered index
            related = service.shared.search(query.strip('"'), 5)
            extra["related"] = list(dict.fromkeys(docs.get(h["chunk_id"], h["chunk_id"]) for h in related))
        if " OR " in query:  # the bug: the boolean path searches every tenant, with opaque ids
            found = service.shared.search(query.replace(" OR ", " "), int(body.get("top_k", 10)))
            hits = [
                {"chunk_id": f"hit-{i}", "score": h["score"], "content": h["content"]}
                for i, h in enumerate(found)
            ]
        return Reply(body={"results": hits, "total": len(hits), **extra})

    return handle


def _trim(report: dict[str, Any], url: str) -> dict[str, Any]:
    leaks = report["leaks"]
    leaks["records"] = [leaks["records"][i] for i in KEEP]
    leaks["records"][4]["chunk_id"] = SCRIPT  # a chunk id is whatever the service returns
    leaks["records_listed"] = len(KEEP)
    hostile = report["hostile_tenants"]
    hostile["records"] = hostile["records"][:6]
    hostile["records"][5]["caller"] = IMG  # a hostile tenant id is whatever an attacker sends
    report["unverified"]["records"] = report["unverified"]["records"][:4]
    report["created_at"] = "2026-12-04T12:00:00+00:00"
    report["source"] = {"label": "127.0.0.1:8080/search", "endpoint": "http://127.0.0.1:8080/search"}
    report["corpus"]["path"] = "kb/corpus.jsonl"
    report["canaries"]["path"] = "kb/canaries.jsonl"
    text = json.dumps(report, ensure_ascii=False)
    return dict(json.loads(text.replace(url.split("//", 1)[1], "127.0.0.1:8080/search")))


def rebuild() -> None:
    raw = OUT.with_suffix(".raw.json")
    with LocalServer(_service()) as server:
        code = main(["audit-tenants", "--corpus", str(KB / "corpus.jsonl"), "--canaries", str(KB / "canaries.jsonl"),
                     "--endpoint", server.url, "--out", str(raw), "--no-progress", "--rounds", "1",
                     "--probes-per-tenant", "4", "--max-records", "200"])  # fmt: skip
        url = server.url
    assert code == 1, f"the audit should find the leaks (exit {code})"
    report = _trim(json.loads(raw.read_text(encoding="utf-8")), url)
    raw.unlink()
    OUT.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{OUT}: {report['leaks']['count']} leaks, {len(report['leaks']['records'])} records kept")


if __name__ == "__main__":
    rebuild()
