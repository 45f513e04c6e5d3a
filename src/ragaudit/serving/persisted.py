"""The first stage of a served pipeline, saved in ``--index-dir`` and loaded at the next start.

:class:`PersistedFirstStage` is a :data:`~ragaudit.pipelines.build.FirstStageBuilder`: given the
first stage's configuration and chunks it loads the index saved for the same inputs, or builds one,
saves it and switches it in atomically (:mod:`ragaudit.serving.index_dir`). The rerank and rewrite
stages (e.g. the learned fusion model) are built on top at every start, as ``ragaudit eval`` does.

The **key** of an index is the sha256 of its inputs (``manifest.json`` keeps them readable): the
index format, the ragaudit version, the served corpus's sha256 (``:active`` appended when superseded
documents are left out), the chunking and the first stage's configuration, each embedding model's
fingerprint, bm25s's version when a BM25 stage is present, and each Qdrant stage's location. Any
change gives another key, so a stale index is never loaded; the loaded one is also checked against the
chunks (a digest of their ids, tenants and texts) and its Qdrant collections (present, point counts).

What each leaf stage saves: ``bm25``: bm25s's arrays per tenant (``.npy``, no pickle);
``dense`` on the exact store: the corpus embeddings (one float32 ``.npy``; queries are embedded by the
model at run time); ``dense`` on Qdrant: a **new** collection ``<name>-<build id>`` (recorded before it
is created, so a killed build's collection is dropped at the next start), the manifest its pointer.
An in-memory Qdrant collection cannot be saved: such a pipeline is rebuilt at every start (said so).

A start that builds serves the index read back from the folder after the switch, exactly as a restart
does: so a restart serves the same scores to the last bit (an embedded Qdrant collection scores a
reopened collection about 1e-16 apart from the one it was upserted into), and a saved index that
cannot be read fails the build, not the next start.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragaudit.corpus.loading import Corpus
from ragaudit.corpus.model import Chunk
from ragaudit.pipelines.build import (
    ComponentCache,
    build_first_stage,
    dense_store,
    make_hybrid,
    stage_encoder,
)
from ragaudit.pipelines.config import ChunkingConfig, StageConfig
from ragaudit.retrieval.embedding_types import TextEncoder
from ragaudit.retrieval.protocol import Retriever
from ragaudit.serving.index_dir import (
    MANIFEST,
    Build,
    discard,
    locked,
    read_json,
    remove_build,
    remove_dead_builds,
)
from ragaudit.version import __version__

INDEX_FORMAT = 1
Say = Callable[[str], None]


class UnusableIndex(Exception):
    """A saved index that does not match what it should hold (it is discarded and rebuilt)."""


def leaves(stage: StageConfig) -> list[StageConfig]:
    """The bm25 and dense stages of a first stage, depth first (the order of ``stage-<i>``)."""
    if stage.type == "hybrid":
        return [leaf for component in stage.components for leaf in leaves(component)]
    return [stage]


def chunks_digest(chunks: Sequence[Chunk]) -> str:
    digest = hashlib.sha256()
    for chunk in chunks:
        digest.update(json.dumps([chunk.tenant_id, chunk.chunk_id, chunk.index_text]).encode())
    return digest.hexdigest()


def qdrant_location(options: dict[str, Any], key_env: Any) -> dict[str, Any]:
    """Where a Qdrant stage's collections live, as recorded (never an API key: the variable's name)."""
    if "url" in options:
        return {"url": options["url"], **({"api_key_env": str(key_env)} if key_env else {})}
    if "path" in options:
        return {"path": str(Path(options["path"]).resolve())}
    return {"location": options.get("location", ":memory:")}


def open_qdrant_client(location: dict[str, Any]) -> Any:
    import os

    from qdrant_client import QdrantClient

    if "url" in location:
        env = location.get("api_key_env")
        return QdrantClient(url=location["url"], api_key=os.environ.get(env) if env else None)
    return QdrantClient(path=location["path"])


def drop_collection(entry: dict[str, Any]) -> None:
    """Drop a collection a dead or discarded build recorded (absent already: nothing to do)."""
    location = entry.get("location")
    if not isinstance(location, dict) or not ({"url", "path"} & set(location)):
        return
    if "path" in location and not Path(location["path"]).exists():
        return
    client = open_qdrant_client(location)
    try:
        if client.collection_exists(entry["collection"]):
            client.delete_collection(entry["collection"])
    finally:
        client.close()


def _close_store(retriever: Retriever) -> None:
    store = getattr(retriever, "store", None)
    if store is not None and hasattr(store, "close"):
        store.close()


class PersistedFirstStage:
    """Loads the first stage saved in ``root`` for these inputs, else builds, saves and switches it in.

    ``say`` gets one line per decision (``index: loaded ...``, ``index: building ...``, ``index:
    removed an incomplete build ...``); ``outcome`` is ``"loaded"``, ``"built"`` or ``"not-persisted"``
    after the call."""

    def __init__(
        self, root: Path, corpus: Corpus, chunking: ChunkingConfig, qdrant_url: str | None, say: Say
    ) -> None:
        self.root = root
        self.corpus = corpus
        self.chunking = chunking
        self.overrides = {"qdrant_url": qdrant_url}
        self.say = say
        self.outcome = ""
        self.path: Path | None = None

    # -- inputs -------------------------------------------------------------------------------------

    def inputs(self, stage: StageConfig, encoders: dict[int, TextEncoder], chunk_key: str) -> dict[str, Any]:
        """What the index is keyed by (see the module docstring)."""
        found = leaves(stage)
        inputs: dict[str, Any] = {
            "format": INDEX_FORMAT,
            "ragaudit": __version__,
            "corpus_sha256": self.corpus.sha256,
            "chunking": {
                "strategy": self.chunking.strategy,
                "size": self.chunking.size,
                "overlap": self.chunking.overlap,
            },
            "first_stage": stage.to_dict(),
            "models": {str(i): encoder.fingerprint for i, encoder in sorted(encoders.items())},
            "qdrant": {
                str(i): at for i, leaf in enumerate(found) if (at := self._qdrant_at(leaf, chunk_key))
            },
        }
        if any(leaf.type == "bm25" for leaf in found):
            import bm25s

            inputs["bm25s"] = str(bm25s.__version__)
        return inputs

    def _qdrant_at(self, leaf: StageConfig, chunk_key: str) -> dict[str, Any] | None:
        """Where a dense leaf's Qdrant collections live; ``None`` for any other store or stage."""
        if leaf.type != "dense":
            return None
        store, options = dense_store(leaf, self.overrides, chunk_key)
        return qdrant_location(options, leaf.params.get("qdrant_api_key_env")) if store == "qdrant" else None

    # -- the FirstStageBuilder ----------------------------------------------------------------------

    def __call__(
        self, stage: StageConfig, chunks: Sequence[Chunk], chunk_key: str
    ) -> tuple[Retriever, float]:
        started = time.perf_counter()
        found = leaves(stage)
        if any("location" in (self._qdrant_at(leaf, chunk_key) or {}) for leaf in found):
            self.outcome = "not-persisted"
            self.say("index: not persisted (an in-memory Qdrant collection cannot be saved); building it")
            retriever, _ = build_first_stage(stage, chunks, ComponentCache(), chunk_key, self.overrides)
            return retriever, time.perf_counter() - started
        encoders = {
            i: stage_encoder(leaf, self.overrides) for i, leaf in enumerate(found) if leaf.type == "dense"
        }
        inputs = self.inputs(stage, encoders, chunk_key)
        key = hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()
        with locked(self.root):
            for name in remove_dead_builds(self.root, drop_collection):
                self.say(
                    f"index: removed an incomplete build {self.root / name} (killed or failed during indexing)"
                )
            final = self.root / key
            if final.exists():
                try:
                    retriever = self._load(final, stage, chunks, encoders, key)
                except (UnusableIndex, OSError, ValueError, KeyError) as exc:
                    self.say(
                        f"index: the saved index {final} is unusable ({exc}); removing it and rebuilding"
                    )
                    discard(final, drop_collection)
                else:
                    self.outcome, self.path = "loaded", final
                    self.say(
                        f"index: loaded {final} (saved for these inputs; no rebuild) "
                        f"in {time.perf_counter() - started:.2f} s"
                    )
                    return retriever, time.perf_counter() - started
            else:
                self.say(f"index: none saved for these inputs in {self.root} (key {key[:16]}); building")
            retriever = self._build(stage, chunks, encoders, inputs, key, chunk_key)
        self.say(f"index: built and saved to {self.path} in {time.perf_counter() - started:.2f} s")
        return retriever, time.perf_counter() - started

    # -- building -----------------------------------------------------------------------------------

    def _build(
        self,
        stage: StageConfig,
        chunks: Sequence[Chunk],
        encoders: dict[int, TextEncoder],
        inputs: dict[str, Any],
        key: str,
        chunk_key: str,
    ) -> Retriever:
        build = Build(self.root, key)
        entries: list[dict[str, Any]] = []
        built_leaves: list[Retriever] = []
        try:
            for position, leaf in enumerate(leaves(stage)):
                retriever, entry = self._build_leaf(leaf, position, chunks, encoders, build, chunk_key)
                entries.append(entry)
                built_leaves.append(retriever)
        except BaseException:  # a failed build leaves nothing behind (a killed one: the next start)
            for retriever in built_leaves:
                _close_store(retriever)
            remove_build(build.path, drop_collection)
            raise
        manifest = {
            "key": key,
            "inputs": inputs,
            "chunks": len(chunks),
            "chunks_sha256": chunks_digest(chunks),
            "stages": entries,
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        self.path = build.commit(manifest)
        self.outcome = "built"
        for retriever in built_leaves:  # release Qdrant's local folder: the index is read back next
            _close_store(retriever)
        return self._load(self.path, stage, chunks, encoders, key)

    def _build_leaf(
        self,
        leaf: StageConfig,
        position: int,
        chunks: Sequence[Chunk],
        encoders: dict[int, TextEncoder],
        build: Build,
        chunk_key: str,
    ) -> tuple[Retriever, dict[str, Any]]:
        name = f"stage-{position}"
        if leaf.type == "bm25":
            from ragaudit.retrieval.bm25 import BM25Retriever

            bm25 = BM25Retriever.from_chunks(chunks, **dict(leaf.params))
            bm25.save(build.path / name)
            return bm25, {"type": "bm25", "folder": name}
        from ragaudit.retrieval.dense import DenseRetriever, make_store

        encoder = encoders[position]
        store, options = dense_store(leaf, self.overrides, chunk_key)
        if store == "qdrant":
            options["collection"] = f"{options['collection']}-{build.build_id}"
            location = qdrant_location(options, leaf.params.get("qdrant_api_key_env"))
            build.will_create_collection(options["collection"], location)
            dense = DenseRetriever.from_chunks(chunks, store="qdrant", model=encoder, **options)
            entry = {
                "type": "dense",
                "store": "qdrant",
                "collection": options["collection"],
                "location": location,
            }
            return dense, entry
        vectors = np.asarray(encoder.encode([c.index_text for c in chunks]), dtype=np.float32)
        np.save(build.path / f"{name}.npy", vectors, allow_pickle=False)
        dense = DenseRetriever(encoder, make_store("exact"))
        dense.add_embedded(chunks, vectors)
        return dense, {"type": "dense", "store": "exact", "file": f"{name}.npy"}

    # -- loading ------------------------------------------------------------------------------------

    def _load(
        self,
        final: Path,
        stage: StageConfig,
        chunks: Sequence[Chunk],
        encoders: dict[int, TextEncoder],
        key: str,
    ) -> Retriever:
        manifest = read_json(final / MANIFEST)
        if manifest.get("key") != key:
            raise UnusableIndex("its manifest names another key")
        if manifest.get("chunks") != len(chunks) or manifest.get("chunks_sha256") != chunks_digest(chunks):
            raise UnusableIndex("its chunks differ from the corpus's")
        entries = manifest["stages"]
        if len(entries) != len(leaves(stage)):
            raise UnusableIndex("it has another number of stages")
        opened: list[Retriever] = []

        def loaded(node: StageConfig) -> Retriever:
            if node.type == "hybrid":
                return make_hybrid(node, [loaded(c) for c in node.components])
            position = len(opened)
            opened.append(self._load_leaf(final, node, entries[position], chunks, encoders.get(position)))
            return opened[-1]

        try:
            return loaded(stage)
        except BaseException:
            for retriever in opened:  # release Qdrant's local folder before the index is discarded
                _close_store(retriever)
            raise

    def _load_leaf(
        self,
        final: Path,
        leaf: StageConfig,
        entry: dict[str, Any],
        chunks: Sequence[Chunk],
        encoder: TextEncoder | None,
    ) -> Retriever:
        if entry.get("type") != leaf.type:
            raise UnusableIndex(f"a stage is {entry.get('type')!r}, the pipeline's is {leaf.type!r}")
        if leaf.type == "bm25":
            from ragaudit.retrieval.bm25 import BM25Retriever

            return BM25Retriever.load(final / entry["folder"], chunks)
        from ragaudit.retrieval.dense import DenseRetriever, make_store

        assert encoder is not None
        if entry.get("store") == "qdrant":
            from ragaudit.retrieval.qdrant_store import QdrantVectorStore

            location = entry["location"]
            where: dict[str, Any] = (
                {"url": location["url"]} if "url" in location else {"path": location["path"]}
            )
            if "path" in where and not Path(where["path"]).is_dir():
                raise UnusableIndex(f"its Qdrant folder {where['path']} is gone")
            if "url" in location and location.get("api_key_env"):
                import os

                where["api_key"] = os.environ.get(location["api_key_env"])
            qdrant = QdrantVectorStore(
                entry["collection"], hybrid=bool(leaf.params.get("hybrid_sparse", False)), **where
            )
            if qdrant.dim is None or qdrant.count() != len(chunks):
                qdrant.close()
                raise UnusableIndex(f"Qdrant collection {entry['collection']!r} is missing or incomplete")
            dense = DenseRetriever(encoder, qdrant)
            dense.chunks_indexed = len(chunks)
            return dense
        vectors = np.load(final / entry["file"], allow_pickle=False)
        if vectors.ndim != 2 or vectors.shape[0] != len(chunks) or vectors.dtype != np.float32:
            raise UnusableIndex(
                f"{entry['file']} holds {vectors.shape} {vectors.dtype}, not one row per chunk"
            )
        dense = DenseRetriever(encoder, make_store("exact"))
        dense.add_embedded(chunks, vectors)
        return dense
