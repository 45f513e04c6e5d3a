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


def data_axis(values: Sequence[float], *, zero_within: float = 0.3, cap_one: bool = False) -> list[float]:
    """Round ticks for an axis scaled to ``values``: a margin around their range, and 0 included when
    the values come within ``zero_within`` of the top (so 0.81 vs 0.88 is not drawn on 0-1, but 0.05
    vs 0.40 still starts at 0). ``cap_one`` keeps the axis inside [0, 1] (metrics). The first tick is
    where the axis starts: charts say so when it is not 0."""
    finite = [v for v in values if math.isfinite(v)]
    if not finite:
        return [0.0, 1.0]
    lo, hi = min(finite), max(finite)
    span = hi - lo if hi > lo else max(abs(hi) * 0.1, 0.01)
    lo, hi = lo - 0.2 * span, hi + 0.2 * span
    if (0 < lo < zero_within * hi) or (lo <= 0 <= min(finite)):
        lo = 0.0
    if cap_one:
        lo, hi = max(lo, 0.0), min(hi, 1.0)
    ticks = nice_ticks(lo, hi, 5)
    if cap_one:
        ticks = [t for t in ticks if 0.0 <= t <= 1.0] or [0.0, 1.0]
        if ticks[-1] < max(finite):
            ticks.append(1.0)
    return ticks if len(ticks) > 1 else [ticks[0], ticks[0] + 1.0]


def axis_note(ticks: Sequence[float]) -> str:
    """``axis starts at 0.75, not 0`` when a value axis does not start at zero (else empty)."""
    return f"axis starts at {ticks[0]:g}, not 0" if ticks and ticks[0] > 0 else ""


def _svg(width: int, height: int, title: str, body: list[str]) -> str:
    """The chart in its own box: on a phone the box scrolls sideways and the chart keeps a readable
    size (``.chartbox`` and ``.chart`` in :mod:`ragaudit.report.html_assets`), the page does not."""
    return (
        f'<div class="chartbox"><svg class="chart" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="img" aria-label="{esc(title)}">'
        f"<title>{esc(title)}</title>{''.join(body)}</svg></div>"
    )


def _fmt(value: float | None, digits: int = 3) -> str:
    return "–" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


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


def clip_point(values: Sequence[float]) -> float | None:
    """Where a latency histogram's axis ends when a few outliers would stretch it: the larger of the
    99th percentile and Tukey's far fence (Q3 + 3 IQR), so at most about 1% of values fall beyond; None
    when the largest value is within 1.5x of that point (nothing worth clipping)."""
    ordered = sorted(v for v in values if math.isfinite(v))
    if len(ordered) < 20:
        return None

    def q(f: float) -> float:
        return ordered[min(int(f * (len(ordered) - 1) + 0.5), len(ordered) - 1)]

    point = max(q(0.99), q(0.75) + 3 * (q(0.75) - q(0.25)))
    return point if point > 0 and ordered[-1] > 1.5 * point else None


def log_ticks(lo: float, hi: float) -> list[float]:
    """1-2-5 ticks from ``lo`` to ``hi`` (both > 0) for a log axis."""
    out = []
    for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1):
        for m in (1, 2, 5):
            t = round(m * 10.0**e, 12)
            if lo <= t <= hi:
                out.append(t)
    return out


