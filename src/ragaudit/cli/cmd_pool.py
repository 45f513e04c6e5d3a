"""``ragaudit pool``: TREC depth-k pooling of several systems' results into candidates to judge."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragaudit.cli.common import add_format_and_split, check_positive, source_spec_from
from ragaudit.cli.console import step

if TYPE_CHECKING:
    from ragaudit.data.run import Run
    from ragaudit.data.schema import GoldenCase
    from ragaudit.labeling.pool import ChunkText, Pool
    from ragaudit.labeling.siblings import Versions

HELP = "pool the top results of several systems into candidates to judge (TREC depth-k pooling)"
EFFORT_ROWS = 40
LOW_JUDGED = 0.8


EXAMPLES = """\
ragaudit pool --queries queries.jsonl --corpus corpus.jsonl --pipelines bm25,dense,hybrid --depth 20 \\
    --out pool.jsonl
ragaudit pool --dataset golden.jsonl --runs a.trec,b.trec --out pool.jsonl
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--dataset", help="an existing golden set (JSONL, BEIR folder or qrels): its grades carry over"
    )
    add_format_and_split(parser)
    parser.add_argument("--queries", help='new queries without labels: JSONL of {"id", "query", "tenant_id"}')
    parser.add_argument(
        "--corpus", help="corpus JSONL or BEIR folder (needed with --pipelines; gives run files their texts)"
    )
    parser.add_argument(
        "--pipelines", help="comma-separated presets or pipeline TOML files, built over --corpus"
    )
    parser.add_argument("--runs", help="comma-separated run files (TREC or JSONL)")
    parser.add_argument("--endpoint", help="URL of a retrieval service: POST {tenant_id, query, top_k}")
    parser.add_argument(
        "--field", action="append", default=[], metavar="OURS=THEIRS", help="endpoint field map"
    )
    parser.add_argument("--results-field", help="where the endpoint's result list is, e.g. data.hits")
    parser.add_argument("--auth-env", help="env var holding the endpoint's auth token")
    parser.add_argument(
        "--depth", type=int, default=20, help="top results pooled from each system (default 20)"
    )
    parser.add_argument(
        "--draft-unanswerable",
        type=int,
        default=0,
        metavar="N",
        help="add N drafted unanswerable probes per tenant (other tenants' entities; needs --corpus)",
    )
    llm = parser.add_argument_group("grade suggestions from a model (shown as suggestions only)")
    llm.add_argument(
        "--suggest-grades", metavar="URL", help="OpenAI-compatible API root, e.g. http://127.0.0.1:8000/v1"
    )
    llm.add_argument("--suggest-model", help="the model name")
    llm.add_argument("--suggest-api-key-env", help="env var holding the API key (none for a local server)")
    parser.add_argument("--out", required=True, help="the pool file to write (JSONL)")
    parser.add_argument("--tenant", help="tenant for cases that name none")
    parser.add_argument("--concurrency", type=int, default=8, help="queries in flight per system (default 8)")
    parser.add_argument("--timeout", type=float, default=30.0, help="per-query timeout in seconds")
    parser.add_argument("--qdrant-url", help="use this Qdrant server as the dense store of --pipelines")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def _cases(args: argparse.Namespace) -> tuple[list[GoldenCase], dict[str, Any]]:
    from ragaudit.data.loading import load_dataset
    from ragaudit.errors import InputError
    from ragaudit.labeling.sources import load_queries

    if not args.dataset and not args.queries:
        raise InputError(
            "--dataset", None, "nothing to pool for", "pass --dataset GOLDEN and/or --queries FILE"
        )
    cases: list[GoldenCase] = []
    info: dict[str, Any] = {}
    if args.dataset:
        dataset = load_dataset(args.dataset, args.dataset_format, args.split)
        cases.extend(dataset.cases)
        info["dataset"] = dataset.info()
    if args.queries:
        known = {c.id for c in cases}
        new = load_queries(args.queries)
        clash = [c.id for c in new if c.id in known]
        if clash:
            raise InputError(
                args.queries, None, f"query id {clash[0]!r} is also in --dataset", "give new queries new ids"
            )
        cases.extend(new)
        info["queries"] = {"path": args.queries, "cases": len(new)}
    return cases, info


