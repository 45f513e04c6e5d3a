"""The ``ablation`` report kind (ragaudit ablate): the remove-one / add-one gain of each toggle."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ragaudit.report.document import Block, Column, Document, Heading, Paragraph, Section, Table
from ragaudit.report.kinds.base import ReportKind
from ragaudit.report.kinds.comparison import delta_columns, delta_values, forest
from ragaudit.report.kinds.fields import Fields, Latency, Paired, significance_of
from ragaudit.report.sections import ANALYSES, part


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

    def document(self, report: AblationReport) -> Document:
        """The gain of each toggle (remove-one and add-one, with CIs and Holm p; a forest plot on the
        page), what a gain is, the variants, and the invariants every variant shared."""
        gains = report.gain_rows()
        compared = [g.of(a) for g in gains for a in ANALYSES]
        remove, add = delta_columns(compared, "remove-one Δ"), delta_columns(compared, "add-one Δ")
        gain_table = Table(
            (Column("toggle"), Column("metric"), *remove[:3], *add[:3]),
            tuple(
                (g.toggle, g.metric, *delta_values(g.remove_one)[:3], *delta_values(g.add_one)[:3])
                for g in gains
            ),
            cut=False,
        )
        intervals = [
            (f"{g.toggle} · {analysis.removesuffix('-one')} · {g.metric}", c)
            for g in gains
            for analysis in ANALYSES
            if (c := g.of(analysis)) is not None
        ]
        variants = Table(
            (Column("variant"), Column("on"), *(Column(m, "number") for m in report.metrics),
             Column("p50 ms", "number", 1), Column("p95 ms", "number", 1),
             Column(f"tokens@{report.context_k}", "number", 0)),
            tuple(
                (v.name + (f" (= {v.same_as})" if v.same_as else ""), ",".join(v.on) or None,
                 *(v.metrics.get(m) for m in report.metrics), v.latency.p50 if v.latency else None,
                 v.latency.p95 if v.latency else None, v.context_tokens)
                for v in report.variants
            ),
            cut=False,
        )  # fmt: skip
        inv = report.invariants
        blocks: tuple[Block, ...] = (
            forest("gain of each toggle with confidence intervals", intervals),
            gain_table,
            Paragraph(
                f"gain = metric with the component - metric without; remove-one: full vs full-minus-t, add-one: "
                f"bare-plus-t vs bare; * = significant at alpha {report.alpha} (paired randomization test, "
                f"Holm-corrected across all {len(report.gains)} gains)"
            ),
            Heading("Variants"),
            variants,
            Paragraph(
                f"invariants checked: every variant scored the same {inv['cases']} cases ({inv['answerable']} "
                f"answerable), each under the same tenant ({', '.join(map(str, inv['tenants'] or []))}), top_k "
                f"{inv['top_k']}, same dataset and policy"
                if inv["same_for_every_variant"]
                else "invariants NOT the same for every variant: the gains compare different case sets"
            ),
        )
        return Document((Section("ablation", "Ablation", blocks),))

    def pipeline(self, report: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """The base configuration the variants switch components of."""
        base = part(report, "base")
        if not base:
            return None
        return {"name": base.get("name"), "config": base, "config_sha256": report.get("base_sha256")}

    def title(self, report: Mapping[str, Any]) -> str:
        return f"components of {part(report, 'base').get('name', 'the pipeline')}"


KIND = AblationKind()
