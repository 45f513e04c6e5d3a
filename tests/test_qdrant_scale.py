"""Qdrant at scale through the local code path: cluster settings reach ``create_collection``, every
upsert batch is retried on a transient failure (and only then), one collection per pipeline index.

The client is a real embedded Qdrant (``:memory:``) behind a thin proxy that records the calls and, for
the retry tests, fails chosen upserts the way a server does (HTTP 503 / 400 answers): the stand-in is
for the network, the index is real."""

from __future__ import annotations

import importlib.util
from types import MappingProxyType
from typing import Any

import httpx
import numpy as np
import pytest

from ragaudit.corpus.model import Chunk
from ragaudit.pipelines.build import collection_name
from ragaudit.pipelines.config import StageConfig
from ragaudit.retry import RetryPolicy

if importlib.util.find_spec("qdrant_client") is None:
    pytest.skip("qdrant-client not installed (the qdrant extra)", allow_module_level=True)

from ragaudit.retrieval.qdrant_store import QdrantVectorStore, is_transient_write_error

FAST = RetryPolicy(max_attempts=3, base_delay_s=0.0, max_delay_s=0.0)


def unexpected_response() -> type[Exception]:
    """qdrant-client's HTTP error, imported at use instead of at collection (qdrant-client's import
    takes seconds, which every pytest-xdist worker paid while collecting, whatever it ran)."""
    from qdrant_client.http.exceptions import UnexpectedResponse

    return UnexpectedResponse


class FlakyClient:
    """A real embedded client; ``fail`` lists the status each upsert call answers first (None = ok)."""

    def __init__(self, fail: list[int | None]) -> None:
        from qdrant_client import QdrantClient

        self.real = QdrantClient(location=":memory:")
        self.fail = list(fail)
        self.upserts = 0
        self.created: dict[str, Any] = {}
        self.indexed: dict[str, Any] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)

    def create_collection(self, name: str, **kwargs: Any) -> Any:
        self.created = kwargs
        return self.real.create_collection(name, **kwargs)

    def create_payload_index(self, collection: str, field: str, **kwargs: Any) -> Any:
        self.indexed[field] = kwargs["field_schema"]
        return self.real.create_payload_index(collection, field, **kwargs)

    def upsert(self, collection: str, **kwargs: Any) -> Any:
        self.upserts += 1
        status = self.fail.pop(0) if self.fail else None
        if status is not None:
            raise unexpected_response()(status, "stand-in", b"{}", httpx.Headers())
        return self.real.upsert(collection, **kwargs)


def chunks(n: int) -> tuple[list[Chunk], np.ndarray]:
    made = [Chunk(f"c{i}", f"d{i}", "acme" if i % 2 else "globex", 0, 5, f"text {i}") for i in range(n)]
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(n, 8)).astype(np.float32)
    return made, vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_cluster_settings_and_the_tenant_index_reach_the_collection() -> None:
    client = FlakyClient([])
    store = QdrantVectorStore(
        "big", client=client, shard_number=6, replication_factor=2, write_consistency_factor=1, on_disk=True
    )
    store.add(*chunks(4))
    assert {
        k: client.created[k] for k in ("shard_number", "replication_factor", "write_consistency_factor")
    } == {
        "shard_number": 6,
        "replication_factor": 2,
        "write_consistency_factor": 1,
    }
    assert client.created["vectors_config"]["dense"].on_disk is True
    tenant = client.indexed["tenant_id"]  # a keyword index marked as the tenant key
    assert (tenant.type.value, tenant.is_tenant) == ("keyword", True)


def test_a_transient_failure_is_retried_and_the_batches_all_land_once() -> None:
    client = FlakyClient([None, 503, 429, None])  # batch 2 fails twice, then lands
    store = QdrantVectorStore("big", client=client, batch_size=3, upsert_retry=FAST)
    made, vectors = chunks(7)  # batches of 3, 3, 1
    store.add(made, vectors)
    assert client.upserts == 5
    assert store.upsert_retries == 2
    assert store.count() == 7
    assert store.count("acme") == 3


def test_a_permanent_failure_is_not_retried_and_retries_are_bounded() -> None:
    store = QdrantVectorStore("big", client=FlakyClient([400]), upsert_retry=FAST)
    with pytest.raises(unexpected_response()):
        store.add(*chunks(2))
    assert store.upsert_retries == 0
    store = QdrantVectorStore("big", client=FlakyClient([503, 503, 503]), upsert_retry=FAST)
    with pytest.raises(unexpected_response()):
        store.add(*chunks(2))
    assert store.upsert_retries == 2  # 3 attempts in all
    assert is_transient_write_error(ConnectionError("reset"))
    assert not is_transient_write_error(ValueError("bad vector"))


def test_one_collection_per_pipeline_index() -> None:
    dense = StageConfig("dense", MappingProxyType({}))
    other_model = StageConfig("dense", MappingProxyType({"model": "/models/e5"}))
    sparse = StageConfig("dense", MappingProxyType({"hybrid_sparse": True}))
    names = {
        collection_name(dense, "corpus:fixed:256:0"),
        collection_name(dense, "corpus:fixed:128:0"),
        collection_name(other_model, "corpus:fixed:256:0"),
        collection_name(sparse, "corpus:fixed:256:0"),
    }
    assert len(names) == 4
    assert collection_name(dense, "corpus:fixed:256:0") == collection_name(dense, "corpus:fixed:256:0")
