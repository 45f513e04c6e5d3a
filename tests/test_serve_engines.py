"""``ragaudit serve`` with the learned-fusion pipeline and with a Qdrant dense stage: served from the
saved index, audited clean, and (learned fusion) ``eval --endpoint`` equal to ``eval --pipeline``.

Qdrant runs in its embedded local mode (a folder): there the ``is_tenant`` payload index is accepted
but has no effect (qdrant-client filters by scanning), so the tests check that serve *asks* for it and
that every query carries the tenant filter, and that what comes back is the tenant's own points.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import KB
from ragaudit.cli.main import main
from ragaudit.retrieval.fusion_features import FEATURES
from ragaudit.retrieval.learned_fusion import FusionModel
from ragaudit.serving.index_dir import MANIFEST
from test_serve import CORPUS, TENANTS, ServeProcess, eval_report, write_keys
from test_serve_index import (
    MID_QDRANT_UPSERT,
    building_folders,
    index_lines,
    kill_during_indexing,
    rankings,
    saved_indexes,
)

pytest.importorskip("httpx")
pytest.importorskip("starlette")
pytest.importorskip("uvicorn")


def audit_clean(url: str, client_keys: Path, tmp_path: Path) -> dict[str, Any]:
    """A small tenant audit against ``url`` (probes 6 per tenant, one round); the report."""
    out = tmp_path / "audit.json"
    code = main(
        [
            "audit-tenants", "--corpus", CORPUS, "--canaries", str(KB / "canaries.jsonl"), "--no-progress",
            "--endpoint", url, "--endpoint-keys", str(client_keys), "--out", str(out),
            "--probes-per-tenant", "6", "--rounds", "1",
        ]
    )  # fmt: skip
    report: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    assert code == 0 and report["verdict"] == "clean" and report["leaks"]["count"] == 0, report["verdict"]
    assert report["isolation"]["verified"] > 0 and report["unattributed"]["count"] == 0
    assert report["hostile_tenants"]["served"] == 0
    return report


def test_learned_fusion_is_served_audited_clean_and_evaluates_as_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``serve --pipeline hybrid-rerank:fusion.json`` (a model file as fit-fusion writes it): the audit
    is clean, and eval over the endpoint equals eval of the pipeline in process, rankings and metrics."""
    monkeypatch.chdir(tmp_path)  # the run history goes here
    weights = {"bm25_score": 0.6, "dense_cosine": 1.5, "bm25_log_rank": -0.3, "dense_log_rank": -0.2}
    model = tmp_path / "fusion.json"
    FusionModel(
        tuple(weights.get(name, 0.0) for name in FEATURES),
        (0.0,) * len(FEATURES),
        (1.0,) * len(FEATURES),
        candidates=50,
    ).write(model)
    pipeline = f"hybrid-rerank:{model}"
    server_keys, client_keys, _ = write_keys(tmp_path)
    server = ServeProcess(
        "--pipeline", pipeline, "--corpus", CORPUS, "--keys", str(server_keys), "--serve-superseded",
        "--index-dir", str(tmp_path / "indexes"),
    )  # fmt: skip
    try:
        served, served_rankings = eval_report(
            ["--endpoint", server.url, "--endpoint-keys", str(client_keys)], tmp_path, "served"
        )
        audit_clean(server.url, client_keys, tmp_path)
    finally:
        server.stop()
    assert any("hybrid-rerank" in line for line in server.lines if line.startswith("serving "))
    local, local_rankings = eval_report(["--pipeline", pipeline], tmp_path, "local")
    assert len(local_rankings) == 84 and served_rankings == local_rankings
    assert served["metrics"] == local["metrics"]


def qdrant_pipeline(tmp_path: Path) -> Path:
    config = tmp_path / "qdrant.toml"
    config.write_text(
        f'name = "dense-qdrant"\n[retriever]\ntype = "dense"\nstore = "qdrant"\n'
        f'qdrant_path = "{tmp_path / "qdrant"}"\n',
        encoding="utf-8",
    )
    return config


