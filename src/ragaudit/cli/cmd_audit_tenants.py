"""``ragaudit audit-tenants``: probe a retriever for cross-tenant leaks; exit 1 on any leak.

Probes come from each tenant's own documents (titles, distinctive sentences, rare names, confidential
phrases, canaries) and are asked by their owner first, then as every other tenant and as hostile tenant
ids, at several ``top_k`` values and concurrency levels, in rounds until the request budget is spent;
the owner of every returned chunk is decided from the corpus (docs/security.md, "How hard the audit looks").
"""

from __future__ import annotations

import argparse
from typing import Any

from ragaudit.cli.argtypes import non_negative_int
from ragaudit.cli.common import add_source_options, check_positive, check_share
from ragaudit.cli.console import shown, step
from ragaudit.cli.security_options import (
    add_attribute_options,
    add_shared_tenant_option,
    semantic_attributor,
    shared_tenants,
)
from ragaudit.errors import InputError

HELP = (
    "audit tenant isolation: ask each tenant's probes as its owner, then as every other tenant and as "
    "hostile tenant ids, at several top_k values and concurrency levels; every returned field is "
    "attributed from the corpus; exit 1 on any leak, and when the audit could not verify isolation "
    "(failed requests, unattributable chunks)"
)


EXAMPLES = """\
ragaudit audit-tenants --corpus corpus.jsonl --pipeline hybrid --canaries canaries.jsonl
ragaudit audit-tenants --corpus corpus.jsonl --endpoint http://localhost:8000/search --auth-env SEARCH_TOKEN
ragaudit audit-tenants --corpus corpus.jsonl --endpoint http://localhost:8001/search --endpoint-keys keys-client.toml
# exit 0 only when clean; 1 on a leak, or when isolation could not be verified; 2 bad input
"""
JSON_OUT = True
"""``--out -`` writes the JSON report to standard output."""


