"""The Markdown report page: compact enough for a pull-request comment.

The page loop (:func:`render_markdown`): a heading, the gate verdict (when the report carries one),
the kind's part (its document drawn by :func:`ragaudit.report.draw.markdown.draw_markdown`), a report's
own ``k_sweep`` / ``chunking`` sections, missing cases, errors and notes, and the provenance in a
collapsed block. Every built-in kind draws through a document; a third party's older ``markdown``
hook is shown as text (escaped with :func:`ragaudit.artifacts.escape.escape_md`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from ragaudit.artifacts.escape import escape_md as md
from ragaudit.report.document import PROBLEMS
from ragaudit.report.draw.markdown import draw_markdown, table_lines
from ragaudit.report.sections import GATE_MARKS, gate_state, gate_verdict
from ragaudit.report.sections import num as _num
from ragaudit.report.view import ReportView

if TYPE_CHECKING:
    from ragaudit.report.kinds.fields import Problems

MAX_K_COLUMNS = 10
SHOWN_KS = frozenset({1, 3, 5, 10, 20, 50, 100})
"""A longer k-sweep shows only these k (and the last) in Markdown; the HTML plot has every k."""
LIST_LIMIT = 10
"""At most this many leaks, errors or moved queries are listed; a line says how many more there are."""


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], numeric_from: int = 1) -> list[str]:
    """A table of escaped cells, columns from ``numeric_from`` on right-aligned (the back-end's table)."""
    return table_lines(headers, rows, [i >= numeric_from for i in range(len(headers))])


def _more(total: int) -> list[str]:
    return [f"- … and {total - LIST_LIMIT} more"] if total > LIST_LIMIT else []


def _gate(view: ReportView) -> list[str]:
    gate = view.gate()
    verdict = gate_verdict(gate)
    if gate is None or verdict is None:
        return []
    passed, gates = verdict
    state = gate_state(gate, passed, gates)
    head = {"pass": "✅ PASSED", "fail": "❌ FAILED", "not_verified": "⚠️ NOT VERIFIED"}[state]
    lines = [f"**Gate: {head}**" + ("" if passed or state != "not_verified" else " (blocks the release)"), ""]
    for g in gates:
        mark = GATE_MARKS.get(g.state, "❌")
        detail = "; ".join(md(m) for m in g.messages)
        lines.append(f"- {mark} {md(g.name)}" + (f": {detail}" if detail else ""))
    return [*lines, ""] if gates else lines


def _problems(problems: Problems) -> list[str]:
    lines: list[str] = []
    missing = problems.missing
    if missing:
        shown = ", ".join(md(m) for m in missing[:LIST_LIMIT])
        extra = f" … and {len(missing) - LIST_LIMIT} more" if len(missing) > LIST_LIMIT else ""
        lines.append(f"**Missing from the run ({len(missing)}, scored 0):** {shown}{extra}")
        lines.append("")
    errors = problems.errors
    if errors:
        lines.append(f"**Errors ({len(errors)}, scored 0):**")
        lines.append("")
        lines += [f"- {md(cid)}: {md(error, 200)}" for cid, error in errors[:LIST_LIMIT]]
        lines += [*_more(len(errors)), ""]
    notes = problems.notes
    if notes:
        lines += [f"- note: {md(n, 300)}" for n in notes[:LIST_LIMIT]] + _more(len(notes)) + [""]
    return lines


def _provenance(view: ReportView) -> list[str]:
    rows = [[f"**{md(label)}**", md(text)] for label, text in view.provenance()]
    return [
        "<details><summary>Provenance</summary>",
        "",
        *_table(["field", "value"], rows, 2),
        "",
        "</details>",
    ]


def _sweeps(view: ReportView) -> list[str]:
    lines: list[str] = []
    sweep = view.k_sweep()
    if sweep is not None:
        ks = list(sweep["k"])
        keep = [i for i, k in enumerate(ks) if len(ks) <= MAX_K_COLUMNS or k in SHOWN_KS or i == len(ks) - 1]
        rows = [
            [md(s.get("name", "")), *(_num(s["values"][i]) if i < len(s["values"]) else "–" for i in keep)]
            for s in sweep.get("series", [])
            if isinstance(s, Mapping) and isinstance(s.get("values"), list)
        ]
        lines += ["**Metrics by k**", "", *_table(["series", *[f"k={ks[i]}" for i in keep]], rows), ""]
    chunking = view.chunking()
    if chunking is not None:
        chunk_rows = [r for r in chunking["rows"] if isinstance(r, Mapping)]
        metrics = list(dict.fromkeys(m for r in chunk_rows for m in r.get("metrics", {})))
        rows = [
            [md(r.get("label", "")), *(_num(r["metrics"].get(m)) for m in metrics), str(r.get("chunks", "–"))]
            for r in chunk_rows
        ]
        lines += ["**Chunking**", "", *_table(["chunking", *[md(m) for m in metrics], "chunks"], rows), ""]
    return lines


def _kind_lines(view: ReportView) -> tuple[list[str], frozenset[str]]:
    """The kind's part and the anchors of its sections: its document drawn
    (:func:`ragaudit.report.draw.markdown.draw_markdown`); a kind without one (a third party's older
    ``markdown`` hook) is shown as text: every built-in kind builds a document, so no kind's own lines
    are trusted as Markdown."""
    kind = view.report_kind()
    if kind is None:
        return [], frozenset()
    document = kind.document(kind.read(view))
    if document is not None:
        return draw_markdown(document), frozenset(s.anchor for s in document.sections)
    return [md(line) for line in kind.markdown(view)], frozenset()


def render_markdown(view: ReportView) -> str:
    """The Markdown report of any report kind: the gate, the kind's part (:func:`_kind_lines`), the
    sweeps, missing cases and errors, provenance."""
    from ragaudit.artifacts.in_sample import in_sample_flag

    lines = [f"### ragaudit {md(view.kind)}: {md(view.title)}", "", *_gate(view)]
    if (flag := in_sample_flag(view.report)) is not None:
        state, text = flag
        lines += [f"_{md(text)}_" if state == "held_out" else f"**⚠️ {md(text)}**", ""]
    kind_lines, anchors = _kind_lines(view)
    lines += kind_lines
    lines += _sweeps(view)
    if PROBLEMS not in anchors:  # as on the HTML page: a part the kind's document holds is not repeated
        lines += _problems(view.problems())
    return "\n".join([*lines, *_provenance(view)]) + "\n"
