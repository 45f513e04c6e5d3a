"""The lesson's pytest security test (section 20), run unchanged through a fixture that provides ``retriever``.

The test body below is the lesson's, verbatim. It trusts ``item.get("tenant_id")``, so on its own a
service that relabels another tenant's chunk as the caller's would pass it. The fixture therefore
wraps the system under test in :class:`~ragaudit.security.verified.CorpusLabeledRetriever`, which
replaces every label with the owner the corpus gives: the unchanged test then catches relabelling
too.

The lesson's test is ``async`` and marked ``security``. It runs in a separate pytest process whose
conftest (written below) registers the marker, runs coroutine tests with ``asyncio.run`` and
provides ``retriever`` over the demo knowledge base with the lesson's tenant ids (``tenant_acme``;
the demo's ``globex`` becomes ``tenant_acme_holdings`` so a prefix-matching filter has something
to leak), parametrised over a built-in pipeline and the deliberately leaky retrievers.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import KB
from ragaudit.corpus.chunkers import chunk_corpus, make_chunker
from ragaudit.corpus.loading import load_corpus
from ragaudit.security.leaky import make_leaky
from ragaudit.security.ownership import OwnershipIndex
from ragaudit.security.verified import CorpusLabeledRetriever

LESSON_TEST = """
import pytest

@pytest.mark.security
async def test_retrieval_never_leaks_cross_tenant_chunks(retriever):
    # Tenant A executes a query that semantically matches Tenant B's private contract
    results = await retriever.search(
        tenant_id="tenant_acme",
        query="What are the confidential severance clauses?",
        top_k=10,
    )

    # Assert 100% of returned chunks strictly belong to caller's verified tenant
    unauthorized = [
        item for item in results
        if item.get("tenant_id") != "tenant_acme"
    ]
    assert len(unauthorized) == 0, f"CRITICAL LEAK: {len(unauthorized)} foreign chunks detected!"
"""

CONFTEST = """
import asyncio
import inspect
from dataclasses import replace

import pytest

from ragaudit.corpus.chunkers import chunk_corpus, make_chunker
from ragaudit.corpus.loading import Corpus, load_corpus
from ragaudit.retrieval.bm25 import BM25Retriever
from ragaudit.security.leaky import make_leaky
from ragaudit.security.ownership import OwnershipIndex
from ragaudit.security.verified import CorpusLabeledRetriever

RENAME = {"acme": "tenant_acme", "globex": "tenant_acme_holdings", "initech": "tenant_initech"}
SYSTEMS = ["bm25", "post-filter-backfill", "relabeling", "rewrite-path", "rerank-path", "prefix-tenant"]


def pytest_configure(config):
    config.addinivalue_line("markers", "security: a tenant-isolation test")


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    if inspect.iscoroutinefunction(pyfuncitem.obj):
        names = pyfuncitem._fixtureinfo.argnames
        asyncio.run(pyfuncitem.obj(**{n: pyfuncitem.funcargs[n] for n in names}))
        return True
    return None


@pytest.fixture(scope="session")
def corpus():
    demo = load_corpus("{kb}/corpus.jsonl")
    documents = tuple(replace(d, tenant_id=RENAME[d.tenant_id]) for d in demo.documents)
    return Corpus(documents, demo.path, demo.sha256)


@pytest.fixture(params=SYSTEMS)
def retriever(request, corpus):
    chunks = chunk_corpus(corpus, make_chunker("whole"))
    system = BM25Retriever.from_chunks(chunks) if request.param == "bm25" else make_leaky(request.param, chunks)
    return CorpusLabeledRetriever(system, OwnershipIndex.build(corpus.documents, chunks))
"""


def _outcomes(output: str) -> dict[str, str]:
    found = re.findall(
        r"^(PASSED|FAILED|ERROR) \S+::test_retrieval_never_leaks_cross_tenant_chunks\[([^\]]+)\]",
        output,
        re.M,
    )
    return {param: status for status, param in found}


def test_the_lessons_test_runs_unchanged_through_the_fixture(tmp_path: Path) -> None:
    (tmp_path / "test_lesson.py").write_text(LESSON_TEST, encoding="utf-8")
    (tmp_path / "conftest.py").write_text(CONFTEST.replace("{kb}", str(KB)), encoding="utf-8")
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\naddopts = --strict-markers -p no:cacheprovider -p no:ragaudit -p no:anyio\n",
        encoding="utf-8",
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-rA", "-q", "-m", "security", str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    outcomes = _outcomes(done.stdout)
    assert outcomes == {
        "bm25": "PASSED",
        "post-filter-backfill": "FAILED",
        "relabeling": "FAILED",  # caught only because the fixture labels chunks from the corpus
        "rewrite-path": "FAILED",  # "confidential" is rewritten, and that path skips the tenant filter
        # One query is not an audit: tenant_acme has enough own candidates for this query, so the rerank
        # stage never widens its pool. The tenant audit's probes catch this retriever (test_tenant_audit).
        "rerank-path": "PASSED",
        "prefix-tenant": "FAILED",  # tenant_acme is a prefix of tenant_acme_holdings
    }, done.stdout[-3000:] + done.stderr[-2000:]
    assert done.stdout.count("CRITICAL LEAK:") >= 4
    assert "PytestUnhandledCoroutineWarning" not in done.stdout + done.stderr


def _lesson_test() -> Any:
    namespace: dict[str, Any] = {}
    exec(compile(LESSON_TEST, "lesson_section_20", "exec"), namespace)
    return namespace["test_retrieval_never_leaks_cross_tenant_chunks"]


def test_without_corpus_labels_the_lesson_test_misses_a_relabeling_service() -> None:
    """Why the fixture relabels: the same test passes a leaking service that lies about labels."""
    demo = load_corpus(KB / "corpus.jsonl")
    renamed = {"acme": "tenant_acme", "globex": "tenant_globex", "initech": "tenant_initech"}
    from dataclasses import replace

    from ragaudit.corpus.loading import Corpus

    corpus = Corpus(
        tuple(replace(d, tenant_id=renamed[d.tenant_id]) for d in demo.documents), demo.path, demo.sha256
    )
    chunks = chunk_corpus(corpus, make_chunker("whole"))
    lying = make_leaky("relabeling", chunks)
    lesson = _lesson_test()
    asyncio.run(lesson(lying))  # passes: every label says tenant_acme
    checked = CorpusLabeledRetriever(lying, OwnershipIndex.build(corpus.documents, chunks))
    with pytest.raises(AssertionError, match="CRITICAL LEAK"):
        asyncio.run(lesson(checked))
    assert checked.leaks and {o for leak in checked.leaks for o in leak.owners} <= {
        "tenant_globex",
        "tenant_initech",
    }
    assert all(leak.claimed_tenant == "tenant_acme" for leak in checked.leaks)
