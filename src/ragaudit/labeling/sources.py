"""Where pooled candidates come from: new queries, built pipelines, run files, a live endpoint.

Each system gives one :class:`~ragaudit.data.run.Run`; the texts the annotator sees come from the
pipelines' own chunks (with their offsets into the document), from what a live source returned, or,
for run files, from the corpus documents whose id is the chunk id (documents indexed whole).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from types import MappingProxyType

from ragaudit.corpus.loading import Corpus
from ragaudit.corpus.model import Chunk
from ragaudit.data.lines import iter_json_records
from ragaudit.data.run import Run
from ragaudit.data.schema import GoldenCase
from ragaudit.errors import InputError, Problem, ValidationError
from ragaudit.labeling.pool import ChunkText
from ragaudit.retrieval.protocol import Retriever


def load_queries(path: str | Path) -> list[GoldenCase]:
    """New queries to pool, without labels: ``{"id", "query", "tenant_id"?}`` per line (BEIR's
    ``{"_id", "text"}`` is read too)."""
    problems: list[Problem] = []
    cases: list[GoldenCase] = []
    seen: set[str] = set()
    for number, obj in iter_json_records(path, problems):
        if not isinstance(obj, dict):
            problems.append(Problem(str(path), number, "expected a JSON object", 'write {"id", "query"}'))
            continue
        case_id, query = obj.get("id", obj.get("_id")), obj.get("query", obj.get("text"))
        tenant = obj.get("tenant_id")
        if not isinstance(case_id, (str, int)) or isinstance(case_id, bool) or not str(case_id).strip():
            problems.append(Problem(str(path), number, "missing 'id'", 'add "id": "q-001"'))
            continue
        if not isinstance(query, str) or not query.strip():
            problems.append(Problem(str(path), number, "missing 'query'", 'add "query": "..."'))
            continue
        if tenant is not None and (not isinstance(tenant, str) or not tenant.strip()):
            problems.append(Problem(str(path), number, "'tenant_id' must be a string", 'e.g. "acme"'))
            continue
        if str(case_id) in seen:
            problems.append(Problem(str(path), number, f"duplicate id {case_id!r}", "give each query its id"))
            continue
        seen.add(str(case_id))
        cases.append(GoldenCase(str(case_id), query, None, MappingProxyType({}), tenant))
    if problems:
        raise ValidationError(problems)
    if not cases:
        raise InputError(str(path), None, "no queries found", 'write one {"id", "query"} per line')
    return cases


def chunk_text(chunk: Chunk) -> ChunkText:
    return ChunkText(chunk.doc_id, chunk.start, chunk.title, chunk.text, dict(chunk.metadata))


def texts_from_chunks(chunks: Iterable[Chunk]) -> dict[str, ChunkText]:
    return {c.chunk_id: chunk_text(c) for c in chunks}


def texts_from_corpus(corpus: Corpus) -> dict[str, ChunkText]:
    """Documents indexed whole: the chunk id is the document id and the text starts at offset 0."""
    return {
        d.doc_id: ChunkText(d.doc_id, 0, d.title, d.text, dict(d.metadata) | {"tenant_id": d.tenant_id})
        for d in corpus.documents
    }


def texts_from_run(run: Run) -> dict[str, ChunkText]:
    """What a live source said about its results (content, and doc_id/start/title in metadata)."""
    out: dict[str, ChunkText] = {}
    for case_run in run.cases.values():
        for item in case_run.items:
            if item.content is None or item.chunk_id in out:
                continue
            meta = dict(item.metadata or {})
            doc_id, start = meta.get("doc_id"), meta.get("start")
            out[item.chunk_id] = ChunkText(
                doc_id if isinstance(doc_id, str) else None,
                start if isinstance(start, int) and not isinstance(start, bool) else None,
                str(meta.get("title") or ""),
                item.content,
                meta,
            )
    return out


async def run_retriever(
    retriever: Retriever,
    cases: Sequence[GoldenCase],
    depth: int,
    name: str,
    *,
    default_tenant: str | None,
    concurrency: int,
    timeout_s: float,
    progress: bool | None,
) -> Run:
    """Query one live system for every case through the runner (retries, timeouts, tenants)."""
    from ragaudit.runner.execute import run_cases

    return await run_cases(
        retriever,
        cases,
        depth,
        default_tenant=default_tenant,
        concurrency=concurrency,
        timeout_s=timeout_s,
        name=name,
        progress=progress,
    )
