"""Small inline SVG charts for the HTML report (no JavaScript, no external resources).

Every chart is a self-contained ``<svg>`` string; every label is escaped. Colours come from CSS classes
(``bar``, ``ci``, ``base``, ``s0``..``s5``) defined in :mod:`ragaudit.report.html_assets`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ragaudit.artifacts.escape import escape_html as esc

WIDTH = 1040
"""Default chart width in px (the report's content width); charts shrink to fit narrower screens."""
SERIES = 6
"""Series colours cycle through classes ``s0`` .. ``s5``."""


@dataclass(frozen=True)
class Bar:
    """One horizontal bar: a value with an optional CI whisker and an optional baseline tick."""

    label: str
    value: float | None
    ci: tuple[float, float] | None = None
    baseline: float | None = None
    note: str = ""
    tone: str = ""
    """``up`` / ``down`` colour the note (a significant change)."""


@dataclass(frozen=True)
class Interval:
    """A point with a CI around a reference line (a forest plot row), e.g. a paired delta."""

    label: str
    value: float | None
    lo: float | None
    hi: float | None
    highlight: bool = False


def _f(x: float) -> str:
    return f"{x:.1f}"


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick values from at most ``lo`` to at least ``hi``, about ``count`` steps of 1, 2 or 5 × 10^n."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo]
    raw = (hi - lo) / max(count, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first, last = math.floor(lo / step + 1e-9), math.ceil(hi / step - 1e-9)
    return [round(i * step, 12) for i in range(first, last + 1)]


def _svg(width: int, height: int, title: str, body: list[str]) -> str:
    return (
        f'<svg class="chart" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'role="img" aria-label="{esc(title)}">'
        f"<title>{esc(title)}</title>{''.join(body)}</svg>"
    )


def _fmt(value: float | None, digits: int = 3) -> str:
    return "–" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


def metric_bars(bars: Sequence[Bar], title: str, width: int = WIDTH, top: float = 1.0) -> str:
    """Horizontal bars on ``[0, top]`` with CI whiskers and baseline ticks (metrics live in [0, 1])."""
    label_w, note_w, row_h, pad = 96, 250, 30, 22
    plot_w = width - label_w - note_w
    height = pad + row_h * len(bars) + 24

    def x(v: float) -> float:
        return label_w + plot_w * min(max(v / top, 0.0), 1.0)

    body = []
    for t in nice_ticks(0.0, top, 5):
        body.append(
            f'<line class="grid" x1="{_f(x(t))}" x2="{_f(x(t))}" y1="{pad - 6}" y2="{height - 20}"/>'
            f'<text class="tick" x="{_f(x(t))}" y="{height - 6}" text-anchor="middle">{t:g}</text>'
        )
    for i, bar in enumerate(bars):
        y = pad + i * row_h
        mid = y + row_h / 2
        body.append(
            f'<text class="label" x="{label_w - 8}" y="{_f(mid + 4)}" text-anchor="end">{esc(bar.label)}</text>'
        )
        if bar.value is not None:
            body.append(
                f'<rect class="bar" x="{label_w}" y="{_f(y + 6)}" width="{_f(x(bar.value) - label_w)}" '
                f'height="{row_h - 12}" rx="3"><title>{esc(bar.label)} {_fmt(bar.value, 4)}</title></rect>'
            )
        if bar.ci is not None and all(math.isfinite(c) for c in bar.ci):
            lo, hi = x(bar.ci[0]), x(bar.ci[1])
            body.append(
                f'<g class="ci"><line x1="{_f(lo)}" x2="{_f(hi)}" y1="{_f(mid)}" y2="{_f(mid)}"/>'
                f'<line x1="{_f(lo)}" x2="{_f(lo)}" y1="{_f(mid - 6)}" y2="{_f(mid + 6)}"/>'
                f'<line x1="{_f(hi)}" x2="{_f(hi)}" y1="{_f(mid - 6)}" y2="{_f(mid + 6)}"/>'
                f"<title>CI [{_fmt(bar.ci[0], 4)}, {_fmt(bar.ci[1], 4)}]</title></g>"
            )
        if bar.baseline is not None and math.isfinite(bar.baseline):
            bx = x(bar.baseline)
            body.append(
                f'<line class="base" x1="{_f(bx)}" x2="{_f(bx)}" y1="{_f(y + 2)}" y2="{_f(y + row_h - 2)}">'
                f"<title>baseline {_fmt(bar.baseline, 4)}</title></line>"
            )
        tone = f" {bar.tone}" if bar.tone else ""
        body.append(
            f'<text class="value" x="{label_w + plot_w + 10}" y="{_f(mid + 4)}">{_fmt(bar.value)}</text>'
            f'<text class="note{tone}" x="{label_w + plot_w + 60}" y="{_f(mid + 4)}">{esc(bar.note)}</text>'
        )
    return _svg(width, height, title, body)


def forest_plot(rows: Sequence[Interval], title: str, width: int = WIDTH) -> str:
    """Points with CIs around a zero line (paired deltas): highlighted rows are significant."""
    label_w, note_w, row_h, pad = 190, 120, 26, 16
    plot_w = width - label_w - note_w
    values = [v for r in rows for v in (r.value, r.lo, r.hi) if v is not None and math.isfinite(v)]
    span = max([abs(v) for v in values] + [1e-3]) * 1.1
    height = pad + row_h * len(rows) + 26

    def x(v: float) -> float:
        return label_w + plot_w * (v + span) / (2 * span)

    body = []
    for t in nice_ticks(-span, span, 6):
        if -span <= t <= span:
            body.append(
                f'<line class="grid" x1="{_f(x(t))}" x2="{_f(x(t))}" y1="{pad - 6}" y2="{height - 22}"/>'
                f'<text class="tick" x="{_f(x(t))}" y="{height - 8}" text-anchor="middle">{t:+g}</text>'
            )
    body.append(f'<line class="zero" x1="{_f(x(0))}" x2="{_f(x(0))}" y1="{pad - 8}" y2="{height - 22}"/>')
    for i, row in enumerate(rows):
        mid = pad + i * row_h + row_h / 2
        cls = "pt hi" if row.highlight else "pt"
        body.append(
            f'<text class="label" x="{label_w - 8}" y="{_f(mid + 4)}" text-anchor="end">{esc(row.label)}</text>'
        )
        if row.lo is not None and row.hi is not None and math.isfinite(row.lo) and math.isfinite(row.hi):
            body.append(
                f'<line class="{cls}" x1="{_f(x(row.lo))}" x2="{_f(x(row.hi))}" y1="{_f(mid)}" y2="{_f(mid)}"/>'
            )
        if row.value is not None and math.isfinite(row.value):
            body.append(
                f'<circle class="{cls}" cx="{_f(x(row.value))}" cy="{_f(mid)}" r="4.5">'
                f"<title>{esc(row.label)}: {row.value:+.4f} [{_fmt(row.lo, 4)}, {_fmt(row.hi, 4)}]</title></circle>"
            )
        value = "–" if row.value is None or not math.isfinite(row.value) else f"{row.value:+.4f}"
        body.append(f'<text class="value" x="{label_w + plot_w + 10}" y="{_f(mid + 4)}">{value}</text>')
    return _svg(width, height, title, body)


def histogram(
    values: Sequence[float], title: str, markers: Mapping[str, float], unit: str = "ms", bins: int = 24
) -> str:
    """A histogram of ``values`` with labelled vertical markers (e.g. p50, p95).

    The x axis starts at 0 unless every value sits far from it (then at a round number below the least).
    """
    width, height, left, bottom, top_pad = WIDTH, 220, 48, 34, 26
    plot_w, plot_h = width - left - 16, height - bottom - top_pad
    hi = max([*values, *markers.values()], default=1.0) * 1.04
    smallest = min([*values, *markers.values()], default=0.0)
    lo = 0.0 if smallest < 0.3 * hi else nice_ticks(smallest, hi, 6)[0]  # zoom in on a narrow band
    hi = hi if hi > lo else lo + 1.0
    step = (hi - lo) / bins
    counts = [0] * bins
    for v in values:
        counts[min(int((v - lo) / step), bins - 1)] += 1
    peak = nice_ticks(0, max(counts) or 1, 4)[-1]

    def x(v: float) -> float:
        return left + plot_w * (v - lo) / (hi - lo)

    def y(c: float) -> float:
        return top_pad + plot_h * (1 - c / peak)

    body = []
    for t in nice_ticks(0, peak, 4):
        body.append(
            f'<line class="grid" x1="{left}" x2="{width - 16}" y1="{_f(y(t))}" y2="{_f(y(t))}"/>'
            f'<text class="tick" x="{left - 6}" y="{_f(y(t) + 4)}" text-anchor="end">{t:g}</text>'
        )
    for i, c in enumerate(counts):
        if c:
            x0 = x(lo + i * step)
            body.append(
                f'<rect class="bar" x="{_f(x0 + 1)}" y="{_f(y(c))}" width="{_f(max(plot_w / bins - 2, 1))}" '
                f'height="{_f(top_pad + plot_h - y(c))}"><title>{lo + i * step:.1f}–{lo + (i + 1) * step:.1f} {esc(unit)}: '
                f"{c}</title></rect>"
            )
    for t in nice_ticks(lo, hi, 6):
        if t <= hi:
            body.append(
                f'<text class="tick" x="{_f(x(t))}" y="{height - bottom + 16}" text-anchor="middle">{t:g}</text>'
            )
    body.append(
        f'<text class="tick" x="{width - 16}" y="{height - 4}" text-anchor="end">{esc(unit)}</text>'
        f'<line class="axis" x1="{left}" x2="{width - 16}" y1="{top_pad + plot_h}" y2="{top_pad + plot_h}"/>'
    )
    for i, (name, value) in enumerate(markers.items()):
        mx = x(min(max(value, lo), hi))
        right = mx > left + plot_w * 0.8
        body.append(
            f'<line class="marker" x1="{_f(mx)}" x2="{_f(mx)}" y1="{top_pad - 4}" y2="{top_pad + plot_h}"/>'
            f'<text class="mlabel" x="{_f(mx - 4 if right else mx + 4)}" y="{top_pad + 6 + 13 * i}" '
            f'text-anchor="{"end" if right else "start"}">{esc(name)} {value:.1f}</text>'
        )
    return _svg(width, height, title, body)


def _legend(names: Sequence[str], x0: float, y: float) -> list[str]:
    out, x = [], x0
    for i, name in enumerate(names):
        out.append(
            f'<rect class="s{i % SERIES}" x="{_f(x)}" y="{_f(y - 9)}" width="10" height="10" rx="2"/>'
            f'<text class="legend" x="{_f(x + 14)}" y="{_f(y)}">{esc(name)}</text>'
        )
        x += 24 + 7 * len(name)
    return out


def _value_axis(top_value: float) -> float:
    return 1.0 if top_value <= 1.0 else nice_ticks(0, top_value, 5)[-1]


def line_chart(
    x_labels: Sequence[str], series: Sequence[tuple[str, Sequence[float | None]]], title: str, x_name: str
) -> str:
    """Lines over categorical x positions (e.g. k = 1, 3, 5, 10, 20), one per series."""
    width, height, left, bottom, top_pad = WIDTH, 260, 48, 40, 34
    plot_w, plot_h = width - left - 24, height - bottom - top_pad
    finite = [v for _, vals in series for v in vals if v is not None and math.isfinite(v)]
    top = _value_axis(max(finite, default=1.0))
    n = max(len(x_labels), 1)

    def x(i: int) -> float:
        return left + plot_w * (i + 0.5) / n

    def y(v: float) -> float:
        return top_pad + plot_h * (1 - v / top)

    body = []
    for t in nice_ticks(0, top, 5):
        body.append(
            f'<line class="grid" x1="{left}" x2="{width - 24}" y1="{_f(y(t))}" y2="{_f(y(t))}"/>'
            f'<text class="tick" x="{left - 6}" y="{_f(y(t) + 4)}" text-anchor="end">{t:g}</text>'
        )
    every = math.ceil(n / 20)  # at most about 20 x labels
    for i, label in enumerate(x_labels):
        if i % every and i != n - 1:
            continue
        body.append(
            f'<text class="tick" x="{_f(x(i))}" y="{height - bottom + 16}" text-anchor="middle">{esc(label)}</text>'
        )
    body.append(
        f'<text class="tick" x="{width - 24}" y="{height - 6}" text-anchor="end">{esc(x_name)}</text>'
    )
    for s, (name, values) in enumerate(series):
        cls = f"s{s % SERIES}"
        points = [(x(i), y(v)) for i, v in enumerate(values) if v is not None and math.isfinite(v)]
        if points:
            path = " ".join(f"{_f(px)},{_f(py)}" for px, py in points)
            body.append(f'<polyline class="line {cls}" points="{path}"/>')
        for i, v in enumerate(values):
            if v is not None and math.isfinite(v):
                body.append(
                    f'<circle class="{cls}" cx="{_f(x(i))}" cy="{_f(y(v))}" r="3.5">'
                    f"<title>{esc(name)} @ {esc(x_labels[i] if i < len(x_labels) else i)}: {v:.4f}</title></circle>"
                )
    body += _legend([name for name, _ in series], left, 16)
    return _svg(width, height, title, body)


def grouped_bars(
    categories: Sequence[str], series: Sequence[tuple[str, Sequence[float | None]]], title: str
) -> str:
    """Vertical bars: one group per category, one bar per series (values aligned with categories)."""
    width, height, left, bottom, top_pad = WIDTH, 260, 48, 40, 34
    plot_w, plot_h = width - left - 16, height - bottom - top_pad
    finite = [v for _, vals in series for v in vals if v is not None and math.isfinite(v)]
    top = _value_axis(max(finite, default=1.0))
    group_w = plot_w / max(len(categories), 1)
    bar_w = min(28.0, group_w * 0.8 / max(len(series), 1))

    def y(v: float) -> float:
        return top_pad + plot_h * (1 - min(v, top) / top)

    body = []
    for t in nice_ticks(0, top, 5):
        body.append(
            f'<line class="grid" x1="{left}" x2="{width - 16}" y1="{_f(y(t))}" y2="{_f(y(t))}"/>'
            f'<text class="tick" x="{left - 6}" y="{_f(y(t) + 4)}" text-anchor="end">{t:g}</text>'
        )
    for c, category in enumerate(categories):
        center = left + group_w * (c + 0.5)
        start = center - bar_w * len(series) / 2
        for s, (name, values) in enumerate(series):
            v = values[c] if c < len(values) else None
            if v is None or not math.isfinite(v):
                continue
            body.append(
                f'<rect class="s{s % SERIES}" x="{_f(start + s * bar_w + 1)}" y="{_f(y(v))}" '
                f'width="{_f(bar_w - 2)}" height="{_f(top_pad + plot_h - y(v))}" rx="2">'
                f"<title>{esc(category)} · {esc(name)}: {v:.4f}</title></rect>"
            )
        body.append(
            f'<text class="tick" x="{_f(center)}" y="{height - bottom + 16}" text-anchor="middle">{esc(category)}</text>'
        )
    body.append(
        f'<line class="axis" x1="{left}" x2="{width - 16}" y1="{top_pad + plot_h}" y2="{top_pad + plot_h}"/>'
    )
    body += _legend([name for name, _ in series], left, 16)
    return _svg(width, height, title, body)
