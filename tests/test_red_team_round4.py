"""The fourth red team of ``audit-tenants`` (security/leaky_round4.py), from both sides, through a real
server on 127.0.0.1 with the CLI:

- leaks the audit missed (a non-Latin script query path, tenant ids trimmed of a trailing ``/`` or
  ``.``, a page-size path, two JSON documents in one body) and styles it already caught (a cold start,
  ids rewritten as the caller's, a ``Link:`` header): each leaky one fails, its honest twin is clean;
- honest services it might wrongly accuse (a "Powered by Acme Search" footer where a tenant is called
  acme, UUID ids, lowercased / truncated / HTML-escaped and highlighted text, upper-case labels, the
  request echoed, overlapping pages; tenants holding byte-identical documents, identical titles and a
  quoted sentence): each is clean, and the same presentation over the shared index is a leak;
- leaks on another method or URL (a GET search, ``/suggest``): clean, with the class named as not
  checked in the verdict (docs/security.md, "Red team, round 4")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from conftest import KB, SMALL_CLI
from ragaudit.cli.main import main
from ragaudit.corpus.chunkers import chunk_corpus, make_chunker
from ragaudit.corpus.loading import load_corpus
from ragaudit.corpus.model import Chunk
from ragaudit.retrieval.http_response import FURTHER_DOCUMENT, ResponseShape
from ragaudit.security.leaky import ROUND4_LEAKS
from ragaudit.security.leaky_round4 import (
    HONEST_STYLES,
    LEAK_STYLES,
    UNSEEN_STYLES,
    make_round4_service,
)
from ragaudit.security.request_mutations import NON_LATIN_WORDS
from servers import LocalServer, Reply, Request

CORPUS = str(KB / "corpus.jsonl")
SEEN = tuple(s for s in LEAK_STYLES if s not in UNSEEN_STYLES)
FOUND_BY = {
    "script-query": ("non-Latin script query",),
    "page-size": ("top_k=20 (page size)", "top_k=50 (page size)"),
}
"""The mutation that must have found the leak (the others leak on plain or hostile requests)."""


def _wire(service: Any) -> Any:
    def handle(request: Request) -> Reply:
        split = urlsplit(request.path)
        body = request.json() if request.body else None
        status, payload, headers = service.respond(
            body, request.headers, dict(parse_qsl(split.query)), split.path, request.method
        )
        return Reply(status=status, body=payload, headers=headers)

    return handle


def _audit(service: Any, out: Path, *extra: str, corpus: str = CORPUS) -> tuple[int, dict[str, Any]]:
    with LocalServer(_wire(service)) as server:
        code = main(
            [
                *("audit-tenants", "--corpus", corpus, "--endpoint", server.url),
                *("--out", str(out), "--no-progress", *SMALL_CLI, *extra),
            ]
        )
    return code, json.loads(out.read_text(encoding="utf-8"))


def _assert_clean(code: int, report: dict[str, Any]) -> None:
    assert report["leaks"]["count"] == 0, report["leaks"]["records"][:2]
    assert code == 0 and report["verdict"] == "clean", report["isolation"]
    assert report["unattributed"]["count"] == 0 and report["isolation"]["verified"] > 0


def test_every_round4_leak_style_is_in_the_registry() -> None:
    assert ROUND4_LEAKS == LEAK_STYLES and len(LEAK_STYLES) == 9 and set(UNSEEN_STYLES) < set(LEAK_STYLES)
    assert not set(HONEST_STYLES) & set(LEAK_STYLES)


@pytest.mark.parametrize("style", SEEN)
def test_each_round4_leak_fails_over_http_and_its_twin_does_not(
    style: str, chunks: list[Chunk], tmp_path: Path
) -> None:
    extra = ("--top-k-values", "10,100") if style == "page-size" else ()
    code, report = _audit(make_round4_service(style, chunks), tmp_path / "leaky.json", *extra)
    assert code == 1 and report["verdict"] == "leak", (style, report["isolation"])
    records = report["leaks"]["records"]
    if style in FOUND_BY:
        found = {r["asked"].get("mutation", "") for r in records}
        assert found and found <= set(FOUND_BY[style]), found
    if style == "trailing-separator":  # only the new hostile ids read a tenant's data
        callers = {r["caller"] for r in records}
        assert callers and all(c.endswith(("/", ".")) for c in callers), callers
    if style == "concatenated-json":  # read from the second document, not from the body's raw text
        paths = {f["path"] for r in records for f in r["fields"]}
        assert paths and all(p.startswith('$["#2 (a further JSON document') for p in paths), paths
    code, report = _audit(make_round4_service(style, chunks, honest=True), tmp_path / "honest.json", *extra)
    _assert_clean(code, report)


@pytest.mark.parametrize("style", [s for s in HONEST_STYLES if s != "plain"])
def test_an_honest_presentation_is_clean_and_the_same_over_the_shared_index_is_a_leak(
    style: str, chunks: list[Chunk], tmp_path: Path
) -> None:
    code, report = _audit(make_round4_service(style, chunks, honest=True), tmp_path / "honest.json")
    _assert_clean(code, report)
    code, report = _audit(make_round4_service(style, chunks), tmp_path / "leaky.json")
    assert code == 1 and report["verdict"] == "leak" and report["leaks"]["count"] > 0


@pytest.mark.parametrize("style", UNSEEN_STYLES)
def test_a_leak_on_another_method_or_url_is_clean_only_with_the_limit_stated(
    style: str, chunks: list[Chunk], tmp_path: Path
) -> None:
    service = make_round4_service(style, chunks)
    code, report = _audit(service, tmp_path / "unseen.json")
    assert code == 0 and report["verdict"] == "clean"
    reason = report["isolation"]["reason"]
    assert "not checked by probing" in reason and "other endpoints and HTTP methods" in reason
    # the leak is real: the side door serves globex's data to acme
    path = "/suggest" if style == "suggest-endpoint" else "/search"
    query = {"q": "Umbrella Savings Bank", "tenant_id": "acme"}
    status, body, _ = service.respond(None, {}, query, path, "GET")
    globex_titles = {c.title for c in chunks if c.tenant_id == "globex"}
    served = [r["tenant_id"] for r in body.get("results", [])] + [
        "globex" for t in body.get("suggestions", []) if t in globex_titles
    ]
    assert status == 200 and "globex" in served


QUOTED = (
    "Acme Sensorworks warrants Fieldsense gateways and sensors against defects in materials and workmanship"
)
TERMS = (
    "These terms govern your use of the hosted monitoring service. You may cancel at any time with thirty "
    "days written notice. We may suspend accounts that break the acceptable use policy. Liability is "
    "limited to the fees paid in the twelve months before the claim."
)
TEMPLATE = (
    "Data processing addendum between {who} and the customer. {who} processes sensor readings only on "
    "documented instructions. Sub-processors are listed at {url}. Breach notices are sent within {hours} "
    "hours of discovery to the security contact on file."
)


def _shared_text_corpus(path: Path) -> Path:
    """The demo KB plus what honest tenants really hold in common: a byte-identical "Terms of Service" in
    two tenants, the same public FAQ in all three, a templated addendum with each tenant's name and
    numbers, and a press note of initech's that quotes a sentence (15 words) of acme's warranty."""
    lines = (KB / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    extra = [
        {"doc_id": "acme-tos", "tenant_id": "acme", "title": "Terms of Service", "text": TERMS},
        {"doc_id": "globex-tos", "tenant_id": "globex", "title": "Terms of Service", "text": TERMS},
        *(
            {"doc_id": f"{t}-faq-1", "tenant_id": t, "title": "Frequently asked questions", "text": FAQ}
            for t in ("acme", "globex", "initech")
        ),
        *(
            {
                "doc_id": f"{t}-dpa",
                "tenant_id": t,
                "title": "Data processing addendum",
                "text": TEMPLATE.format(who=who, url=f"https://{t}.example.com/subprocessors", hours=hours),
            }
            for t, who, hours in (("acme", "Acme Sensorworks", 48), ("globex", "Globex Ledger Corp", 72))
        ),
        {
            "doc_id": "initech-press-warranty",
            "tenant_id": "initech",
            "title": "Press note: warranty terms compared",
            "text": f'Our comparison of industry warranties notes that "{QUOTED}." Initech Kiosk '
            "warranties run for twenty four months and include on-site replacement of failed kiosks.",
        },
    ]
    path.write_text("\n".join(lines + [json.dumps(d) for d in extra]) + "\n", encoding="utf-8")
    return path


FAQ = (
    "How do I reset my password? Open the sign-in page and choose forgot password; a reset link arrives "
    "by email within five minutes. How do I contact support? Write to the support address in your "
    "welcome email, we answer within one business day."
)


def test_tenants_holding_the_same_text_are_no_leak_to_each_other(tmp_path: Path) -> None:
    """Identical documents, identical titles, a template and a quoted sentence, served honestly over HTTP
    and by the built-in bm25: clean; the shared index over the same corpus: a leak."""
    corpus = _shared_text_corpus(tmp_path / "corpus.jsonl")
    chunks = chunk_corpus(load_corpus(corpus), make_chunker("whole"))
    code, report = _audit(
        make_round4_service("plain", chunks, honest=True), tmp_path / "h.json", corpus=str(corpus)
    )
    _assert_clean(code, report)
    code = main(
        [
            *(
                "audit-tenants",
                "--corpus",
                str(corpus),
                "--pipeline",
                "bm25",
                "--out",
                str(tmp_path / "b.json"),
            ),
            *("--no-progress", *SMALL_CLI),
        ]
    )
    _assert_clean(code, json.loads((tmp_path / "b.json").read_text(encoding="utf-8")))
    code, report = _audit(make_round4_service("plain", chunks), tmp_path / "l.json", corpus=str(corpus))
    assert code == 1 and report["verdict"] == "leak"


def test_a_doc_id_repeated_across_tenants_is_refused_with_the_fix(tmp_path: Path, capsys: Any) -> None:
    """``faq-1`` in two tenants: the corpus is refused (exit 2) with the fix, never audited half-right."""
    corpus = tmp_path / "corpus.jsonl"
    docs = [{"doc_id": "faq-1", "tenant_id": t, "title": "FAQ", "text": FAQ} for t in ("acme", "globex")]
    corpus.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    code = main(["audit-tenants", "--corpus", str(corpus), "--pipeline", "bm25", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "duplicate doc id 'faq-1'" in err and "prefix it with the tenant" in err


def test_json_documents_back_to_back_are_the_first_with_the_rest_beside_it() -> None:
    shape = ResponseShape.build(None, None)
    body = b'{"results": [{"chunk_id": "a", "content": "x"}]}{"debug": {"ids": ["b"]}}\n{"n": 3}'
    parsed = shape.parse(body, "application/json")
    assert [c["chunk_id"] for c in parsed] == ["a"]
    assert parsed.response[FURTHER_DOCUMENT.format(n=2)] == {"debug": {"ids": ["b"]}}
    assert parsed.response[FURTHER_DOCUMENT.format(n=3)] == {"n": 3}
    rows = shape.parse(b'{"chunk_id": "a"}\n{"chunk_id": "b"}', "application/json")  # NDJSON rows still
    assert [c["chunk_id"] for c in rows] == ["a", "b"]


def test_the_non_latin_script_mutation_keeps_the_probe_and_adds_four_scripts() -> None:
    import unicodedata

    scripts = {unicodedata.name(c).split()[0] for c in NON_LATIN_WORDS if c.isalpha()}
    assert {"CYRILLIC", "GREEK", "ARABIC"} <= scripts and any(s.startswith("CJK") for s in scripts)


def test_a_service_naming_the_tenants_otherwise_is_a_leak_that_says_why(
    chunks: list[Chunk], tmp_path: Path
) -> None:
    """The service's tenants are ``ACME``, ``GLOBEX``, ``INITECH``; the corpus says ``acme``, ...: every
    real tenant request is refused and only the near misses are served. Exit 1 (nothing was verified),
    and the reason names the likely cause instead of accusing silently."""
    service = make_round4_service("plain", chunks, honest=True)
    upper = {t.upper(): t for t in service.tenants}

    def handle(request: Request) -> Reply:
        body = request.json()
        named = body.get("tenant_id")
        if not isinstance(named, str) or named not in upper:
            return Reply(status=403, body={"detail": "unknown tenant"})
        status, payload, _ = service.respond({**body, "tenant_id": upper[named]}, {}, {})
        return Reply(status=status, body=payload)

    out = tmp_path / "renamed.json"
    with LocalServer(handle) as server:
        code = main(
            [
                *("audit-tenants", "--corpus", CORPUS, "--endpoint", server.url),
                *("--out", str(out), "--no-progress", *SMALL_CLI),
            ]
        )
    report = json.loads(out.read_text(encoding="utf-8"))
    assert code == 1 and report["verdict"] == "leak"
    assert {r["caller"] for r in report["leaks"]["records"]} <= set(upper)
    assert "check that --corpus names the tenants as the service does" in report["isolation"]["reason"]