def collections(folder: Path) -> dict[str, int]:
    """The collections of an embedded Qdrant folder and their point counts (no serve running)."""
    from qdrant_client import QdrantClient

    client = QdrantClient(path=str(folder))
    try:
        return {
            c.name: int(client.count(c.name, exact=True).count) for c in client.get_collections().collections
        }
    finally:
        client.close()


def test_a_qdrant_engine_builds_a_new_collection_switches_by_pointer_and_survives_a_kill(
    tmp_path: Path,
) -> None:
    """Killed mid-upsert: the half-filled new collection is never served; the next start drops it,
    builds another, audits clean, and a restart loads that one (same answers, no rebuild)."""
    pytest.importorskip("qdrant_client")
    server_keys, client_keys, keys = write_keys(tmp_path)
    root = tmp_path / "indexes"
    args = ["--pipeline", str(qdrant_pipeline(tmp_path)), "--corpus", CORPUS, "--keys", str(server_keys),
            "--index-dir", str(root)]  # fmt: skip
    kill_during_indexing(MID_QDRANT_UPSERT, args, tmp_path)
    [dead] = building_folders(root)
    [half] = json.loads((dead / "building.json").read_text(encoding="utf-8"))["collections"]
    assert saved_indexes(root) == [] and collections(tmp_path / "qdrant") == {half["collection"]: 10}

    server = ServeProcess(*args)
    try:
        before = rankings(server.url, keys)
        audit_clean(server.url, client_keys, tmp_path)
    finally:
        server.stop()
    lines = index_lines(server)
    assert lines[0].startswith(f"index: removed an incomplete build {dead}") and "built" in lines[-1]
    [saved] = saved_indexes(root)
    [stage] = json.loads((saved / MANIFEST).read_text(encoding="utf-8"))["stages"]
    assert stage["store"] == "qdrant" and stage["collection"] != half["collection"]
    assert collections(tmp_path / "qdrant") == {stage["collection"]: 75}  # the dead build's is dropped

    again = ServeProcess(*args)
    try:
        assert rankings(again.url, keys) == before
    finally:
        again.stop()
    assert [line.split(" (")[0] for line in index_lines(again)] == [f"index: loaded {saved}"]


def test_serve_asks_qdrant_for_an_is_tenant_index_and_filters_every_query(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In process, the served engine's Qdrant calls are recorded: the collection gets a keyword
    ``tenant_id`` payload index with ``is_tenant=True``, and every query request carries a ``must``
    filter on the caller's tenant (ranking never sees another tenant's point)."""
    pytest.importorskip("qdrant_client")
    import asyncio

    from qdrant_client import QdrantClient

    from ragaudit.serving.engine import build_engine

    indexed: list[tuple[str, Any]] = []
    requests: list[Any] = []
    create_index, query_batch = QdrantClient.create_payload_index, QdrantClient.query_batch_points

    def record_index(self: Any, collection: str, field_name: str, **kwargs: Any) -> Any:
        indexed.append((field_name, kwargs.get("field_schema")))
        return create_index(self, collection, field_name, **kwargs)

    def record_queries(self: Any, collection: str, **kwargs: Any) -> Any:
        requests.extend(kwargs["requests"])
        return query_batch(self, collection, **kwargs)

    monkeypatch.setattr(QdrantClient, "create_payload_index", record_index)
    monkeypatch.setattr(QdrantClient, "query_batch_points", record_queries)
    engine = build_engine(str(qdrant_pipeline(tmp_path)), CORPUS, index_dir=tmp_path / "indexes")
    try:
        [(field, schema)] = indexed
        assert field == "tenant_id" and schema.is_tenant is True and str(schema.type.value) == "keyword"
        for tenant in TENANTS:
            found = asyncio.run(engine.search(tenant, "refund policy", 10))
            assert found and all(c["tenant_id"] == tenant for c in found)
            conditions = requests[-1].filter.must
            assert [(c.key, c.match.value) for c in conditions] == [("tenant_id", tenant)]
    finally:
        engine.retriever.close()  # type: ignore[attr-defined]
