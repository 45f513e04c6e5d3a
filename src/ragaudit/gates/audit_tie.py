"""Whether a tenant audit verifies the isolation of the system an eval report evaluated: the audit
itself verifies isolation (clean, its isolation check passed, enough of its chunks attributed), it
audited the same system and corpus as the report, and neither treated tenants as shared that the
policy does not list."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragaudit.gates.audit_claims import audit_contradiction
from ragaudit.gates.ranking_tie import rankings_differ
from ragaudit.gates.system_claims import system_claim_problem

SHARED_FIX = (
    "list them in [security] shared_tenants if every tenant may be served their documents, else run "
    "it without --shared-tenant"
)


def audit_unverified(data: Mapping[str, Any], min_attributed: float = 0.95) -> str | None:
    """Why a tenant-audit report does not verify isolation (None: it does).

    It does when it passed with the verdict ``clean``, its tenant-isolation check is ``pass`` and it
    attributed at least ``min_attributed`` of the chunks it got (an audit run with
    ``--allow-unattributed`` may have accepted fewer). A report without the check (written before it
    existed) verifies nothing when it attributed none of the chunks it got, or left any unattributed."""
    isolation = data.get("isolation")
    state = isolation.get("state") if isinstance(isolation, Mapping) else None
    reason = isolation.get("reason") if isinstance(isolation, Mapping) else None
    if data.get("kind") != "tenant-audit":  # said first: another kind's verdict is no audit's verdict
        return audit_contradiction(data)
    if data.get("passed") is not True or data.get("verdict", "clean") != "clean":
        return f"its verdict is {data.get('verdict', 'not clean')!r}" + (f": {reason}" if reason else "")
    if contradiction := audit_contradiction(data):
        return contradiction
    unattributed = data.get("unattributed")
    raw_count = unattributed.get("count") if isinstance(unattributed, Mapping) else None
    raw_checked = data.get("checked_chunks")
    count = raw_count if isinstance(raw_count, int) else 0
    checked = raw_checked if isinstance(raw_checked, int) else 0
    if state is not None:
        if state != "pass":
            return f"its isolation check is {state!r}: {reason}"
        share = (checked - count) / checked if count and checked else 1.0
        if share < min_attributed:
            return (
                f"it attributed only {checked - count:,} of {checked:,} returned chunks ({share:.1%}, below "
                f"min_attributed {min_attributed:g}); the rest were accepted by --allow-unattributed"
            )
        return None
    if not checked:
        return "it checked no returned chunk"
    if count:
        return f"{count} of {checked} returned chunks were not attributed to any tenant (an older report)"
    return None


def shared_beyond(data: Mapping[str, Any], allowed: frozenset[str]) -> tuple[str, ...]:
    """The tenants a report or audit treated as shared (``--shared-tenant``) that the policy does not."""
    holder = data.get("shared_tenants")  # an audit's; an eval report's is under retrieval
    if holder is None and isinstance(data.get("retrieval"), Mapping):
        holder = data["retrieval"].get("shared_tenants")
    names = holder.get("tenants") if isinstance(holder, Mapping) else holder
    if not isinstance(names, list):
        return ()
    return tuple(sorted(str(n) for n in names if str(n) not in allowed))


def _system_of(data: Mapping[str, Any]) -> tuple[str, str] | None:
    """Which system a report or audit ran: ``("pipeline", config sha256)``, ``("endpoint", host/path)``
    or ``("retriever", module:factory)``; ``None`` when it does not say (a run file)."""
    source = data.get("source")
    source = source if isinstance(source, Mapping) else {}
    for holder in (data.get("pipeline"), source.get("pipeline")):
        if isinstance(holder, Mapping) and isinstance(holder.get("config_sha256"), str):
            return "pipeline", str(holder["config_sha256"])
    for kind in ("endpoint", "retriever"):
        if isinstance(source.get(kind), str):
            return kind, str(source[kind])
    return None


def _corpus_of(data: Mapping[str, Any]) -> str | None:
    corpus = data.get("corpus")
    sha = corpus.get("sha256") if isinstance(corpus, Mapping) else None
    return str(sha) if isinstance(sha, str) else None


def _short(kind: str, name: str) -> str:
    """A system as messages name it: a pipeline's config sha256 cut to 16 characters; an endpoint or a
    retriever whole (cut, ``http://localhost:8001/search`` and ``:8002`` would read the same)."""
    return name[:16] if kind == "pipeline" else name


def audited_elsewhere(report: Mapping[str, Any], audit: Mapping[str, Any]) -> str | None:
    """Why a clean audit says nothing about the report's system (``None``: both name the same system,
    and the same corpus where both name one): it audited another system or another corpus, or one of
    them names no system (a run-file evaluation, a hand-written audit), so nothing ties the two."""
    mine, theirs = _system_of(report), _system_of(audit)
    if mine is None or theirs is None:
        which = "the eval report" if mine is None else "the audit"
        return (
            f"{which} names no system (a run-file evaluation or a hand-written report), so nothing ties this "
            "audit to the system the report evaluated; evaluate and audit the same --pipeline, --endpoint "
            "or --retriever (or waive it in the policy: allow_unverified = true)"
        )
    if mine is not None and theirs is not None and mine != theirs:
        return (
            f"it audited another system ({theirs[0]} {_short(*theirs)}, the report evaluated {mine[0]} "
            f"{_short(*mine)})"
        )
    mine_corpus, their_corpus = _corpus_of(report), _corpus_of(audit)
    if mine_corpus is not None and their_corpus is None:  # every audit reads a corpus and names it
        return (
            "the audit names no corpus (sha256), so nothing ties it to the corpus the report evaluated "
            f"({mine_corpus[:12]})"
        )
    if mine_corpus is not None and their_corpus is not None and mine_corpus != their_corpus:
        return f"it audited another corpus (sha256 {their_corpus[:12]}, the report's {mine_corpus[:12]})"
    return system_claim_problem(report, audit) or rankings_differ(report, audit)