async def _systems(
    args: argparse.Namespace, cases: list[GoldenCase]
) -> tuple[dict[str, Run], dict[str, ChunkText], dict[str, Any]]:
    """Every system's run, the candidate texts they give, and provenance."""
    from ragaudit.data.loading import load_run
    from ragaudit.errors import InputError
    from ragaudit.labeling.sources import run_retriever, texts_from_chunks, texts_from_corpus, texts_from_run
    from ragaudit.pipelines.sources import SourceSpec, open_source

    if not (args.pipelines or args.runs or args.endpoint):
        raise InputError(
            "--pipelines", None, "no system to pool", "pass --pipelines, --runs and/or --endpoint"
        )
    corpus = None
    if args.corpus:
        from ragaudit.corpus.loading import load_corpus

        corpus = load_corpus(args.corpus)
    elif args.pipelines:
        raise InputError("--corpus", None, "pipelines need a corpus to index", "add --corpus corpus.jsonl")
    runs: dict[str, Run] = {}
    texts: dict[str, ChunkText] = texts_from_corpus(corpus) if corpus is not None else {}
    info: dict[str, Any] = {"corpus": corpus.info()} if corpus is not None else {}
    live = {
        "default_tenant": args.tenant,
        "concurrency": args.concurrency,
        "timeout_s": args.timeout,
        "progress": False if args.no_progress else None,
    }
    if args.pipelines:
        from ragaudit.pipelines.build import ComponentCache

        assert corpus is not None
        cache = ComponentCache()
        for spec in (s.strip() for s in args.pipelines.split(",") if s.strip()):
            with step(f"pool: building pipeline {spec} over {args.corpus}"):
                opened = open_source(
                    SourceSpec(pipeline=spec, qdrant_url=args.qdrant_url), corpus=corpus, cache=cache
                )
            texts.update(texts_from_chunks(opened.chunks))
            runs[_unique(opened.label, runs)] = await run_retriever(
                opened.retriever, cases, args.depth, opened.label, **live
            )
    for path in (s.strip() for s in (args.runs or "").split(",") if s.strip()):
        run = load_run(path)
        runs[_unique(Path(path).stem, runs)] = run
    if args.endpoint:
        # the same HTTP retriever 'eval --endpoint' opens, from the same options (texts come from the endpoint)
        source = open_source(source_spec_from(args, pipeline=None, retriever=None, run=None))
        run = await run_retriever(source.retriever, cases, args.depth, "endpoint", **live)
        texts.update(texts_from_run(run))
        runs[_unique("endpoint", runs)] = run
        info.update(source.context)
    return runs, texts, info


def _unique(name: str, taken: dict[str, Any]) -> str:
    if name not in taken:
        return name
    n = 2
    while f"{name}-{n}" in taken:
        n += 1
    return f"{name}-{n}"


def _drafts(args: argparse.Namespace) -> list[GoldenCase]:
    if not args.draft_unanswerable:
        return []
    from ragaudit.corpus.loading import load_corpus
    from ragaudit.errors import InputError
    from ragaudit.labeling.drafts import unanswerable_drafts

    if not args.corpus:
        raise InputError(
            "--draft-unanswerable", None, "drafting probes needs the corpus", "add --corpus corpus.jsonl"
        )
    return unanswerable_drafts(load_corpus(args.corpus).documents, args.draft_unanswerable)


def _versions(args: argparse.Namespace) -> dict[str, Versions]:
    if not args.corpus:
        return {}
    from ragaudit.corpus.loading import load_corpus
    from ragaudit.labeling.siblings import version_siblings

    return version_siblings(load_corpus(args.corpus).documents)


