"""Two sections the eval, benchmark and compare kinds share, built once as document sections.

* **Judged share** (``holes``, :mod:`ragaudit.evaluation.holes`): per system, the mean judged share of
  its top k; a system under ``--min-judged`` gets a warning (the reports carry it in their ``notes``,
  which :func:`holes_section` shows).
* **Power** (each comparison's ``power``, :func:`ragaudit.stats.power.estimate_power`, the figures of
  ``ragaudit power --baseline``): the smallest difference the cases at hand detect, and the cases
  needed to detect ``delta``.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragaudit.report.document import Block, Column, Paragraph, Section, Table
from ragaudit.report.kinds.fields import Holes, Paired, Power

STATUS = {"complete": "ok", "incomplete": "LOWER BOUND", "not_measured": "not measured"}
"""How each status reads in a table: only a complete top k reads ok."""
WORST_IN_TABLE = 5
HOLES_HINT = (
    "Share of each system's top k that has a judgment (any grade). Under the threshold, its scores are "
    "lower bounds and comparing it with the pooled systems is biased."
)


def _share(value: float | None) -> str:
    return "–" if value is None else f"{value:.1%}"


def worst_text(h: Holes) -> str:
    """``case (40.0%), ... and 3 more``: the worst-judged cases of a system (empty when none)."""
    shown = ", ".join(f"{cid} ({_share(v)})" for cid, v in h.worst[:WORST_IN_TABLE])
    shown_n = min(len(h.worst), WORST_IN_TABLE)
    more = f" and {(h.below or 0) - shown_n} more" if (h.below or 0) > shown_n else ""
    return shown + more


def holes_line(h: Holes) -> str:
    """One system's judged share in a sentence (the eval report's line)."""
    if h.judged is None:
        return f"Judged@{'k' if h.k is None else h.k}: not measured"
    line = (
        f"Judged@{h.k}: {h.judged:.1%} of the top {h.k} judged (mean over {h.cases} answered cases; "
        f"{h.below} under {_share(h.min_judged)}) - "
        + ("scores are lower bounds" if h.status == "incomplete" else "judged enough")
    )
    return line + (f"; worst: {worst_text(h)}" if h.worst else "")


def holes_table(holes: Sequence[Holes]) -> Table:
    """One row per system: Judged@k, cases, how many under the threshold, what its scores are, the worst."""
    ks = sorted({h.k for h in holes if h.k is not None})
    minimum = next((h.min_judged for h in holes if h.min_judged is not None), None)
    columns = (
        Column("system"),
        Column(f"Judged@{ks[0] if len(ks) == 1 else 'k'}", "percent"),
        Column("cases", "count"),
        Column(f"under {_share(minimum)}", "count"),
        Column("scores"),
        Column("worst cases"),
    )
    rows = tuple(
        (h.system, h.judged, h.cases, h.below, STATUS.get(h.status, h.status), worst_text(h) or None)
        for h in holes
    )
    return Table(columns, rows, cut=False)


def holes_section(holes: Sequence[Holes], notes: Sequence[str] = ()) -> Section | None:
    """The judged-share table, what it means, and the report's notes (the under-threshold warnings)."""
    if not holes and not notes:
        return None
    warnings = tuple(
        Paragraph(f"WARNING {n}" if n.startswith("incomplete judgments") else f"note: {n}") for n in notes
    )
    table: tuple[Block, ...] = (Paragraph(HOLES_HINT, hint=True), holes_table(holes)) if holes else ()
    return Section("holes", "Judged share", (*table, *warnings))


def power_section(rows: Sequence[Paired]) -> Section | None:
    """Per comparison: cases, the spread of the per-case differences, the smallest detectable
    difference and the cases needed to detect ``delta``; then how these were computed."""
    powered = [(c, p) for c in rows if (p := Power.read(c.data)) is not None]
    if not powered:
        return None
    delta = next((p.delta for _, p in powered if p.delta is not None), None)
    first = powered[0][1]
    table = Table(
        (Column("metric"), Column("system"), Column("cases", "count"), Column("sd of differences", "number"),
         Column("smallest detectable", "number"), Column(f"cases for delta {delta}", "count")),
        tuple((c.metric, c.system, p.cases, p.sd, p.detectable, p.cases_needed) for c, p in powered),
        cut=False,
    )  # fmt: skip
    sentence = Paragraph(
        f"power: paired two-sided t-test at alpha {first.alpha} with power {first.power} on the per-case "
        "differences (as ragaudit power --baseline; not adjusted for the Holm family); the figures rest on "
        "the spread seen in these cases"
    )
    return Section("power", "Power", (table, sentence))