def histogram(
    values: Sequence[float], title: str, markers: Mapping[str, float], unit: str = "ms", bins: int = 24
) -> str:
    """A histogram of ``values`` with labelled vertical markers (e.g. p50, p95).

    The x axis starts at 0 unless every value sits far from it (then at a round number below the least).
    Outliers beyond :func:`clip_point` are not allowed to stretch the axis: they are counted in one
    last bar, labelled with how many there are and the largest value. When the values shown still
    span more than 20x (0.3 ms and 15 ms: a fast engine and a busy machine's stalls), the axis is
    logarithmic (bins of equal ratio) and says so, so neither the bulk nor the tail is squashed.
    """
    width, height, left, bottom, top_pad = WIDTH, 220, 48, 34, 26
    clip = clip_point(values)
    over = [v for v in values if clip is not None and v > clip]
    shown = [v for v in values if clip is None or v <= clip]
    over_w = 110 if over else 0
    plot_w, plot_h = width - left - 16 - over_w, height - bottom - top_pad
    kept_markers = {k: v for k, v in markers.items() if clip is None or v <= clip}
    hi = max([*shown, *kept_markers.values()], default=1.0) * 1.04
    smallest = min([*shown, *kept_markers.values()], default=0.0)
    log = smallest > 0 and hi / smallest > 20
    if log:
        lo = 10.0 ** math.floor(math.log10(smallest))
        lo = max((m * lo for m in (1, 2, 5) if m * lo <= smallest), default=lo)
    else:
        lo = 0.0 if smallest < 0.3 * hi else nice_ticks(smallest, hi, 6)[0]  # zoom in on a narrow band
    hi = hi if hi > lo else lo + 1.0

    def scale(v: float) -> float:
        """Position of ``v`` in [0, 1] along the axis."""
        if log:
            return (math.log(max(v, lo)) - math.log(lo)) / (math.log(hi) - math.log(lo))
        return (v - lo) / (hi - lo)

    counts = [0] * bins
    for v in shown:
        counts[min(max(int(scale(v) * bins), 0), bins - 1)] += 1
    peak = nice_ticks(0, max([*counts, len(over)]) or 1, 4)[-1]

    def x(v: float) -> float:
        return left + plot_w * scale(v)

    def edge(i: int) -> float:
        return lo * (hi / lo) ** (i / bins) if log else lo + (hi - lo) * i / bins

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
            body.append(
                f'<rect class="bar" x="{_f(x(edge(i)) + 1)}" y="{_f(y(c))}" width="{_f(max(plot_w / bins - 2, 1))}" '
                f'height="{_f(top_pad + plot_h - y(c))}"><title>{edge(i):.2f}–{edge(i + 1):.2f} {esc(unit)}: '
                f"{c}</title></rect>"
            )
    for t in log_ticks(lo, hi) if log else nice_ticks(lo, hi, 6):
        if t <= hi:
            body.append(
                f'<text class="tick" x="{_f(x(t))}" y="{height - bottom + 16}" text-anchor="middle">{t:g}</text>'
            )
    if over and clip is not None:
        ox = left + plot_w + 18
        body.append(
            f'<rect class="bar over" x="{_f(ox)}" y="{_f(y(len(over)))}" width="{over_w - 26}" '
            f'height="{_f(top_pad + plot_h - y(len(over)))}"><title>{len(over)} beyond {clip:.1f} {esc(unit)}, '
            f"up to {max(over):.1f}</title></rect>"
            f'<text class="tick over" x="{_f(ox + (over_w - 26) / 2)}" y="{height - bottom + 16}" '
            f'text-anchor="middle">&gt; {clip:.1f}</text>'
            f'<text class="mlabel over" x="{_f(ox + (over_w - 26) / 2)}" y="{_f(y(len(over)) - 4)}" '
            f'text-anchor="middle">{len(over)} clipped, max {max(over):.1f}</text>'
        )
    unit_text = f"{unit} (log scale)" if log else unit
    body.append(
        f'<text class="tick" x="{width - 16}" y="{height - 4}" text-anchor="end">{esc(unit_text)}</text>'
        f'<line class="axis" x1="{left}" x2="{width - 16}" y1="{top_pad + plot_h}" y2="{top_pad + plot_h}"/>'
    )
    for i, (name, value) in enumerate(markers.items()):
        mx = x(min(max(value, lo), hi))
        right = mx > left + plot_w * 0.8
        body.append(
            f'<line class="marker" x1="{_f(mx)}" x2="{_f(mx)}" y1="{top_pad - 4}" y2="{top_pad + plot_h}"/>'
            f'<text class="mlabel" x="{_f(mx - 4 if right else mx + 4)}" y="{top_pad + 6 + 13 * i}" '
            f'text-anchor="{"end" if right else "start"}">{esc(name)} {value:.1f}'
            f"{'' if name in kept_markers else ' (beyond the axis)'}</text>"
        )
    return _svg(width, height, title, body)


