"""The ``chunking-sweep`` report kind (ragaudit sweep-chunking): one point per chunking configuration."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ragaudit.report.document import Block, Column, Document, DotPlot, Marked, Paragraph, Section, Table
from ragaudit.report.kinds.base import ReportKind
from ragaudit.report.kinds.fields import Fields, Latency, number
from ragaudit.report.sections import part


@dataclass(frozen=True)
class ChunkingPoint:
    """One chunking configuration: ``name`` and ``metrics`` are required, the rest reads as None."""

    name: str
    metrics: dict[str, Any]
    chunking: dict[str, Any]
    """``strategy``, ``size`` and ``overlap``."""
    token_level: dict[str, Any]
    """``precision``, ``recall`` and ``iou`` of the top-k chunks' tokens against the evidence."""
    spans: dict[str, Any]
    """``split`` (evidence spans no single chunk contains) of all ``spans``."""
    index: dict[str, Any]
    """``chunks``, ``mean_chunk_tokens``, ``build_seconds`` and ``embed_seconds``."""
    latency: Latency | None
    worse_than_best: bool
    """The primary metric is significantly below the best point's."""


@dataclass(frozen=True)
class ChunkingSweepReport:
    points: list[ChunkingPoint]
    best: Any
    primary_metric: Any
    context_k: Any
    skipped: list[str]


def _figures(part: Fields, keys: tuple[str, ...]) -> dict[str, Any]:
    return {k: part.opt(k) for k in keys}


def _point(p: Fields) -> ChunkingPoint:
    versus = p.obj("versus_best", required=False)
    return ChunkingPoint(
        str(p.need("name")),
        dict(p.obj("metrics").data),
        _figures(p.obj("chunking", required=False), ("strategy", "size", "overlap")),
        _figures(p.obj("token_level", required=False), ("precision", "recall", "iou")),
        _figures(p.obj("spans", required=False), ("split", "spans")),
        _figures(
            p.obj("index", required=False), ("chunks", "mean_chunk_tokens", "build_seconds", "embed_seconds")
        ),
        Latency.read(p.opt("latency_ms")),
        versus.opt("significant") is True,
    )


class ChunkingSweepKind(ReportKind):
    name = "chunking-sweep"
    required = ("points[].name", "points[].metrics")

    def typed(self, report: Fields) -> ChunkingSweepReport:
        return ChunkingSweepReport(
            [_point(p) for p in report.each("points")],
            report.opt("best"),
            report.opt("primary_metric"),
            report.opt("context_k"),
            report.texts("skipped"),
        )

    def title(self, report: Mapping[str, Any]) -> str:
        return f"chunking of {part(report, 'pipeline').get('name', 'the pipeline')}"

    def chunking_text(self, report: ChunkingSweepReport) -> str | None:
        """What the sweep swept (``chunking swept over 8 configurations: fixed, sentence × size 64, 128 ×
        overlap 0, 16; 97–214 chunks; best sentence-64-0``)."""
        points = report.points
        if not points:
            return None
        configs = [p.chunking for p in points]
        strategies = ", ".join(
            dict.fromkeys("?" if c["strategy"] is None else str(c["strategy"]) for c in configs)
        )
        sizes, overlaps = (
            ", ".join(map(str, sorted({c[key] for c in configs if isinstance(c[key], int)})))
            for key in ("size", "overlap")
        )
        text = (
            f"chunking swept over {len(points)} configurations: {strategies} × size {sizes or '–'} × "
            f"overlap {overlaps or '–'}"
        )
        chunks = [n for p in points if isinstance(n := p.index["chunks"], int)]
        if chunks:
            low, high = min(chunks), max(chunks)
            text += f"; {low}–{high} chunks" if low != high else f"; {low} chunks"
        return text + (f"; best {report.best}" if report.best else "")

    def document(self, report: ChunkingSweepReport) -> Document:
        """Every metric per chunking (a dot per chunking on each metric's axis, the best ringed), then
        one row per chunking: metrics (``*``: significantly below the best), token-level overlap, split
        evidence spans, index size and timings; then the skipped configurations."""
        metrics = list(report.points[0].metrics) if report.points else []
        k = report.context_k
        columns = (
            Column("chunking"), *(Column(m, "number") for m in metrics), Column(f"tokP@{k}", "number", 3),
            Column(f"tokR@{k}", "number", 3), Column(f"IoU@{k}", "number", 3), Column("split"),
            Column("chunks", "number"), Column("tok/chunk", "number", 0), Column("build s", "number", 2),
            Column("embed s", "number", 2), Column("p50 ms", "number", 1),
        )  # fmt: skip
        rows = []
        for p in report.points:
            worse = {m: p.worse_than_best and m == report.primary_metric for m in metrics}
            split, spans = p.spans["split"], p.spans["spans"]
            rows.append(
                (
                    Marked(p.name, " (best)", strong=True) if p.name == report.best else p.name,
                    *(Marked(p.metrics.get(m), "*") if worse[m] else p.metrics.get(m) for m in metrics),
                    p.token_level["precision"], p.token_level["recall"], p.token_level["iou"],
                    f"{split}/{spans}" if split is not None and spans is not None else None,
                    p.index["chunks"], p.index["mean_chunk_tokens"], p.index["build_seconds"],
                    p.index["embed_seconds"], p.latency.p50 if p.latency else None,
                )
            )  # fmt: skip
        plot = DotPlot(
            "every metric per chunking, axes scaled to the data",
            tuple(metrics),
            tuple((p.name, tuple(number(p.metrics.get(m)) for m in metrics)) for p in report.points),
            None if report.best is None else str(report.best),
        )
        blocks: tuple[Block, ...] = (
            *((plot,) if metrics else ()),
            Table(columns, tuple(rows), cut=False),
            Paragraph(
                f"labels: evidence spans projected onto each chunking; * = {report.primary_metric} "
                f"significantly below the best point {report.best} (paired randomization test, "
                "Holm-corrected); split = evidence spans no single chunk contains"
            ),
            *(Paragraph(f"skipped {s}") for s in report.skipped),
        )
        return Document((Section("chunking", "Chunking", blocks),))


KIND = ChunkingSweepKind()
