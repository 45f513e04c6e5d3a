"""The query-vector memo: each distinct text embedded once, bounded; the tenant audit uses it and its
report is identical without it (dense and hybrid on the demo knowledge base); eval, bench and serve
never use it (their query latency must stay the model's)."""

from __future__ import annotations

import ast
import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ragaudit
import ragaudit.security.tenant_audit as tenant_audit_module
from conftest import KB
from ragaudit.corpus.loading import Corpus, load_corpus
from ragaudit.corpus.model import Chunk
from ragaudit.evaluation.retriever_eval import evaluate_retriever
from ragaudit.pipelines.build import ComponentCache, build_pipeline
from ragaudit.pipelines.config import preset
from ragaudit.retrieval.dense import DenseRetriever
from ragaudit.retrieval.embedding_types import FloatMatrix
from ragaudit.retrieval.query_memo import QueryMemo, RememberedQueries, dense_parts
from ragaudit.retrieval.vector_store import ExactVectorStore
from ragaudit.security.canaries import load_canaries
from ragaudit.security.ownership import OwnershipIndex
from ragaudit.security.probes import generate_probes
from ragaudit.security.tenant_audit import AuditOptions, audit_tenants


class CountingEncoder:
    """A deterministic stand-in model: a text's vector depends on the text alone; counts what it embeds."""

    fingerprint = "counting-test-encoder"
    dim = 8

    def __init__(self) -> None:
        self.embedded: list[str] = []

    def encode(self, texts: Sequence[str]) -> FloatMatrix:
        self.embedded.extend(texts)
        rows = [np.random.default_rng(sum(map(ord, t)) + len(t)).random(self.dim) for t in texts]
        matrix = np.array(rows, dtype=np.float32).reshape(len(texts), self.dim)
        return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def test_memo_embeds_each_distinct_text_once_with_the_models_rows() -> None:
    model = CountingEncoder()
    memo = QueryMemo(model, limit=10)
    first = memo.encode(["a", "b", "a"])
    again = memo.encode(["b", "c", "a", "c"])
    assert model.embedded == ["a", "b", "c"]  # each distinct text once, duplicates in a batch too
    assert (memo.misses, memo.hits) == (3, 4)
    fresh = CountingEncoder()
    assert np.array_equal(first, fresh.encode(["a", "b", "a"]))
    assert np.array_equal(again, fresh.encode(["b", "c", "a", "c"]))
    assert first.dtype == np.float32 and first.shape == (3, 8)
    assert (memo.fingerprint, memo.dim) == (model.fingerprint, model.dim)


def test_memo_is_bounded_and_drops_the_least_recently_used() -> None:
    model = CountingEncoder()
    memo = QueryMemo(model, limit=2)
    memo.encode(["a", "b"])
    memo.encode(["a"])  # "a" is now the most recently used
    memo.encode(["c"])  # "b" goes
    assert len(memo) == 2
    memo.encode(["a", "b"])
    assert model.embedded == ["a", "b", "c", "b"]
    assert memo.info() == {"hits": 2, "misses": 4, "kept": 2, "limit": 2}
    with pytest.raises(ValueError, match="at least one"):
        QueryMemo(model, limit=0)


def _chunks() -> list[Chunk]:
    texts = {"acme": ["refund window", "parking rules"], "globex": ["rocket fuel", "lunch menu"]}
    return [
        Chunk(f"{tenant}-{i}", f"{tenant}-{i}", tenant, 0, len(text), text)
        for tenant, items in texts.items()
        for i, text in enumerate(items)
    ]


def test_dense_retriever_remembers_only_when_asked_and_forgets() -> None:
    model = CountingEncoder()
    retriever = DenseRetriever(model, ExactVectorStore())
    retriever.add(_chunks())
    model.embedded.clear()
    retriever.search_many("acme", ["refund", "refund"], 2)
    assert model.embedded == ["refund", "refund"]  # by default every query goes to the model
    memo = retriever.remember_queries(16)
    assert retriever.remember_queries(16) is memo  # asking again keeps the memo
    remembered = retriever.search_many("acme", ["refund", "refund", "rocket"], 2)
    assert model.embedded[2:] == ["refund", "rocket"] and memo.hits == 1
    retriever.forget_queries()
    assert retriever.query_encoder is model
    assert retriever.search_many("acme", ["refund", "refund", "rocket"], 2) == remembered