def _legend(names: Sequence[str], x0: float, y: float) -> list[str]:
    out, x = [], x0
    for i, name in enumerate(names):
        out.append(
            f'<rect class="s{i % SERIES}" x="{_f(x)}" y="{_f(y - 9)}" width="10" height="10" rx="2"/>'
            f'<text class="legend" x="{_f(x + 14)}" y="{_f(y)}">{esc(name)}</text>'
        )
        x += 28 + 11 * len(name)  # room for the larger text of a phone (html_assets)
    return out


def line_chart(
    x_labels: Sequence[str], series: Sequence[tuple[str, Sequence[float | None]]], title: str, x_name: str
) -> str:
    """Lines over categorical x positions (e.g. k = 1, 3, 5, 10, 20, or runs), one per series, on a
    value axis scaled to the data (:func:`data_axis`: a trend from 0.80 to 0.86 is not drawn flat on
    0-1); a note says where the axis starts when it is not 0, and a zero line is drawn when it is inside."""
    width, height, left, bottom, top_pad = WIDTH, 260, 48, 40, 34
    plot_w, plot_h = width - left - 24, height - bottom - top_pad
    finite = [v for _, vals in series for v in vals if v is not None and math.isfinite(v)]
    ticks = data_axis(finite, cap_one=bool(finite) and all(0.0 <= v <= 1.0 for v in finite))
    lo, hi = ticks[0], ticks[-1]
    n = max(len(x_labels), 1)

    def x(i: int) -> float:
        return left + plot_w * (i + 0.5) / n

    def y(v: float) -> float:
        return top_pad + plot_h * (1 - (min(max(v, lo), hi) - lo) / (hi - lo))

    body = []
    for t in ticks:
        body.append(
            f'<line class="grid" x1="{left}" x2="{width - 24}" y1="{_f(y(t))}" y2="{_f(y(t))}"/>'
            f'<text class="tick" x="{left - 6}" y="{_f(y(t) + 4)}" text-anchor="end">{t:g}</text>'
        )
    if lo < 0 < hi:
        body.append(f'<line class="zero" x1="{left}" x2="{width - 24}" y1="{_f(y(0))}" y2="{_f(y(0))}"/>')
    note = axis_note(ticks)
    if note:
        body.append(f'<text class="tick axisnote" x="{left}" y="{height - 6}">{esc(note)}</text>')
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


