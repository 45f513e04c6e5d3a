"""Whether the audited system ranks the report's golden questions as the report says it did.

The tie between an eval report and an ``--audit`` rests on the system's name (a pipeline's config
sha256, an endpoint, a retriever) and the corpus sha256 (:mod:`ragaudit.gates.audit_tie`); a name is
a string. ``ragaudit audit-tenants --golden DATASET`` also asks the golden questions through the
audited system, each as its own tenant, and records the chunk ids it returned
(``golden_rankings``: ``dataset_sha256``, ``top_k``, ``cases``: ``{case id: [chunk id, ...]}``).
When the audit carries them and the report was made on the same golden set, the gate compares each
shared case's top-k with the report's ``per_case[].retrieved``: the same system over the same corpus
returns the same chunks. A mean top-k overlap (Jaccard of the two sets) under
:data:`MIN_RANKING_OVERLAP` means the audit ran another system, whatever both are named.

Without them the tie is by name and corpus alone, and the gate's notes say so
(:func:`tie_basis_note`). A live index that changed between the evaluation and the audit also moves
the rankings: re-evaluate and audit the same state.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragaudit.artifacts.provenance import recorded_top_k

MIN_RANKING_OVERLAP = 0.9
"""The smallest mean top-k overlap of the report's and the audit's rankings of the same golden cases
for the two to be taken as one system (1.0 for a deterministic retriever over an unchanged index)."""

GOLDEN_FIX = (
    "audit with 'ragaudit audit-tenants ... --golden DATASET' (the eval's golden set) to tie the audit to "
    "the report by the rankings themselves"
)


def _dataset_sha(report: Mapping[str, Any]) -> str | None:
    dataset = report.get("dataset")
    sha = dataset.get("sha256") if isinstance(dataset, Mapping) else None
    return sha if isinstance(sha, str) else None


def _report_rankings(report: Mapping[str, Any]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    cases = report.get("per_case")
    for case in cases if isinstance(cases, list) else []:
        if not isinstance(case, Mapping) or case.get("error") is not None or case.get("status") == "missing":
            continue
        retrieved = case.get("retrieved")
        ids = [
            str(item.get("chunk_id") if isinstance(item, Mapping) else item)
            for item in (retrieved if isinstance(retrieved, list) else [])
        ]
        out[str(case.get("id"))] = ids
    return out


def _audit_rankings(audit: Mapping[str, Any]) -> Mapping[str, Any] | None:
    held = audit.get("golden_rankings")
    return held if isinstance(held, Mapping) and isinstance(held.get("cases"), Mapping) else None


def _overlap(mine: list[str], theirs: list[str], k: int) -> float:
    a, b = set(mine[:k]), set(theirs[:k])
    return 1.0 if not a and not b else len(a & b) / len(a | b)


def rankings_differ(report: Mapping[str, Any], audit: Mapping[str, Any]) -> str | None:
    """Why the audit's rankings of the report's golden questions show another system (``None``: they
    agree, or there is nothing to compare)."""
    held = _audit_rankings(audit)
    if held is None or held.get("dataset_sha256") != _dataset_sha(report):
        return None
    top_k = held.get("top_k")
    k = top_k if isinstance(top_k, int) and not isinstance(top_k, bool) and top_k > 0 else 10
    asked = recorded_top_k(report)  # a report asked for fewer: compare the depth both have
    k = min(k, asked) if asked is not None and asked > 0 else k
    mine = _report_rankings(report)
    theirs = {str(c): [str(i) for i in ids] for c, ids in held["cases"].items() if isinstance(ids, list)}
    shared = sorted(set(mine) & set(theirs))
    if not shared:
        return None
    overlaps = [_overlap(mine[c], theirs[c], k) for c in shared]
    mean = sum(overlaps) / len(overlaps)
    if mean >= MIN_RANKING_OVERLAP:
        return None
    worst = sorted(zip(overlaps, shared, strict=True))[:3]
    return (
        f"it audited another system: asked the report's {len(shared)} golden question(s), it returned other "
        f"chunks than the report records (mean top-{k} overlap {mean:.2f} < {MIN_RANKING_OVERLAP}; e.g. "
        + ", ".join(f"{c} {o:.2f}" for o, c in worst)
        + "); evaluate and audit the same system over the same index"
    )


def tie_basis_note(report: Mapping[str, Any], audit: Mapping[str, Any], path: str) -> str:
    """What the tie of ``path`` to the report rests on, for the gate's notes."""
    held = _audit_rankings(audit)
    if held is None:
        return (
            f"audit {path} is tied to the report by the system's name and the corpus sha256 only (it records no "
            f"rankings of the report's golden questions); {GOLDEN_FIX}"
        )
    if held.get("dataset_sha256") != _dataset_sha(report):
        return (
            f"audit {path}'s golden rankings are of another golden set than the report's: the tie rests on the "
            f"system's name and the corpus sha256 only; {GOLDEN_FIX}"
        )
    shared = set(_report_rankings(report)) & {str(c) for c in held["cases"]}
    if not shared:
        return f"audit {path}'s golden rankings share no case with the report: not compared; {GOLDEN_FIX}"
    return (
        f"audit {path} is tied to the report by its rankings too: {len(shared)} golden question(s) asked "
        f"again returned the report's chunks (mean top-k overlap >= {MIN_RANKING_OVERLAP})"
    )
