"""Small eval reports for the report tests: two systems on one golden set, made by ragaudit.evaluate.

The golden set holds hostile text (a ``<script>`` query, a chunk id that is an ``<img onerror>`` tag, an
error message closing a ``</script>``) so every renderer is tested against injection; the runs hold a
missing case, an error, a duplicate, a cross-tenant leak and latencies, so every report section shows.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

import ragaudit
from conftest import write_lines

SCRIPT_QUERY = "<script>document.title='pwned'</script> what is | the *refund* policy?"
EVIL_CHUNK = '<img src=x onerror="document.title=1">'
EVIL_ERROR = "</script><script>document.title='pwned'</script> upstream 503"
TENANTS = ("acme", "globex")
CASES = 40


def _golden(tmp_path: Path) -> Path:
    lines = []
    for i in range(CASES):
        tenant = TENANTS[i % 2]
        case: dict[str, Any] = {
            "id": f"q{i:02d}",
            "query": SCRIPT_QUERY if i == 3 else f"question number {i} about {tenant}",
            "tenant_id": tenant,
            "relevance": {f"{tenant}-d{i}": 3, f"{tenant}-d{i + 1}": 1},
        }
        if i == 3:
            case["relevance"] = {EVIL_CHUNK: 3}
        if i >= CASES - 2:  # unanswerable probes
            case["relevant_chunk_ids"] = []
            case["relevance"] = {}
        lines.append(json.dumps(case))
    return write_lines(tmp_path / "golden.jsonl", lines)


def _run_lines(strong: bool, rng: np.random.Generator) -> list[str]:
    lines = []
    for i in range(CASES):
        tenant = TENANTS[i % 2]
        if i == 5:
            continue  # missing from both runs
        if i == 7 and not strong:
            lines.append(json.dumps({"id": f"q{i:02d}", "error": EVIL_ERROR, "latency_ms": 30000.0}))
            continue
        relevant = EVIL_CHUNK if i == 3 else f"{tenant}-d{i}"
        pool = [f"{tenant}-d{j}" for j in rng.permutation(CASES)[:9] if j != i][:8]
        ranking = [relevant, *pool] if strong and i % 5 else [*pool[:4], relevant, *pool[4:]]
        items: list[Any] = [
            {"chunk_id": c, "score": 1.0 / (r + 1), "tenant_id": tenant} for r, c in enumerate(ranking)
        ]
        line: dict[str, Any] = {
            "id": f"q{i:02d}",
            "retrieved": items,
            "latency_ms": float(20 + 15 * rng.random()),
        }
        if i == 9:
            items.insert(1, {"chunk_id": "initech-secret-contract", "score": 0.9, "tenant_id": "initech"})
            line["leaks"] = [
                {
                    "chunk_id": "initech-secret-contract",
                    "rank": 2,
                    "claimed_tenant": "initech",
                    "caller_tenant": tenant,
                }
            ]
        if i == 11:
            items.append(dict(items[0]))  # a duplicate id
        lines.append(json.dumps(line))
    return lines


def build_reports(tmp_path: Path) -> dict[str, Path]:
    """``{"golden": path, "base": eval report, "better": eval report}`` (two systems, same dataset)."""
    rng = np.random.default_rng(7)
    golden = _golden(tmp_path)
    out = {"golden": golden}
    for name, strong in (("base", False), ("better", True)):
        run = write_lines(tmp_path / f"{name}.run.jsonl", _run_lines(strong, rng))
        result = ragaudit.evaluate(golden, ragaudit.load_run(run, name=name), "nDCG@10,R@5,MRR@10,P@5")
        out[name] = tmp_path / f"{name}.json"
        result.write_json(out[name])
    return out


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def with_extras(report: dict[str, Any]) -> dict[str, Any]:
    """The report plus a gate verdict, a k-sweep and a chunking table (the documented shapes)."""
    return {
        **report,
        "gate": {
            "passed": False,
            "gates": [
                {"name": "metrics-selftest", "passed": True},
                {"name": "security", "passed": False, "message": "1 cross-tenant leak > max_leaks 0"},
            ],
        },
        "k_sweep": {
            "k": [1, 3, 5, 10],
            "series": [
                {"name": "R@k", "values": [0.4, 0.7, 0.8, 0.9]},
                {"name": "nDCG@k", "values": [0.4, 0.6, 0.65, math.nan]},
            ],
        },
        "chunking": {
            "rows": [
                {
                    "label": "whole",
                    "strategy": "whole",
                    "chunks": 90,
                    "metrics": {"nDCG@10": 0.81, "R@5": 0.92},
                },
                {
                    "label": "fixed-128/16",
                    "strategy": "fixed",
                    "size": 128,
                    "overlap": 16,
                    "chunks": 412,
                    "metrics": {"nDCG@10": 0.77, "R@5": 0.9},
                },
            ]
        },
    }
