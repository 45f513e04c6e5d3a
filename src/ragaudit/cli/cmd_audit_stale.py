"""``ragaudit audit-stale``: how often superseded document versions reach the top k, per pipeline."""

from __future__ import annotations

import argparse
import sys

from ragaudit.cli.argtypes import input_file, output_file, positive_int, share
from ragaudit.cli.common import add_dataset_options, add_source_options
from ragaudit.cli.console import shown
from ragaudit.cli.outcome import add_outcome_options

HELP = "audit stale versions: share of superseded documents retrieved in the top k, per pipeline"


EXAMPLES = """\
ragaudit audit-stale --dataset golden.jsonl --corpus corpus.jsonl --pipeline hybrid --k 5
ragaudit audit-stale --dataset golden.jsonl --corpus corpus.jsonl --run bm25.trec --run dense.trec
"""
JSON_OUT = True
"""``--out -`` writes the JSON report to standard output."""


def configure(parser: argparse.ArgumentParser) -> None:
    add_dataset_options(parser, corpus="corpus with metadata.status (active | superseded)")
    add_source_options(parser, many_pipelines=True)
    parser.add_argument(
        "--run", type=input_file, action="append", default=[], help="a TREC or JSONL run file (repeatable)"
    )
    parser.add_argument("--k", type=positive_int, default=5, help="cut-off (default 5)")
    parser.add_argument("--tenant", help="tenant for cases that name none")
    parser.add_argument("--out", type=output_file, help="write the audit JSON here (- for standard output)")
    parser.add_argument(
        "--max-stale-share",
        type=share,
        help="exit 1 when any source's stale_share@k is above this share (default: report only)",
    )
    add_outcome_options(parser)


def run(args: argparse.Namespace) -> int:
    import asyncio
    import json
    from datetime import datetime, timezone
    from pathlib import Path

    from ragaudit.cli.cmd_audit_tenants import endpoint_or_plugin
    from ragaudit.corpus.loading import load_corpus
    from ragaudit.data.loading import load_dataset, load_run
    from ragaudit.errors import InputError
    from ragaudit.pipelines.build import ComponentCache
    from ragaudit.pipelines.sources import OpenedSource, SourceSpec, open_source
    from ragaudit.report.terminal import render_terminal
    from ragaudit.runner.execute import run_cases
    from ragaudit.security.error_rate import run_error_rate
    from ragaudit.security.ownership import OwnershipIndex
    from ragaudit.security.stale_audit import audit_stale
    from ragaudit.version import __version__

    if not (args.pipeline or args.run or args.endpoint or args.retriever):
        raise InputError(
            "audit-stale",
            None,
            "nothing to audit",
            "add --pipeline NAME, --run FILE, --endpoint URL or --retriever",
        )
    dataset = load_dataset(args.dataset, args.dataset_format, args.split)
    corpus = load_corpus(args.corpus)
    cache = ComponentCache()
    sources: list[tuple[OpenedSource, Via]] = [
        (
            open_source(SourceSpec(pipeline=p, qdrant_url=args.qdrant_url), corpus=corpus, cache=cache),
            "pipeline",
        )
        for p in args.pipeline
    ]
    if args.endpoint or args.retriever:
        sources.append((endpoint_or_plugin(args), "endpoint" if args.endpoint else "retriever"))
    from ragaudit.cli.outcome import Via, exit_code, run_outcome

    audits = []
    checks = []
    expected = [c.id for c in dataset.cases]
    for source, via in sources:
        run = asyncio.run(
            run_cases(
                source.retriever,
                dataset.cases,
                args.k,
                default_tenant=args.tenant,
                concurrency=args.concurrency,
                timeout_s=args.timeout,
                name=source.label,
                progress=False if args.no_progress else None,
            )
        )
        ownership = OwnershipIndex.build(corpus.documents, source.chunks)
        audits.append((audit_stale(run, dataset.cases, ownership, args.k, source.label), run_error_rate(run)))
        checks.append(run_outcome(run, expected, source.label, via))
    plain = OwnershipIndex.build(corpus.documents)
    for path in args.run:
        loaded = load_run(path)
        audits.append((audit_stale(loaded, dataset.cases, plain, args.k), run_error_rate(loaded, expected)))
        checks.append(run_outcome(loaded, expected, f"--run {path}", "run"))
    report = {
        "schema_version": 1,
        "kind": "stale-audit",
        "ragaudit_version": __version__,
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "dataset": dataset.info(),
        "corpus": corpus.info(),
        "k": args.k,
        "sources": [{**audit.to_dict(), "errors": errors.to_dict()} for audit, errors in audits],
    }
    print(render_terminal(report, limit=5))
    if args.out:
        target = Path(args.out)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"report written to {shown(args.out)}")
    code = exit_code(checks, args.max_error_rate)
    unverified = next((a.not_verified for a, _ in audits if a.not_verified), None)
    if unverified:  # nothing could be stale: the zeros are no pass
        print(f"stale versions: NOT VERIFIED - {unverified}", file=sys.stderr)
        code = 1
    limit = args.max_stale_share
    if limit is not None:
        over = [a.name for a, _ in audits if a.share > limit]
        if over:
            print(f"stale_share@{args.k} above {limit:g}: {', '.join(over)}")
            return 1
    return code
