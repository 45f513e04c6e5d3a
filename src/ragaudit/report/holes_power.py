"""Two sections the eval, benchmark and compare kinds share: judged share of the top k, and power.

* **Judged@k** (``holes``, :mod:`ragaudit.evaluation.holes`): per system, the mean judged share of its
  top k; a system under ``--min-judged`` gets a warning, which the reports carry in their ``notes``
  (so the Markdown and HTML notes show it) and the terminal prints under the table.
* **Power** (each comparison's ``power``, :func:`ragaudit.stats.power.estimate_power`, the figures of
  ``ragaudit power --baseline``): the smallest difference the cases at hand detect, and the cases
  needed to detect ``delta``.

Terminal text is plain; the Markdown and HTML cells are escaped here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ragaudit.artifacts.escape import escape_html as esc
from ragaudit.artifacts.escape import escape_md as md
from ragaudit.artifacts.tables import fmt_number, render_table
from ragaudit.report.draw.markdown import table_lines
from ragaudit.report.kinds.fields import Holes, Paired, Power

if TYPE_CHECKING:
    from ragaudit.report.html_parts import Section

STATUS = {"complete": "ok", "incomplete": "LOWER BOUND", "not_measured": "not measured"}
"""How each status reads in a table: only a complete top k reads ok."""


def _k(holes: Sequence[Holes]) -> str:
    ks = sorted({h.k for h in holes if h.k is not None})
    return "k" if len(ks) != 1 else str(ks[0])


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _holes_rows(holes: Sequence[Holes]) -> list[list[str]]:
    return [
        [
            h.system,
            _share(h.judged),
            "-" if h.cases is None else str(h.cases),
            "-" if h.below is None else str(h.below),
            STATUS.get(h.status, h.status),
            _worst(h),
        ]
        for h in holes
    ]


WORST_IN_TABLE = 5


def _worst(h: Holes) -> str:
    shown = ", ".join(f"{cid} ({_share(v)})" for cid, v in h.worst[:WORST_IN_TABLE])
    shown_n = min(len(h.worst), WORST_IN_TABLE)
    more = f" and {(h.below or 0) - shown_n} more" if (h.below or 0) > shown_n else ""
    return (shown + more) or "-"


def _holes_headers(holes: Sequence[Holes]) -> list[str]:
    minimum = next((h.min_judged for h in holes if h.min_judged is not None), None)
    return ["system", f"Judged@{_k(holes)}", "cases", f"under {_share(minimum)}", "scores", "worst cases"]


def holes_line(h: Holes) -> str:
    """One system's judged share in a sentence (the eval report's terminal and Markdown line)."""
    if h.judged is None:
        return f"Judged@{h.k}: not measured"
    line = (
        f"Judged@{h.k}: {h.judged:.1%} of the top {h.k} judged (mean over {h.cases} answered cases; "
        f"{h.below} under {_share(h.min_judged)}) - "
        + ("scores are lower bounds" if h.status == "incomplete" else "judged enough")
    )
    return line + (f"; worst: {_worst(h)}" if h.worst else "")


def holes_terminal(holes: Sequence[Holes], with_warnings: bool = True) -> list[str]:
    """The judged-share table of several systems, then each warning (which names the worst cases)."""
    if not holes:
        return []
    lines = [render_table(_holes_headers(holes)[:-1], [row[:-1] for row in _holes_rows(holes)])]
    if with_warnings:
        lines += [f"WARNING incomplete judgments: {h.warning}" for h in holes if h.warning]
    return lines


def holes_markdown(holes: Sequence[Holes]) -> list[str]:
    """The judged-share table in Markdown (the warnings are in the report's notes)."""
    if not holes:
        return []
    rows = [[md(cell) for cell in row] for row in _holes_rows(holes)]
    headers = _holes_headers(holes)
    return [
        "**Judged share of the top k** (holes in the judgments)",
        "",
        *table_lines(headers, rows, [i >= 1 for i in range(len(headers))]),
        "",
    ]


def holes_html(holes: Sequence[Holes]) -> Section | None:
    """The judged-share section (the warnings are in the report's notes)."""
    if not holes:
        return None
    from ragaudit.report.html_parts import html_table

    rows = [[esc(cell) for cell in row] for row in _holes_rows(holes)]
    hint = (
        '<p class="hint">Share of each system\'s top k that has a judgment (any grade). Under the '
        "threshold, its scores are lower bounds and comparing it with the pooled systems is biased.</p>"
    )
    return "holes", "Judged share", hint + html_table([esc(h) for h in _holes_headers(holes)], rows)


def _power_rows(rows: Sequence[Paired]) -> list[tuple[Paired, Power]]:
    return [(c, p) for c in rows if (p := Power.read(c.data)) is not None]


def _power_headers(powered: Sequence[tuple[Paired, Power]]) -> list[str]:
    delta = next((p.delta for _, p in powered if p.delta is not None), None)
    return [
        "metric",
        "system",
        "cases",
        "sd of differences",
        "smallest detectable",
        f"cases for delta {delta}",
    ]


def _power_cells(powered: Sequence[tuple[Paired, Power]]) -> list[list[str]]:
    return [
        [
            c.metric,
            c.system,
            "-" if p.cases is None else str(p.cases),
            fmt_number(p.sd),
            fmt_number(p.detectable),
            "n/a" if p.cases_needed is None else str(p.cases_needed),
        ]
        for c, p in powered
    ]


def power_sentence(powered: Sequence[tuple[Paired, Power]]) -> str:
    first = powered[0][1]
    return (
        f"power: paired two-sided t-test at alpha {first.alpha} with power {first.power} on the per-case "
        "differences (as ragaudit power --baseline; not adjusted for the Holm family); the figures rest on "
        "the spread seen in these cases"
    )


def power_terminal(rows: Sequence[Paired]) -> list[str]:
    powered = _power_rows(rows)
    if not powered:
        return []
    return [render_table(_power_headers(powered), _power_cells(powered)), power_sentence(powered)]


def power_markdown(rows: Sequence[Paired]) -> list[str]:
    powered = _power_rows(rows)
    if not powered:
        return []
    cells = [[md(cell) for cell in row] for row in _power_cells(powered)]
    headers = [md(h) for h in _power_headers(powered)]
    return [
        "**How many cases?**",
        "",
        *table_lines(headers, cells, [i >= 2 for i in range(len(headers))]),
        "",
        md(power_sentence(powered)),
        "",
    ]


def power_html(rows: Sequence[Paired]) -> Section | None:
    powered = _power_rows(rows)
    if not powered:
        return None
    from ragaudit.report.html_parts import html_table

    cells = [[esc(cell) for cell in row] for row in _power_cells(powered)]
    table = html_table([esc(h) for h in _power_headers(powered)], cells, 2)
    return "power", "Power", table + f'<p class="hint">{esc(power_sentence(powered))}</p>'
