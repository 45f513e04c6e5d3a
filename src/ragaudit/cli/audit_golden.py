"""``ragaudit audit-tenants --golden DATASET``: the golden questions asked through the audited system,
each as its own tenant, and the chunk ids it returned, recorded in the audit (``golden_rankings``) so
that ``ragaudit gate`` can tie the audit to an eval report by the rankings themselves, not only by the
system's name (:mod:`ragaudit.gates.ranking_tie`)."""

from __future__ import annotations

from typing import Any

GOLDEN_TOP_K = 10
"""How many chunks of each golden question the audit records (the gate compares the top 10)."""


def golden_rankings(retriever: Any, dataset_path: str, concurrency: int, timeout_s: float) -> dict[str, Any]:
    """``{"dataset_sha256", "dataset_path", "top_k", "cases": {case id: [chunk id, ...]}}`` of the golden
    set at ``dataset_path`` asked through ``retriever`` (cases that failed are left out)."""
    import asyncio

    from ragaudit.data.loading import load_dataset
    from ragaudit.runner.execute import run_cases

    dataset = load_dataset(dataset_path)
    run = asyncio.run(
        run_cases(
            retriever,
            dataset.cases,
            GOLDEN_TOP_K,
            concurrency=concurrency,
            timeout_s=timeout_s,
            name="golden rankings",
            progress=False,
        )
    )
    return {
        "dataset_sha256": dataset.sha256,
        "dataset_path": dataset_path,
        "top_k": GOLDEN_TOP_K,
        "cases": {cid: case.ranking for cid, case in run.cases.items() if case.error is None},
    }