def dot_plot(
    categories: Sequence[str],
    series: Sequence[tuple[str, Sequence[float | None]]],
    title: str,
    highlight: str | None = None,
    intervals: Mapping[str, Sequence[tuple[float, float] | None]] | None = None,
) -> str:
    """One row per category (a metric), one dot per series (a pipeline). Each row has its own axis
    scaled to its values (:func:`data_axis`), with its ticks under it and a note when it does not start
    at 0, so 0.81 against 0.88 shows as the gap it is even beside a metric near 0.25. The
    ``highlight`` series (the winner) gets a ring; each row names its best value.

    ``intervals`` (``{series: [(lo, hi) or None per category]}``, e.g. each mean's 95% CI) draws a
    whisker through each dot, and the row's axis includes the whiskers: a zoomed axis must not make a
    difference inside overlapping intervals look like a wide one."""
    label_w, note_w, row_h, pad = 120, 220, 52, 34
    width = WIDTH
    plot_w = width - label_w - note_w
    height = pad + row_h * len(categories) + 8
    body = []
    for c, category in enumerate(categories):
        row = [(name, values[c]) for name, values in series if c < len(values)]
        whiskers = {name: _interval(intervals, name, c) for name, _ in row}
        finite = [v for _, v in row if v is not None and math.isfinite(v)]
        finite += [end for w in whiskers.values() if w is not None for end in w]
        ticks = data_axis(finite, cap_one=bool(finite) and all(0.0 <= v <= 1.0 for v in finite))
        lo, hi = ticks[0], ticks[-1]

        def x(v: float, lo: float = lo, hi: float = hi) -> float:
            return label_w + plot_w * (min(max(v, lo), hi) - lo) / (hi - lo)

        top = pad + c * row_h
        mid = top + 16
        body.append(
            f'<line class="axis" x1="{label_w}" x2="{label_w + plot_w}" y1="{_f(mid)}" y2="{_f(mid)}"/>'
            f'<text class="label" x="{label_w - 14}" y="{_f(mid + 4)}" text-anchor="end">{esc(category)}</text>'
        )
        for t in ticks:
            body.append(
                f'<line class="grid" x1="{_f(x(t))}" x2="{_f(x(t))}" y1="{_f(mid - 10)}" y2="{_f(mid + 8)}"/>'
                f'<text class="tick" x="{_f(x(t))}" y="{_f(mid + 22)}" text-anchor="middle">{t:g}</text>'
            )
        note = axis_note(ticks)
        if note:  # a break mark where the axis starts: it does not start at 0
            bx = label_w - 2
            body.append(
                f'<path class="axisbreak" d="M{bx - 4},{_f(mid + 5)} L{bx},{_f(mid - 5)} M{bx + 1},{_f(mid + 5)} '
                f'L{bx + 5},{_f(mid - 5)}"><title>{esc(note)}</title></path>'
            )
        best: tuple[float, str] | None = None
        placed: list[float] = []
        for s_i, (name, v) in enumerate(row):
            if v is None or not math.isfinite(v):
                continue
            if best is None or v > best[0]:
                best = (v, name)
            same = sum(abs(x(v) - px) < 6 for px in placed)  # equal values: stagger, never hide a dot
            placed.append(x(v))
            if intervals:  # one lane per series, so whiskers never lie on top of each other
                cy = mid + (s_i - (len(row) - 1) / 2) * min(6.0, 24.0 / max(len(row), 1))
            else:
                cy = mid + (0 if same == 0 else (-7 if same % 2 else 7) * ((same + 1) // 2))
            ring = f'<circle class="ring" cx="{_f(x(v))}" cy="{_f(cy)}" r="9"/>' if name == highlight else ""
            whisker, ci_words = "", ""
            if (w := whiskers.get(name)) is not None:
                lo_x, hi_x = x(w[0]), x(w[1])
                ci_words = f", 95% CI [{w[0]:.4f}, {w[1]:.4f}]"
                whisker = (  # the series' colour (its class sets stroke), drawn under the dot
                    f'<g class="whisker s{s_i % SERIES}" stroke-width="1.6">'
                    f'<line x1="{_f(lo_x)}" x2="{_f(hi_x)}" y1="{_f(cy)}" y2="{_f(cy)}"/>'
                    f'<line x1="{_f(lo_x)}" x2="{_f(lo_x)}" y1="{_f(cy - 4)}" y2="{_f(cy + 4)}"/>'
                    f'<line x1="{_f(hi_x)}" x2="{_f(hi_x)}" y1="{_f(cy - 4)}" y2="{_f(cy + 4)}"/>'
                    f"<title>{esc(category)} · {esc(name)}{ci_words}</title></g>"
                )
            body.append(
                f'{whisker}{ring}<circle class="s{s_i % SERIES}" cx="{_f(x(v))}" cy="{_f(cy)}" r="5.5">'
                f"<title>{esc(category)} · {esc(name)}: {v:.4f}{ci_words}</title></circle>"
            )
        if best is not None:
            tied = sum(1 for _, v in row if v is not None and math.isfinite(v) and abs(v - best[0]) < 1e-12)
            who = best[1] if tied == 1 else f"{best[1]} and {tied - 1} tied"
            body.append(
                f'<text class="value" x="{label_w + plot_w + 14}" y="{_f(mid + 4)}">best {best[0]:.4f} '
                f'<tspan class="note">{esc(who)}</tspan></text>'
            )
    body += _legend([name for name, _ in series], label_w, 16)
    return _svg(width, height, title, body)


def _interval(
    intervals: Mapping[str, Sequence[tuple[float, float] | None]] | None, name: str, index: int
) -> tuple[float, float] | None:
    """The finite ``(lo, hi)`` of series ``name`` at category ``index``, or None."""
    values = intervals.get(name) if intervals is not None else None
    pair = values[index] if values is not None and index < len(values) else None
    if pair is None:
        return None
    lo, hi = pair
    return (lo, hi) if math.isfinite(lo) and math.isfinite(hi) and lo <= hi else None