def endpoint_or_plugin(args: argparse.Namespace) -> Any:
    """The :class:`~ragaudit.pipelines.sources.OpenedSource` of ``--endpoint`` or ``--retriever``
    (the HTTP client sized for the highest concurrency level asked for)."""
    from ragaudit.cli.common import source_spec_from
    from ragaudit.pipelines.sources import open_source

    concurrency = max(getattr(args, "concurrency_levels", None) or [args.concurrency])
    return open_source(source_spec_from(args, pipeline=None, run=None, concurrency=concurrency))


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--corpus", required=True, help="the corpus the service serves (JSONL or BEIR folder)"
    )
    add_source_options(parser)
    parser.add_argument("--canaries", help="JSONL of planted secrets: {tenant_id, doc_id?, secret} per line")
    parser.add_argument("--out", help="write the audit JSON here (- for standard output)")
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
        "prefixes, lists, roles, wildcards, encodings, JSON arrays, path segments; default 2, 0 skips)",
    )
    looks = parser.add_argument_group("how hard the audit looks")
    looks.add_argument(
        "--top-k-values",
        metavar="K,K,...",
        help="top_k values to ask every probe with (default: 1, --top-k and --max-top-k), capped at the "
        "largest top_k the service accepts",
    )
    looks.add_argument(
        "--max-top-k",
        type=int,
        default=100,
        help="the largest top_k asked (default 100; halved, then bisected, while the service rejects it)",
    )
    looks.add_argument(
        "--concurrency-levels",
        metavar="N,N,...",
        help="requests in flight, one level per round in turn (default: 1 and max(32, --concurrency))",
    )
    looks.add_argument(
        "--budget",
        type=int,
        default=3000,
        help="send at least this many requests: the plan is repeated in rounds until it is reached "
        "(default 3000)",
    )
    looks.add_argument(
        "--golden",
        metavar="DATASET",
        help="also ask this golden set's questions (each as its tenant) and record the chunks returned, so "
        "'ragaudit gate' ties the audit to the eval report by its rankings (docs/gates.md)",
    )
    looks.add_argument(
        "--rounds", type=int, help="exactly this many rounds, whatever the budget (default: from --budget)"
    )
    mutations = parser.add_argument_group(
        "request mutations (docs/security.md, 'Request mutations'; sent once, before the rounds)"
    )
    mutations.add_argument(
        "--mutation-probes",
        type=non_negative_int,
        default=2,
        help="probes per tenant each request mutation is applied to: query shapes, pagination, the tenant "
        "in a header or parameter (default 2; 0 sends no mutation)",
    )
    mutations.add_argument(
        "--tenant-headers",
        metavar="NAME,...",
        help="headers that name the probe's owner against the body's tenant (--endpoint; default: "
        "X-Tenant,X-Tenant-Id,X-Org-Id,X-Organization-Id,X-Account-Id,X-Customer-Id; '' for none)",
    )
    mutations.add_argument(
        "--tenant-params",
        metavar="NAME,...",
        help="query-string parameters and body fields that name the probe's owner (--endpoint; default: "
        "tenant,tenant_id,tenantId,org_id,account_id,customer_id; '' for none)",
    )
    mutations.add_argument(
        "--page-params",
        metavar="NAME,...",
        help="pagination parameters asked beyond the first page, in the body and the query string "
        "(--endpoint; default: offset,page,from,cursor; '' for none)",
    )
    parser.add_argument(
        "--allow-unattributed",
        action="store_true",
        help="accept returned chunks that neither id, text nor any other field attributes to a tenant "
        "(opaque ids, analysed text) when at least --min-attributed of the returned chunks were "
        "attributed; by default they make the audit NOT VERIFIED (exit 1)",
    )
    parser.add_argument(
        "--max-records",
        type=non_negative_int,
        default=200,
        help="leak records listed in the report (default 200); every leak is counted, by class and by "
        "owner -> caller pair, so the report stays small however many leaks there are",
    )
    parser.add_argument(
        "--min-attributed",
        type=float,
        default=0.95,
        metavar="SHARE",
        help="with --allow-unattributed: the least share of returned chunks that must be attributed for "
        "the audit to pass (default 0.95); the verdict states the share",
    )
    add_shared_tenant_option(parser)
    add_attribute_options(parser)
    parser.add_argument(
        "--max-error-rate",
        type=float,
        default=0.0,
        help="share of failed probe requests tolerated before the audit counts as incomplete (default 0)",
    )


def int_list(option: str, text: str | None) -> tuple[int, ...] | None:
    """``"1,10,50"`` as ``(1, 10, 50)`` (``None`` for ``None``); anything but positive integers is an error."""
    if text is None:
        return None
    try:
        values = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        values = ()
    if not values or min(values) < 1:
        raise InputError(
            option,
            None,
            f"expected positive integers separated by commas, got {text!r}",
            f"e.g. {option} 1,10,50",
        )
    return values


def name_list(text: str | None, default: tuple[str, ...]) -> tuple[str, ...]:
    """``"a,b"`` as ``("a", "b")``; ``None`` gives ``default``, ``""`` gives none."""
    if text is None:
        return default
    return tuple(part.strip() for part in text.split(",") if part.strip())


def mutation_options(args: argparse.Namespace) -> Any:
    """The :class:`~ragaudit.security.request_mutations.MutationOptions` of the command line."""
    from ragaudit.security import request_mutations as rm

    return rm.MutationOptions(
        per_tenant=args.mutation_probes,
        tenant_headers=name_list(args.tenant_headers, rm.DEFAULT_TENANT_HEADERS),
        tenant_params=name_list(args.tenant_params, rm.DEFAULT_TENANT_PARAMS),
        page_params=name_list(args.page_params, rm.DEFAULT_PAGE_PARAMS),
    )


