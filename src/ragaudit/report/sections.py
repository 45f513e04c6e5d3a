"""Reading the optional and kind-specific parts of a report, for both renderers.

Plain data in, plain data out (no escaping here): the gate verdict, the provenance rows, and the
k-sweep and chunking tables whether a report carries them as sections or is itself such an experiment.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class GateResult:
    name: str
    passed: bool
    messages: tuple[str, ...]


def gate_verdict(report: Mapping[str, Any]) -> tuple[bool, list[GateResult]] | None:
    """``(passed, gates)`` of a gate report or of a report carrying a ``gate`` section, else None."""
    gate = report if report.get("kind") == "gate" else report.get("gate")
    if not isinstance(gate, Mapping) or not isinstance(gate.get("passed"), bool):
        return None
    results = []
    for item in gate.get("gates", []) or []:
        if not isinstance(item, Mapping):
            continue
        messages = item.get("messages") or ([item["message"]] if item.get("message") else [])
        results.append(
            GateResult(str(item.get("name", "")), bool(item.get("passed")), tuple(map(str, messages)))
        )
    return bool(gate["passed"]), results


def part(data: Any, *keys: str) -> Mapping[str, Any]:
    """The mapping at ``data[k1][k2]...``, or an empty one where any step is missing or not a mapping."""
    for key in keys:
        data = data.get(key) if isinstance(data, Mapping) else None
    return data if isinstance(data, Mapping) else {}


def _short(sha: Any, n: int = 12) -> str:
    return str(sha)[:n] if sha else "–"


def _models(models: Mapping[str, Any]) -> str:
    return "; ".join(
        f"{role}: {', '.join(map(str, m)) if isinstance(m, list) else m}" for role, m in models.items()
    )


def provenance_rows(report: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(label, text)`` rows describing where a report comes from (plain text; escape before output)."""
    rows: list[tuple[str, str]] = []
    dataset, corpus, pipeline = part(report, "dataset"), part(report, "corpus"), part(report, "pipeline")
    if dataset:
        sha = _short(dataset.get("sha256"))
        rows.append(("dataset", f"{dataset.get('path')} ({dataset.get('format')}, sha256 {sha})"))
    if corpus:
        sha = _short(corpus.get("sha256"))
        rows.append(("corpus", f"{corpus.get('path')} ({corpus.get('documents')} documents, sha256 {sha})"))
    if pipeline:
        chunking = part(pipeline, "config", "chunking")
        rows.append(
            (
                "pipeline",
                f"{pipeline.get('name')} (config sha256 {_short(pipeline.get('config_sha256'))}; "
                f"chunking {chunking.get('strategy', '?')}; {pipeline.get('chunks', '?')} chunks)",
            )
        )
        if part(pipeline, "models"):
            rows.append(("models", _models(part(pipeline, "models"))))
    top_k = part(report, "retrieval").get("top_k")
    if top_k:
        rows.append(("k", str(top_k)))
    policy = part(report, "policy")
    if policy:
        rows.append(
            (
                "policy",
                f"nDCG gain {policy.get('gain')}, relevant at grade ≥ {policy.get('relevance_threshold')}, "
                f"unanswerable {policy.get('unanswerable', 'excluded')}, missing scored {policy.get('missing', 'zero')}",
            )
        )
    git = part(report, "provenance", "git")
    if git:
        dirty = " (uncommitted changes)" if git.get("dirty") else ""
        rows.append(("git commit", f"{_short(git.get('commit'))}{dirty}"))
    env = part(report, "provenance", "environment")
    if env:
        rows.append(("environment", f"Python {env.get('python')} on {env.get('platform')}"))
        packages = part(env, "packages")
        if packages:
            rows.append(("packages", ", ".join(f"{k} {v}" for k, v in packages.items())))
    rows.append(("written", f"{report.get('created_at')} by ragaudit {report.get('ragaudit_version')}"))
    return rows


def k_sweep_data(report: Mapping[str, Any]) -> dict[str, Any] | None:
    """The report's ``k_sweep`` section (``{k, series}``), or one derived from a k-sweep report's rows
    (``[{k, <family>: value, ...}]`` with ``families``): one series ``<family>@k`` per family."""
    sweep = part(report, "k_sweep")
    if sweep.get("k"):
        return dict(sweep)
    rows = [r for r in report.get("rows", []) if isinstance(r, Mapping) and isinstance(r.get("k"), int)]
    families = [str(f) for f in report.get("families", [])]
    if not (str(report.get("kind", "")).replace("_", "-") == "k-sweep" and rows and families):
        return None
    return {
        "k": [r["k"] for r in rows],
        "series": [{"name": f"{f}@k", "values": [r.get(f) for r in rows]} for f in families],
    }


def chunking_data(report: Mapping[str, Any]) -> dict[str, Any] | None:
    """The report's ``chunking`` section (``{rows}``), or one derived from a chunking-sweep report's
    ``points`` (``[{name, chunking: {strategy, size, overlap}, metrics, index: {chunks}}]``)."""
    chunking = part(report, "chunking")
    if chunking.get("rows"):
        return dict(chunking)
    points = [
        p
        for p in report.get("points", [])
        if isinstance(p, Mapping) and isinstance(p.get("metrics"), Mapping)
    ]
    if report.get("kind") != "chunking-sweep" or not points:
        return None
    rows = [
        {
            "label": str(p.get("name", "")),
            **{k: part(p, "chunking").get(k) for k in ("strategy", "size", "overlap")},
            "chunks": part(p, "index").get("chunks"),
            "metrics": dict(p["metrics"]),
        }
        for p in points
    ]
    return {"rows": rows}
