"""The two runs the fixtures give, once per session and configuration: the evaluation of every golden
case (``eval_result``; its JSON report written to ``ragaudit_report`` and recorded in
``ragaudit_history`` when set) and the full tenant audit (``tenant_audit``; its report written to
``ragaudit_audit_report``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragaudit.pytest_plugin.session import Session
from ragaudit.pytest_plugin.settings import Settings, usage
from ragaudit.pytest_plugin.sources import (
    load_golden,
    opened_source,
    ownership_index,
    relevance_threshold,
    session_retriever,
)
from ragaudit.pytest_plugin.tenant_aliases import AliasedOwnership

if TYPE_CHECKING:
    from ragaudit.evaluation.result import EvalResult
    from ragaudit.security.tenant_audit import TenantAudit


def evaluate_once(state: Session, settings: Settings) -> EvalResult:
    from ragaudit.evaluation.live import RunOptions, evaluate_live, retrieval_depth
    from ragaudit.metrics.names import DEFAULT_METRICS, parse_metrics
    from ragaudit.metrics.policy import Policy

    if settings in state.results:
        return state.results[settings]
    golden = load_golden(state, settings)
    retriever = session_retriever(state, settings)
    source = opened_source(state, settings)
    dataset = source.scored_on(golden, relevance_threshold())
    context, name = source.provenance(), source.label
    specs = parse_metrics(settings.metrics) if settings.metrics else DEFAULT_METRICS
    options = RunOptions(retrieval_depth(specs, settings.top_k), settings.tenant, progress=False)
    ownership = None
    if settings.corpus:  # every returned chunk's owner from the corpus (a label is only a claim)
        ownership = AliasedOwnership(ownership_index(state, settings), dict(settings.tenant_aliases))
    result = state.event_loop().run_until_complete(
        evaluate_live(
            dataset, retriever, specs, Policy(), options, name=name, context=context, ownership=ownership
        )
    )
    if settings.report:
        result.write_json(settings.report)
    if settings.history:
        from ragaudit.artifacts.history import record

        record(result.to_dict(), None if settings.history == "auto" else settings.history)
    state.results[settings] = result
    return result


def audit_once(state: Session, settings: Settings) -> TenantAudit:
    """The full tenant audit (``ragaudit audit-tenants`` with its defaults) of the configured source:
    probes made from every tenant's documents, asked as every other tenant, at several ``top_k`` values
    and concurrency levels, plus hostile tenant ids; each returned chunk's owner is read in the corpus."""
    from ragaudit.security.probes import generate_probes
    from ragaudit.security.tenant_audit import AuditOptions, audit_tenants

    if settings in state.audits:
        return state.audits[settings]
    if not settings.corpus:
        usage(
            "the tenant audit needs the corpus the retriever serves (its owners decide what is a leak); "
            "set ragaudit_corpus"
        )
    source = opened_source(state, settings)
    corpus = state.corpus(settings.corpus)
    ownership = ownership_index(state, settings)  # the session's index, shared with eval_result
    probes = generate_probes(corpus.documents)
    context = {
        "source": {"label": source.label, **source.context},
        "corpus": corpus.info(),
    }
    audit = state.event_loop().run_until_complete(
        audit_tenants(source.retriever, ownership, probes, AuditOptions(progress=False), context=context)
    )
    if settings.audit_report:
        audit.write_json(settings.audit_report)
    state.audits[settings] = audit
    return audit