class Counted:
    """The real model, counting the texts it embeds."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.fingerprint, self.dim = inner.fingerprint, inner.dim
        self.texts = 0

    def encode(self, texts: Sequence[str]) -> FloatMatrix:
        self.texts += len(texts)
        result: FloatMatrix = self.inner.encode(texts)
        return result


@pytest.fixture(scope="module")
def kb() -> Corpus:
    return load_corpus(KB / "corpus.jsonl")


@pytest.mark.parametrize("name", ["dense", "hybrid"])
def test_the_audit_report_is_identical_with_and_without_the_memo(
    name: str, kb: Corpus, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = build_pipeline(preset(name), kb, cache=ComponentCache())
    canaries = load_canaries(KB / "canaries.jsonl", kb.documents)
    ownership = OwnershipIndex.build(kb.documents, built.chunks, canaries)
    probes = generate_probes(kb.documents, canaries=canaries, per_tenant=6)
    options = AuditOptions(progress=False, top_k_values=(1, 10), concurrency_levels=(1, 8), rounds=2)
    installed: list[RememberedQueries] = []
    real = tenant_audit_module.remember_queries_in

    def spy(retriever: object) -> RememberedQueries:
        installed.append(real(retriever))
        return installed[-1]

    def none(retriever: object) -> RememberedQueries:
        return RememberedQueries([], [])

    def report(retriever: Any) -> dict[str, Any]:
        found = asyncio.run(audit_tenants(retriever, ownership, probes, options))
        out = found.to_dict()
        out.pop("created_at")
        return out

    monkeypatch.setattr(tenant_audit_module, "remember_queries_in", spy)
    with_memo = report(built.retriever)
    parts = list(dense_parts(built.retriever))
    assert len(parts) == 1 and len(installed[0].memos) == 1  # the dense part (of the hybrid too)
    memo = installed[0].memos[0]
    assert memo.hits > 5 * memo.misses > 0  # each probe text embedded once, asked many times
    assert not isinstance(parts[0].query_encoder, QueryMemo)  # the audit put the model back
    assert memo.hits + memo.misses == parts[0].queries_served
    monkeypatch.setattr(tenant_audit_module, "remember_queries_in", none)
    counted = Counted(parts[0].query_encoder)
    monkeypatch.setattr(parts[0], "query_encoder", counted)
    without = report(built.retriever)
    assert counted.texts == memo.hits + memo.misses  # the same queries, every one embedded by the model
    assert with_memo["checked_chunks"] > 1000 and with_memo["verdict"] == "clean"
    assert json.dumps(with_memo, sort_keys=True) == json.dumps(without, sort_keys=True)


def test_evaluation_embeds_every_query_with_the_model(tmp_path: Path) -> None:
    model = CountingEncoder()
    retriever = DenseRetriever(model, ExactVectorStore())
    retriever.add(_chunks())
    model.embedded.clear()
    golden = tmp_path / "golden.jsonl"
    cases = [
        {"id": f"q{i}", "query": "refund", "tenant_id": "acme", "relevant_chunk_ids": ["acme-0"]}
        for i in range(6)
    ]
    golden.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    result = asyncio.run(evaluate_retriever(retriever, golden, top_k=2, metrics="R@2"))
    assert result.metrics["R@2"] == 1.0
    assert model.embedded == ["refund"] * 6  # six latencies of the model, none of a memo


def test_only_the_tenant_audit_installs_the_memo() -> None:
    """eval, bench and serve measure query latency: no module but the tenant audit may remember queries."""
    root = Path(ragaudit.__file__).parent
    allowed = {"retrieval/query_memo.py", "retrieval/dense.py", "security/tenant_audit.py"}
    names = {"QueryMemo", "remember_queries", "remember_queries_in", "RememberedQueries"}
    users = set()
    for path in root.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            used = (
                node.id
                if isinstance(node, ast.Name)
                else node.attr
                if isinstance(node, ast.Attribute)
                else node.name
                if isinstance(node, ast.alias)
                else None
            )
            if used in names or (
                isinstance(node, ast.ImportFrom) and node.module == "ragaudit.retrieval.query_memo"
            ):
                users.add(path.relative_to(root).as_posix())
    assert users == allowed