def _suggest(args: argparse.Namespace, pool: Pool) -> None:
    from ragaudit.errors import InputError
    from ragaudit.labeling.suggest import suggest_grades
    from ragaudit.llm.chat import ChatClient

    if not args.suggest_model:
        raise InputError(
            "--suggest-model", None, "grade suggestions need a model name", "add --suggest-model NAME"
        )
    client = ChatClient(
        args.suggest_grades, args.suggest_model, args.suggest_api_key_env, timeout_s=args.timeout
    )
    done, errors = asyncio.run(suggest_grades(pool, client, args.concurrency))
    client.close()
    pool.header["suggestions"] = {**client.info(), "suggested": done, "failed": len(errors)}
    print(
        f"model suggestions: {done} of {pool.unjudged} candidates to judge ({client.model}); shown, never taken as labels"
    )
    for error in errors[:5]:
        print(f"warning: no suggestion for {error}")


def effort_report(pool: Pool) -> str:
    """The labeling effort: candidates and pairs still to judge, per case (most first) and in total."""
    from ragaudit.artifacts.tables import render_table

    cases = sorted(pool.cases, key=lambda c: (-c.unjudged, c.case_id))
    rows = [
        [
            c.case_id,
            c.tenant_id or "-",
            str(len(c.candidates)),
            str(len(c.candidates) - c.unjudged),
            str(c.unjudged),
        ]
        for c in cases[:EFFORT_ROWS]
    ]
    table = render_table(["case", "tenant", "pooled", "carried over", "to judge"], rows)
    more = f"\n... and {len(cases) - EFFORT_ROWS} more cases" if len(cases) > EFFORT_ROWS else ""
    missing = sum(1 for c in pool.cases for cand in c.candidates if not cand.text.text)
    note = (
        f"\nwarning: {missing} candidates have no text (not in --corpus): the workbench shows their id only"
        if missing
        else ""
    )
    shares = pool.judged_share()
    if shares:
        listed = ", ".join(f"{system} {share:.0%}" for system, share in shares.items())
        note += f"\njudged@{pool.header['depth']} before labeling (share of each system's pool already graded): {listed}"
        low = [system for system, share in shares.items() if share < LOW_JUDGED]
        if low and any(c.judged for c in pool.cases):
            note += (
                f"\nwarning: under {LOW_JUDGED:.0%} judged: {', '.join(low)}; their scores on the current golden set "
                "are lower bounds (unjudged counts as irrelevant) until this pool is labeled"
            )
    drafts = sum(1 for c in pool.cases if c.draft)
    if drafts:
        note += f"\n{drafts} drafted unanswerable probes included: mark each one unanswerable (U) to keep it"
    return (
        f"{table}{more}\n"
        f"pooled {pool.candidates} candidates for {len(pool.cases)} cases from {', '.join(pool.header['systems'])} "
        f"(depth {pool.header['depth']}): {pool.candidates - pool.unjudged} carried over from the golden set, "
        f"{pool.unjudged} to judge{note}"
    )


def run(args: argparse.Namespace) -> int:
    from ragaudit.labeling.pool import build_pool

    check_positive("--depth", args.depth)
    check_positive("--concurrency", args.concurrency)
    check_positive("--timeout", args.timeout)
    if args.draft_unanswerable < 0:
        check_positive("--draft-unanswerable", args.draft_unanswerable)
    cases, info = _cases(args)
    drafts = _drafts(args)
    runs, texts, source_info = asyncio.run(_systems(args, [*cases, *drafts]))
    versions = _versions(args)
    pool = build_pool(
        [*cases, *drafts],
        runs,
        args.depth,
        texts,
        {**info, **source_info, "drafts": len(drafts)},
        versions=versions,
        drafts=[d.id for d in drafts],
    )
    if args.suggest_grades:
        _suggest(args, pool)
    pool.write(args.out)
    print(effort_report(pool))
    print(f"pool written to {args.out}; label it with: ragaudit label {args.out} --out judgments/NAME.jsonl")
    return 0