def run(args: argparse.Namespace) -> int:
    import asyncio

    from ragaudit.corpus.loading import load_corpus
    from ragaudit.pipelines.sources import SourceSpec, open_source
    from ragaudit.report.terminal import render_terminal
    from ragaudit.security.canaries import load_canaries
    from ragaudit.security.ownership import OwnershipIndex
    from ragaudit.security.probes import generate_probes
    from ragaudit.security.tenant_audit import AuditOptions, audit_tenants

    check_positive("--top-k", args.top_k)
    check_positive("--probes-per-tenant", args.probes_per_tenant)
    check_positive("--callers-per-probe", args.callers_per_probe, allow_none=True)
    check_positive("--concurrency", args.concurrency)
    check_positive("--max-top-k", args.max_top_k)
    check_positive("--rounds", args.rounds, allow_none=True)
    if args.budget < 0:
        raise InputError("--budget", None, f"must be 0 or more (got {args.budget})", "e.g. --budget 3000")
    args.top_k_values = int_list("--top-k-values", args.top_k_values)
    args.concurrency_levels = int_list("--concurrency-levels", args.concurrency_levels) or (
        1,
        max(32, args.concurrency),
    )
    check_positive("--timeout", args.timeout)
    check_share("--max-error-rate", args.max_error_rate)
    check_share("--min-attributed", args.min_attributed)
    with step(f"audit-tenants: reading the corpus {args.corpus}"):
        corpus = load_corpus(args.corpus)
        canaries = load_canaries(args.canaries, corpus.documents) if args.canaries else ()
    if args.pipeline:
        with step(
            f"audit-tenants: building pipeline {args.pipeline} over {args.corpus} (indexes, embeddings)"
        ):
            source = open_source(
                SourceSpec(pipeline=args.pipeline, qdrant_url=args.qdrant_url), corpus=corpus
            )
    elif getattr(args, "retriever", None):  # importing a framework can take seconds: say so
        with step(f"audit-tenants: loading the retriever {args.retriever}"):
            source = endpoint_or_plugin(args)
    else:
        source = endpoint_or_plugin(args)
    with step("audit-tenants: indexing chunk owners and planning the probes"):
        ownership = OwnershipIndex.build(corpus.documents, source.chunks, canaries)
        probes = generate_probes(corpus.documents, canaries=canaries, per_tenant=args.probes_per_tenant)
    options = AuditOptions(
        top_k=args.top_k,
        timeout_s=args.timeout,
        callers_per_probe=args.callers_per_probe,
        hostile_probes=max(0, args.hostile_probes),
        progress=False if args.no_progress else None,
        top_k_values=args.top_k_values,
        max_top_k=args.max_top_k,
        concurrency_levels=args.concurrency_levels,
        budget=args.budget,
        rounds=args.rounds,
        allow_unattributed=args.allow_unattributed,
        mutations=mutation_options(args),
        max_records=args.max_records,
        min_attributed=args.min_attributed,
        shared_tenants=shared_tenants(args),
    )
    context = {"source": {"label": source.label, **source.context}, "corpus": corpus.info()}
    if canaries:
        context["canaries"] = {"path": args.canaries, "count": len(canaries)}
    if args.golden:
        from ragaudit.cli.audit_golden import golden_rankings

        with step(f"audit-tenants: asking the golden questions of {args.golden}"):
            context["golden_rankings"] = golden_rankings(
                source.retriever, args.golden, args.concurrency, args.timeout
            )
    semantic = semantic_attributor(args, corpus.documents)
    with step(f"audit-tenants: probing {source.label} with {len(probes)} probes"):
        audit = asyncio.run(
            audit_tenants(source.retriever, ownership, probes, options, context=context, semantic=semantic)
        )
    print(render_terminal(audit.to_dict(args.max_error_rate)))
    if args.out:
        audit.write_json(args.out, args.max_error_rate)
        print(f"report written to {shown(args.out)}")
    return 0 if audit.verdict(args.max_error_rate) == "clean" else 1
