"""``ragaudit audit-tenants``: probe a retriever for cross-tenant leaks; exit 1 on any leak.

Probes come from each tenant's own documents (titles, distinctive sentences, rare names, confidential
phrases, canaries) and are asked as every other tenant and as hostile tenant ids; the owner of every
returned chunk is decided from the corpus (docs/security.md).
"""

from __future__ import annotations

import argparse
from typing import Any

from ragaudit.cli.common import add_source_options, check_positive, check_share

HELP = "audit tenant isolation: ask each tenant's probes as every other tenant; exit 1 on any leak"
_SHOWN = 10


def endpoint_or_plugin(args: argparse.Namespace) -> Any:
    """The :class:`~ragaudit.security.sources.AuditSource` of ``--endpoint`` or ``--retriever``."""
    from ragaudit.cli.common import field_map_from
    from ragaudit.security.sources import endpoint_source, plugin_source

    if args.endpoint:
        return endpoint_source(
            args.endpoint,
            auth_env=args.auth_env,
            field_map=field_map_from(args.field),
            results_field=args.results_field,
            timeout_s=args.timeout,
            concurrency=args.concurrency,
        )
    return plugin_source(args.retriever)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--corpus", required=True, help="the corpus the service serves (JSONL or BEIR folder)"
    )
    add_source_options(parser)
    parser.add_argument("--canaries", help="JSONL of planted secrets: {tenant_id, doc_id?, secret} per line")
    parser.add_argument("--out", help="write the audit JSON here")
    parser.add_argument("--top-k", type=int, default=10, help="results requested per probe (default 10)")
    parser.add_argument(
        "--probes-per-tenant", type=int, default=24, help="probes made per tenant (default 24)"
    )
    parser.add_argument(
        "--callers-per-probe",
        type=int,
        help="ask each probe as at most this many other tenants (default: all)",
    )
    parser.add_argument(
        "--hostile-probes",
        type=int,
        default=2,
        help="probes per tenant asked with hostile tenant ids (none, empty, case/whitespace variants, "
        "prefixes; default 2, 0 skips)",
    )
    parser.add_argument(
        "--max-error-rate",
        type=float,
        default=0.0,
        help="share of failed probe requests tolerated before the audit counts as incomplete (default 0)",
    )


def _summary(audit: Any, max_error_rate: float) -> str:
    report = audit.to_dict(max_error_rate)
    lines = [
        f"tenants {len(audit.tenants)}, probes {report['probes']['total']} "
        f"({', '.join(f'{n} {k}' for k, n in report['probes']['by_kind'].items())}), top_k {audit.options.top_k}",
        f"requests: {report['requests']['cross_tenant']} cross-tenant, {report['requests']['hostile_tenant']} "
        f"with hostile tenant ids ({report['hostile_tenants']['refused']} refused, "
        f"{report['hostile_tenants']['empty']} empty, {report['hostile_tenants']['served']} served data)",
        f"errors: {audit.errors.failed} of {audit.errors.total} requests failed"
        + (
            f" ({', '.join(f'{n} {k}' for k, n in audit.errors.by_kind.items())})"
            if audit.errors.failed
            else ""
        ),
        f"chunks checked {audit.checked_chunks}, unattributed {audit.unattributed_count}, "
        f"label mismatches {audit.label_mismatches}",
    ]
    if audit.leaks:
        hostile = [leak for leak in audit.leaks if leak.hostile]
        lines.append(
            f"LEAKS: {len(audit.leaks)} foreign chunks served "
            f"({len(audit.leaks) - len(hostile)} to other tenants, {len(hostile)} to hostile tenant ids)"
        )
        lines += [f"  {pair}: {n}" for pair, n in report["leaks"]["by_pair"].items() if "'" not in pair][:20]
        callers = list(dict.fromkeys(repr(leak.caller) for leak in hostile))
        if callers:
            more = f" and {len(callers) - 12} more" if len(callers) > 12 else ""
            lines.append(f"  hostile ids that were served data: {', '.join(callers[:12])}{more}")
        for leak in audit.leaks[:_SHOWN]:
            lines.append(
                f"  probe {leak.probe.id} asked as {leak.caller!r}: {leak.chunk_id} at rank {leak.rank} "
                f"belongs to {', '.join(leak.owners)} (by {leak.attributed_by}; labelled {leak.claimed_tenant!r})"
            )
        if len(audit.leaks) > _SHOWN:
            lines.append(f"  ... {len(audit.leaks) - _SHOWN} more in the report")
    verdict = report["verdict"]
    lines.append(
        {
            "clean": "verdict: clean (no foreign chunk served)",
            "leak": "verdict: LEAK (release blocker)",
            "incomplete": "verdict: incomplete (too many failed requests to prove isolation)",
        }[verdict]
    )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    import asyncio

    from ragaudit.corpus.loading import load_corpus
    from ragaudit.security.canaries import load_canaries
    from ragaudit.security.ownership import OwnershipIndex
    from ragaudit.security.probes import generate_probes
    from ragaudit.security.sources import pipeline_source
    from ragaudit.security.tenant_audit import AuditOptions, audit_tenants

    check_positive("--top-k", args.top_k)
    check_positive("--probes-per-tenant", args.probes_per_tenant)
    check_positive("--callers-per-probe", args.callers_per_probe, allow_none=True)
    check_positive("--concurrency", args.concurrency)
    check_positive("--timeout", args.timeout)
    check_share("--max-error-rate", args.max_error_rate)
    corpus = load_corpus(args.corpus)
    canaries = load_canaries(args.canaries, corpus.documents) if args.canaries else ()
    if args.pipeline:
        source = pipeline_source(args.pipeline, corpus, qdrant_url=args.qdrant_url)
    else:
        source = endpoint_or_plugin(args)
    ownership = OwnershipIndex.build(corpus.documents, source.chunks, canaries)
    probes = generate_probes(corpus.documents, canaries=canaries, per_tenant=args.probes_per_tenant)
    options = AuditOptions(
        top_k=args.top_k,
        concurrency=args.concurrency,
        timeout_s=args.timeout,
        callers_per_probe=args.callers_per_probe,
        hostile_probes=max(0, args.hostile_probes),
        progress=False if args.no_progress else None,
    )
    context = {"source": {"label": source.label, **source.context}, "corpus": corpus.info()}
    if canaries:
        context["canaries"] = {"path": args.canaries, "count": len(canaries)}
    audit = asyncio.run(audit_tenants(source.retriever, ownership, probes, options, context=context))
    print(_summary(audit, args.max_error_rate))
    if args.out:
        audit.write_json(args.out, args.max_error_rate)
        print(f"report written to {args.out}")
    return 0 if audit.verdict(args.max_error_rate) == "clean" else 1
