"""``ragaudit serve``'s saved index (``--index-dir``): reloaded at a restart with identical results, never
loaded for other inputs, and never half-served after a ``kill -9`` during indexing.

The kills are deterministic: the serve process runs with a hook (patched in by ``python -c`` before
``main``) that, at a chosen point of the build, writes a signal file and sleeps; the test waits for the
file and sends SIGKILL. No sleep race.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from ragaudit.serving.engine import build_engine
from ragaudit.serving.index_dir import BUILDING_PREFIX, MANIFEST
from test_serve import CORPUS, ROOT, TENANTS, ServeProcess, post, write_keys

httpx = pytest.importorskip("httpx")
pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

QUERIES = ("refund policy for annual plans", "how do I reset my password", "pricing of the enterprise plan")


def rankings(url: str, keys: dict[str, str]) -> dict[tuple[str, str], list[tuple[str, float]]]:
    """Every tenant's ranking (ids and scores) of every query."""
    out = {}
    for tenant in TENANTS:
        for query in QUERIES:
            reply = post(url, keys[tenant], {"query": query, "top_k": 10})
            assert reply.status_code == 200
            results = reply.json()["results"]
            assert all(c["tenant_id"] == tenant for c in results)
            out[(tenant, query)] = [(c["chunk_id"], c["score"]) for c in results]
    return out


def index_lines(server: ServeProcess) -> list[str]:
    return [line.strip() for line in server.lines if line.startswith("index: ")]


def saved_indexes(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(BUILDING_PREFIX))


def building_folders(root: Path) -> list[Path]:
    return sorted(root.glob(BUILDING_PREFIX + "*"))


def test_a_restart_loads_the_saved_index_and_serves_identical_results(tmp_path: Path) -> None:
    """hybrid (a BM25 index and dense embeddings): the second start loads, rebuilds nothing, and every
    tenant's ranking of every query is the same, ids and scores."""
    server_keys, _, keys = write_keys(tmp_path)
    root = tmp_path / "indexes"
    args = ("--pipeline", "hybrid", "--corpus", CORPUS, "--keys", str(server_keys), "--index-dir", str(root))
    first = ServeProcess(*args)
    try:
        before = rankings(first.url, keys)
        assert httpx.get(first.base + "/healthz").json()["index"] == "built"
    finally:
        first.stop()
    built = index_lines(first)
    assert any(line.startswith("index: none saved for these inputs") for line in built), built
    assert any(line.startswith("index: built and saved to") for line in built), built
    [saved] = saved_indexes(root)
    manifest = json.loads((saved / MANIFEST).read_text(encoding="utf-8"))
    assert [s["type"] for s in manifest["stages"]] == ["bm25", "dense"]
    stamp = (saved / MANIFEST).stat().st_mtime_ns

    second = ServeProcess(*args)
    try:
        after = rankings(second.url, keys)
        assert httpx.get(second.base + "/healthz").json()["index"] == "loaded"
    finally:
        second.stop()
    loaded = index_lines(second)
    assert len(loaded) == 1 and loaded[0].startswith(f"index: loaded {saved} "), loaded
    assert "no rebuild" in loaded[0]
    assert after == before and sum(len(r) for r in after.values()) > 0
    assert saved_indexes(root) == [saved] and (saved / MANIFEST).stat().st_mtime_ns == stamp
    assert building_folders(root) == []


def engine_lines(corpus: str, root: Path, pipeline: str = "bm25") -> tuple[list[str], Any]:
    said: list[str] = []
    engine = build_engine(pipeline, corpus, index_dir=root, say=said.append)
    return said, engine


