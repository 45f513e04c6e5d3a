"""Reading the optional and kind-specific parts of a report, for both renderers.

Plain data in, plain data out (no escaping here): the gate verdict, the provenance rows, the
constraint verdict of a rewrite-eval, safe lookups into optional parts (:func:`part`) and the number
formatter of the pages' own sections (the summary cards, the sweeps).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ragaudit.report.draw.cells import MISSING
from ragaudit.verdict import CheckVerdict, decide


@dataclass(frozen=True)
class GateResult:
    name: str
    passed: bool
    messages: tuple[str, ...]
    status: str = ""
    """``pass``, ``fail``, ``skip`` (nothing to check) or ``not_verified``; from ``passed`` when absent."""

    @property
    def state(self) -> str:
        """The stated status, never better than ``passed``: a gate that did not pass is no pass or skip
        (a waived not-verified gate passes, and stays not verified)."""
        if self.status in ("pass", "skip") and not self.passed:
            return "fail"
        return self.status or ("pass" if self.passed else "fail")


GATE_MARKS = {"pass": "✅", "fail": "❌", "skip": "➖", "not_verified": "⚠️"}
"""The mark of each gate state (only a checked pass gets a check mark)."""


def overall_gate_state(stated: object, passed: bool, states: Iterable[str]) -> str:
    """The overall state of a gate verdict: the worst of what it states (its ``verdict``, its
    ``passed``) and what its gates' states show, so no claim earns more than its gates did (a failed
    gate under ``"verdict": "pass"`` is a failure; ``passed: false`` is never a pass)."""
    order = ("pass", "not_verified", "fail")
    seen = set(states)
    derived = "fail" if "fail" in seen else "not_verified" if "not_verified" in seen else "pass"
    if derived == "pass" and "pass" not in seen:  # no gate at all, or only skipped ones: nothing checked
        derived = "not_verified"
    worst = max((derived, stated if stated in order else "pass"), key=order.index)
    return "fail" if not passed and worst == "pass" else str(worst)


def gate_state(gate: Mapping[str, Any], passed: bool, gates: list[GateResult]) -> str:
    """:func:`overall_gate_state` of a gate section and its parsed gates."""
    return overall_gate_state(gate.get("verdict"), passed, (g.state for g in gates))


def gate_verdict(gate: Mapping[str, Any] | None) -> tuple[bool, list[GateResult]] | None:
    """``(passed, gates)`` of a gate verdict (a gate report, or the ``gate`` section a report carries:
    :meth:`ragaudit.report.view.ReportView.gate`), else None."""
    if gate is None or not isinstance(gate.get("passed"), bool):
        return None
    results = []
    for item in gate.get("gates", []) or []:
        if not isinstance(item, Mapping):
            continue
        messages = item.get("messages") or ([item["message"]] if item.get("message") else [])
        results.append(
            GateResult(
                str(item.get("name", "")),
                bool(item.get("passed")),
                tuple(map(str, messages)),
                str(item.get("status") or ""),
            )
        )
    return bool(gate["passed"]), results


def constraint_verdict(cons: Mapping[str, Any]) -> CheckVerdict:
    """Constraint preservation of a rewrite-eval as a three-state verdict: fail when a rewrite lost an
    entity or constraint, pass only when every query's rewrite was checked, else not verified."""

    def count(key: str) -> int:
        value = cons.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    return decide(
        "constraint preservation",
        total=count("cases"),
        verified=count("checked"),
        failures=count("flagged"),
        found="rewrite(s) that lost an entity or constraint",
        unverified_because="no rewrite was recorded for them (the rewriter failed or was not run)",
    )


def part(data: Any, *keys: str) -> Mapping[str, Any]:
    """The mapping at ``data[k1][k2]...``, or an empty one where any step is missing or not a mapping."""
    for key in keys:
        data = data.get(key) if isinstance(data, Mapping) else None
    return data if isinstance(data, Mapping) else {}


def num(value: Any, digits: int = 4) -> str:
    """A number to ``digits`` decimals; ``–`` for anything else (None, NaN, a bool, text)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        return "–"
    return f"{value:.{digits}f}"


def _given(value: Any) -> str:
    """A value as text, or :data:`ragaudit.report.draw.cells.MISSING` (never ``None``)."""
    return MISSING if value is None or value == "" else str(value)


def _short(sha: Any, n: int = 12) -> str:
    return str(sha)[:n] if sha else MISSING


def _models(models: Mapping[str, Any]) -> str:
    return "; ".join(
        f"{role}: {', '.join(map(str, m)) if isinstance(m, list) else m}" for role, m in models.items() if m
    )


def build_text(pipeline: Mapping[str, Any]) -> str:
    """``2.90 s (embeddings: 90 cached, 0 computed)``: a pipeline's build time beside the embedding
    cache's state (a warm cache builds in a fraction of a cold one's time); empty when unknown."""
    seconds = pipeline.get("index_build_seconds")
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool):
        return ""
    counts = part(pipeline, "embeddings")
    cached, computed = counts.get("cached"), counts.get("computed")
    if isinstance(cached, int) and isinstance(computed, int):
        return f"{seconds:.2f} s (embeddings: {cached} cached, {computed} computed)"
    return f"{seconds:.2f} s"


def provenance_rows(
    report: Mapping[str, Any], chunking_text: str | None = None, pipeline: Mapping[str, Any] | None = None
) -> list[tuple[str, str]]:
    """``(label, text)`` rows describing where a report comes from (plain text; escape before output);
    ``chunking_text`` is what the report's kind says about chunking (a sweep's grid), ``pipeline`` the
    pipeline it is about when the report has no ``pipeline`` section (an ablation's base)."""
    rows: list[tuple[str, str]] = []
    dataset, corpus = part(report, "dataset"), part(report, "corpus")
    if dataset:
        sha = _short(dataset.get("sha256"))
        rows.append(
            ("dataset", f"{_given(dataset.get('path'))} ({_given(dataset.get('format'))}, sha256 {sha})")
        )
    if corpus:
        sha = _short(corpus.get("sha256"))
        rows.append(
            (
                "corpus",
                f"{_given(corpus.get('path'))} ({_given(corpus.get('documents'))} documents, sha256 {sha})",
            )
        )
    pipeline = part(report, "pipeline") or pipeline
    if pipeline:
        chunking = part(pipeline, "config", "chunking")
        details = [
            f"config sha256 {_short(pipeline.get('config_sha256'))}",
            chunking_text or f"chunking {chunking.get('strategy', '?')}",
        ]
        if isinstance(pipeline.get("chunks"), int):
            details.append(f"{pipeline['chunks']} chunks")
        rows.append(("pipeline", f"{_given(pipeline.get('name'))} ({'; '.join(details)})"))
        build = build_text(pipeline)
        if build:
            rows.append(("index build", build))
        if _models(part(pipeline, "models")):
            rows.append(("models", _models(part(pipeline, "models"))))
    top_k = part(report, "retrieval").get("top_k")
    if top_k:
        rows.append(("k", str(top_k)))
    latency = part(report, "retrieval").get("latency")
    if isinstance(latency, str):
        rows.append(("latency", latency))
    policy = part(report, "policy")
    if policy.get("gain") is not None:  # the metric policy (a gate report's ``policy`` is its gates file)
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
    rows.append(
        (
            "written",
            f"{_given(report.get('created_at'))} by ragaudit {_given(report.get('ragaudit_version'))}",
        )
    )
    return rows


ANALYSES = ("remove-one", "add-one")
"""An ablation's two analyses of each toggle (see :mod:`ragaudit.experiments.ablation`)."""
