"""The ``ablation`` report kind (ragaudit ablate): the remove-one / add-one gain of each toggle."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragaudit.artifacts.tables import fmt_number, render_table
from ragaudit.report.kinds.base import ReportKind
from ragaudit.report.kinds.fields import Fields, Latency, Paired, significance_of
from ragaudit.report.sections import ANALYSES, part

if TYPE_CHECKING:
    from ragaudit.report.html_parts import Section
    from ragaudit.report.view import ReportView


@dataclass(frozen=True)
class AblationVariant:
    name: str
    on: list[str]
    same_as: str | None
    metrics: dict[str, Any]
    latency: Latency | None
    context_tokens: int | float | None


@dataclass(frozen=True)
class AblationGain:
    toggle: str
    analysis: str
    """``remove-one`` or ``add-one``."""
    comparison: Paired


@dataclass(frozen=True)
class GainRow:
    """One toggle and metric: the remove-one and the add-one gain (None where the report has none)."""

    toggle: str
    metric: str
    remove_one: Paired | None
    add_one: Paired | None

    def of(self, analysis: str) -> Paired | None:
        return self.remove_one if analysis == "remove-one" else self.add_one


@dataclass(frozen=True)
class AblationReport:
    """An ablation report, typed: every variant's ``name`` and ``metrics`` and every gain's ``toggle``,
    ``analysis`` and ``metric`` are required."""

    toggles: list[str]
    metrics: list[str]
    variants: list[AblationVariant]
    gains: list[AblationGain]
    alpha: Any
    """As the command was given it (the terminal line)."""
    significance: tuple[Any, str]
    """``(alpha, correction)`` of the paired tests."""
    context_k: Any
    invariants: Mapping[str, Any]
    """``cases``, ``answerable``, ``tenants``, ``top_k`` and ``same_for_every_variant``, as written."""

    def gain_rows(self) -> list[GainRow]:
        """One row per toggle and metric that has a gain, toggles and metrics in the report's order."""
        index = {(g.toggle, g.comparison.metric, g.analysis): g.comparison for g in self.gains}
        toggles = dict.fromkeys([*self.toggles, *(g.toggle for g in self.gains)])
        metrics = dict.fromkeys([*self.metrics, *(g.comparison.metric for g in self.gains)])
        rows = []
        for toggle in toggles:
            for metric in metrics:
                remove, add = (index.get((toggle, metric, a)) for a in ANALYSES)
                if remove is not None or add is not None:
                    rows.append(GainRow(toggle, metric, remove, add))
        return rows


def _variant(v: Fields) -> AblationVariant:
    same_as, tokens = v.opt("same_as"), v.opt("context_tokens")
    return AblationVariant(
        str(v.need("name")),
        v.texts("on"),
        None if same_as is None else str(same_as),
        dict(v.obj("metrics").data),
        Latency.read(v.opt("latency_ms")),
        tokens if isinstance(tokens, (int, float)) and not isinstance(tokens, bool) else None,
    )


class AblationKind(ReportKind):
    name = "ablation"
    required = ("variants", "gains")

    def typed(self, report: Fields) -> AblationReport:
        invariants = report.obj("invariants", required=False)
        return AblationReport(
            report.texts("toggles"),
            report.texts("metrics"),
            [_variant(v) for v in report.each("variants")],
            [
                AblationGain(
                    str(g.need("toggle")),
                    str(g.need("analysis")),
                    Paired.read(g, system=str(g.opt("system") or "")),
                )
                for g in report.each("gains")
            ],
            report.opt("alpha"),
            significance_of(report),
            report.opt("context_k"),
            {
                k: invariants.opt(k)
                for k in ("cases", "answerable", "tenants", "top_k", "same_for_every_variant")
            },
        )

    def terminal(self, report: AblationReport, limit: int = 10) -> list[str]:
        """The variants table, the gains table (``*``: significant), what a gain is and the invariants."""
        inv = report.invariants
        return [
            _variants_table(report),
            "",
            _gains_table(report),
            f"gain = metric with the component - metric without; remove-one: full vs full-minus-t, add-one: "
            f"bare-plus-t vs bare; * = significant at alpha {report.alpha} (paired randomization test, "
            f"Holm-corrected across all {len(report.gains)} gains)",
            f"invariants checked: every variant scored the same {inv['cases']} cases ({inv['answerable']} "
            f"answerable), each under the same tenant ({', '.join(map(str, inv['tenants'] or []))}), top_k "
            f"{inv['top_k']}, same dataset and policy",
        ]

    def pipeline(self, report: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """The base configuration the variants switch components of."""
        base = part(report, "base")
        if not base:
            return None
        return {"name": base.get("name"), "config": base, "config_sha256": report.get("base_sha256")}

    def title(self, report: Mapping[str, Any]) -> str:
        return f"components of {part(report, 'base').get('name', 'the pipeline')}"

    def markdown(self, view: ReportView) -> list[str]:
        from ragaudit.report.markdown import _ablation

        return _ablation(self.read(view))

    def html(self, view: ReportView) -> list[Section]:
        from ragaudit.report.html_experiments import ablation_section

        return [ablation_section(self.read(view))]


def _variants_table(report: AblationReport) -> str:
    headers = ["variant", "on", *report.metrics, "p50 ms", "p95 ms", f"tokens@{report.context_k}"]
    rows = []
    for v in report.variants:
        latency = v.latency or Latency(None, None, None, None)
        rows.append(
            [
                v.name + (f" (= {v.same_as})" if v.same_as else ""),
                ",".join(v.on) or "-",
                *(fmt_number(v.metrics[m]) for m in report.metrics),
                fmt_number(latency.p50, 1),
                fmt_number(latency.p95, 1),
                fmt_number(v.context_tokens, 0),
            ]
        )
    return render_table(headers, rows)


def _gains_table(report: AblationReport) -> str:
    rows = []
    for toggle in report.toggles:
        for analysis in ("remove-one", "add-one"):
            cells = [toggle, analysis]
            for m in report.metrics:
                found = [
                    g.comparison
                    for g in report.gains
                    if g.toggle == toggle and g.analysis == analysis and g.comparison.metric == m
                ]
                delta = found[0].delta if found else None
                cells.append(
                    f"{delta:+.4f}{'*' if found[0].significant else ''}" if delta is not None else "-"
                )
            rows.append(cells)
    return render_table(["toggle", "analysis", *report.metrics], rows)


KIND = AblationKind()