def test_other_inputs_never_load_a_saved_index(tmp_path: Path) -> None:
    """Another corpus, another BM25 setting, the superseded documents served: each gets its own index;
    the same inputs again load theirs; a saved index whose chunks disagree is discarded and rebuilt."""
    root = tmp_path / "indexes"
    said, _ = engine_lines(CORPUS, root)
    assert said[0].startswith("index: none saved") and said[-1].startswith("index: built")

    changed = tmp_path / "corpus.jsonl"
    lines = Path(CORPUS).read_text(encoding="utf-8").splitlines()
    doc = json.loads(lines[0])
    doc["text"] += " An extra sentence about parking."
    changed.write_text("\n".join([json.dumps(doc), *lines[1:]]) + "\n", encoding="utf-8")
    said, _ = engine_lines(str(changed), root)
    assert said[0].startswith("index: none saved"), said

    tuned = tmp_path / "bm25-k1.toml"
    tuned.write_text('name = "bm25-k1"\n[retriever]\ntype = "bm25"\nk1 = 1.2\n', encoding="utf-8")
    said, _ = engine_lines(CORPUS, root, str(tuned))
    assert said[0].startswith("index: none saved"), said

    said_all: list[str] = []
    build_engine("bm25", CORPUS, index_dir=root, serve_superseded=True, say=said_all.append)
    assert said_all[0].startswith("index: none saved"), said_all
    assert len(saved_indexes(root)) == 4

    said, engine = engine_lines(CORPUS, root)
    assert said[0].startswith("index: loaded") and engine.info["index"] == "loaded"

    # a saved index that no longer matches its manifest's chunk digest is never served
    path = Path(engine.info["index_path"])
    manifest = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
    manifest["chunks_sha256"] = "0" * 64
    (path / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    said, engine = engine_lines(CORPUS, root)
    assert "unusable" in said[0] and said[-1].startswith("index: built"), said
    assert engine.info["index"] == "built" and building_folders(root) == []


HOOK = """
import os, time
from pathlib import Path

def _signal_and_wait():
    Path(os.environ["SERVE_TEST_SIGNAL"]).write_text("now")
    time.sleep(600)

{patch}
import sys
from ragaudit.cli.main import main
sys.exit(main(sys.argv[1:]))
"""

MID_BM25_SAVE = """
from ragaudit.retrieval import bm25 as _bm25
_save = _bm25.BM25Retriever.save
def _half_saved(self, folder):
    _save(self, folder)          # the index files are written, the manifest is not
    _signal_and_wait()
_bm25.BM25Retriever.save = _half_saved
"""

BEFORE_THE_RENAME = """
from ragaudit.serving import index_dir as _index_dir
_fsync_tree = _index_dir.fsync_tree
def _flushed(folder):
    _fsync_tree(folder)          # the manifest is written and flushed, the folder not yet renamed
    _signal_and_wait()
_index_dir.fsync_tree = _flushed
"""

MID_QDRANT_UPSERT = """
from ragaudit.retrieval import qdrant_store as _qdrant
_upsert = _qdrant.QdrantVectorStore._upsert
def _first_batch_only(self, points, start):
    _upsert(self, points[:10], start)  # the new collection holds 10 points: half written
    _signal_and_wait()
_qdrant.QdrantVectorStore._upsert = _first_batch_only
"""


def kill_during_indexing(patch: str, args: list[str], tmp_path: Path) -> None:
    """Start serve with the hook, wait until it reaches the hooked point, SIGKILL it."""
    signal_file = tmp_path / f"signal-{time.monotonic_ns()}"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
        "SERVE_TEST_SIGNAL": str(signal_file),
    }
    proc = subprocess.Popen(
        [sys.executable, "-c", HOOK.format(patch=patch), "serve", *args, "--port", "0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        deadline = time.monotonic() + 180
        while not signal_file.exists():
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "serve never reached the hooked point"
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    assert proc.returncode == -signal.SIGKILL


@pytest.mark.parametrize("patch", [MID_BM25_SAVE, BEFORE_THE_RENAME], ids=["mid-save", "before-rename"])
def test_a_kill_during_indexing_leaves_no_half_index_served(patch: str, tmp_path: Path) -> None:
    server_keys, _, keys = write_keys(tmp_path)
    root = tmp_path / "indexes"
    args = ["--pipeline", "bm25", "--corpus", CORPUS, "--keys", str(server_keys), "--index-dir", str(root)]
    kill_during_indexing(patch, args, tmp_path)
    [dead] = building_folders(root)
    assert saved_indexes(root) == []  # nothing under a key: nothing a start could load
    if patch is BEFORE_THE_RENAME:
        assert (dead / MANIFEST).is_file()  # complete but never switched in: still not loaded

    server = ServeProcess(*args)
    try:
        served = rankings(server.url, keys)
    finally:
        server.stop()
    lines = index_lines(server)
    assert lines[0] == f"index: removed an incomplete build {dead} (killed or failed during indexing)"
    assert lines[1].startswith("index: none saved") and lines[2].startswith("index: built"), lines
    assert building_folders(root) == [] and len(saved_indexes(root)) == 1

    reference = build_engine("bm25", CORPUS, index_dir=None)
    import asyncio

    for (tenant, query), ranking in served.items():
        expected = asyncio.run(reference.search(tenant, query, 10))
        assert ranking == [(c["chunk_id"], c["score"]) for c in expected]


def test_a_build_that_fails_leaves_nothing_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An error while saving (a full disk, say) removes the build folder before the error surfaces; the
    next start builds from scratch."""
    from ragaudit.retrieval.bm25 import BM25Retriever

    save = BM25Retriever.save

    def full_disk(self: BM25Retriever, folder: Path) -> None:
        save(self, folder)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(BM25Retriever, "save", full_disk)
    root = tmp_path / "indexes"
    with pytest.raises(OSError, match="No space left"):
        build_engine("bm25", CORPUS, index_dir=root)
    assert building_folders(root) == [] and saved_indexes(root) == []
    monkeypatch.setattr(BM25Retriever, "save", save)
    said, engine = engine_lines(CORPUS, root)
    assert said[0].startswith("index: none saved") and engine.info["index"] == "built"
