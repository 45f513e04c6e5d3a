"""Views of the run history: unicode sparklines for the terminal, and one offline HTML file with an
inline SVG line plot per dataset and metric (no script, no CDN: it opens from disk anywhere). The page
reuses the HTML report's stylesheet and chart code (:mod:`ragaudit.report.svg`).

Both views keep the grouping of :func:`ragaudit.artifacts.history.series`: one heading per dataset
sha256 and metric policy; pipelines are compared only under the same heading.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from itertools import groupby

from ragaudit.artifacts.escape import escape_html as esc
from ragaudit.artifacts.history import HistoryRun, Series
from ragaudit.artifacts.tables import fmt_number
from ragaudit.report.html_assets import CSS
from ragaudit.report.svg import line_chart

BARS = "▁▂▃▄▅▆▇█"
CSP = "default-src 'none'; style-src 'unsafe-inline'"
DEFAULT_METRICS = ("nDCG@10", "R@5", "MRR@10")


def sparkline(values: Sequence[float | None]) -> str:
    """One block character per value, scaled between the series' min and max; a gap for a missing value.

    A flat series prints as a row of middle blocks.
    """
    present = [v for v in values if v is not None and math.isfinite(v)]
    if not present:
        return " " * len(values)
    low, high = min(present), max(present)
    out = []
    for v in values:
        if v is None or not math.isfinite(v):
            out.append(" ")
        elif high == low:
            out.append(BARS[len(BARS) // 2])
        else:
            out.append(BARS[round((v - low) / (high - low) * (len(BARS) - 1))])
    return "".join(out)


def chosen_metrics(all_series: Sequence[Series], metrics: Sequence[str] | None) -> list[str]:
    """The metrics to show: those asked for, else the defaults present, else every recorded one."""
    if metrics:
        return list(metrics)
    seen = list(dict.fromkeys(m for s in all_series for r in s.runs for m in r.metrics))
    defaults = [m for m in DEFAULT_METRICS if m in seen]
    return defaults or seen


def policy_label(policy: dict[str, object]) -> str:
    depth = policy.get("scored_depth")
    cut = f", scored on the top {depth} only (top_k {depth})" if depth is not None else ""
    return (
        f"gain {policy.get('gain', '?')}, relevance threshold {policy.get('relevance_threshold', '?')}{cut}"
    )


def _heading(s: Series) -> str:
    path = f" · {s.dataset_path}" if s.dataset_path else ""
    return f"dataset {s.dataset_sha256[:12]}{path} · policy {policy_label(s.policy)}"


def _same_group(s: Series) -> tuple[str, str]:
    return s.dataset_sha256, s.runs[0].policy_key


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def failed_cases(run: HistoryRun) -> int:
    """How many of a recorded run's cases failed (errors and missing cases, as ``ragaudit eval`` counts
    them): each scored 0, so such a run's figures are not its system's (0 for a run that did not fail)."""
    return sum(v for k in ("errors", "missing") if isinstance(v := run.counts.get(k), int) and v > 0)


def _failed_line(runs: Sequence[HistoryRun]) -> str | None:
    """The terminal line naming a series' runs whose cases failed (``None``: none did)."""
    failed = [(i + 1, n, r) for i, r in enumerate(runs) if (n := failed_cases(r))]
    if not failed:
        return None
    which = ", ".join(f"run {i} ({n} of {r.counts.get('cases', '?')} cases)" for i, n, r in failed)
    return (
        f"    FAILED cases in {which}: each failed case scored 0, so those runs' figures are not the "
        "system's (a drop there may be failures, a recovery after them no improvement)"
    )


def render_terminal(all_series: Sequence[Series], metrics: Sequence[str] | None, last: int = 30) -> str:
    """The trend of each metric per dataset and pipeline, newest ``last`` runs, as text."""
    if not all_series:
        return "no recorded runs match"
    names = chosen_metrics(all_series, metrics)
    width = max(len(m) for m in names)
    lines: list[str] = []
    for _, group in groupby(all_series, key=_same_group):
        members = list(group)
        lines.append(_heading(members[0]))
        for s in members:
            runs = s.runs[-last:]
            first, latest = runs[0].created_at[:10], runs[-1].created_at[:10]
            changed = [
                i + 1 for i in range(1, len(runs)) if runs[i].config_sha256 != runs[i - 1].config_sha256
            ]
            note = f"; config changed at run {', '.join(map(str, changed))}" if changed else ""
            count = _count(len(runs), "run")
            shown = f"last {count} of {len(s.runs)}" if len(runs) < len(s.runs) else count
            lines.append(f"  {s.pipeline}  ({shown}, {first} .. {latest}{note})")
            for metric in names:
                values = [r.metrics.get(metric) for r in runs]
                present = [v for v in values if v is not None]
                if not present:
                    lines.append(f"    {metric.ljust(width)}  (not recorded)")
                    continue
                if len(present) == 1:  # one point is no trend: no "+0.0000" that reads as "unchanged"
                    lines.append(
                        f"    {metric.ljust(width)}  {fmt_number(present[0])}  (one recorded run: no trend yet)"
                    )
                    continue
                delta = present[-1] - present[0]
                lines.append(
                    f"    {metric.ljust(width)}  {sparkline(values)}  {fmt_number(present[0])} -> "
                    f"{fmt_number(present[-1])} ({delta:+.4f})  min {fmt_number(min(present))}  "
                    f"max {fmt_number(max(present))}"
                )
            if failed := _failed_line(runs):
                lines.append(failed)
            newest = runs[-1]
            why = (
                f" ({newest.isolation_reason})"
                if newest.isolation != "pass" and newest.isolation_reason
                else ""
            )
            lines.append(f"    tenant isolation (latest run): {ISOLATION_TEXT[newest.isolation]}{why}")
        lines.append("")
    lines += edited_golden_sets(all_series)
    lines.append(
        "runs are grouped by dataset sha256 and metric policy: runs on different datasets are never compared"
    )
    return "\n".join(lines)


def edited_golden_sets(all_series: Sequence[Series]) -> list[str]:
    """One line per golden-set path recorded under more than one sha256 (the file was edited between
    runs): its headings are separate trends, and a rise across them may be cases removed, not a better
    system."""
    versions: dict[str, set[str]] = {}
    for s in all_series:
        for run in s.runs:
            if run.dataset_path:
                versions.setdefault(run.dataset_path, set()).add(run.dataset_sha256)
    return [
        f"note: the golden set {path} was edited between runs ({len(shas)} versions: "
        f"{', '.join(sorted(sha[:12] for sha in shas))}): each version is its own heading, and a change "
        "across them is the golden set's as much as the system's (cases removed or relabelled)"
        for path, shas in sorted(versions.items())
        if len(shas) > 1
    ]


def _group_runs(members: Sequence[Series]) -> list[tuple[HistoryRun, str]]:
    """Every run of one dataset/policy group with its pipeline, oldest first: the x axis of the plots."""
    return sorted(
        ((r, s.pipeline) for s in members for r in s.runs), key=lambda t: (t[0].created_at, t[0].id)
    )


def _chart(members: Sequence[Series], runs: Sequence[tuple[HistoryRun, str]], metric: str) -> str:
    """One line per pipeline over the group's runs (``#1`` the oldest); hover a point for its value."""
    position = {run.id: i for i, (run, _) in enumerate(runs)}
    lines = []
    for s in members:
        values: list[float | None] = [None] * len(runs)
        for r in s.runs:
            values[position[r.id]] = r.metrics.get(metric)
        lines.append((s.pipeline, values))
    if not any(v is not None for _, values in lines for v in values):
        return f"<p class='hint'>{esc(metric)}: not recorded in these runs</p>"
    chart = line_chart([f"#{i + 1}" for i in range(len(runs))], lines, f"{metric} by run", "run")
    return f"<h3>{esc(metric)}</h3>{chart}"


ISOLATION_TEXT = {"pass": "verified", "fail": "LEAK", "not_verified": "not verified"}
"""How the runs table shows each tenant-isolation state (a not-verified run is never shown as clean)."""


def _runs_table(runs: Sequence[tuple[HistoryRun, str]], names: Sequence[str]) -> str:
    head = ["run", "made", "pipeline", "config", "commit", *names, "failed", "leaks", "isolation", "p95 ms"]
    numeric_from = 5
    cells = "".join(
        f"<th{' class=num' if i >= numeric_from else ''}>{esc(h)}</th>" for i, h in enumerate(head)
    )
    body = []
    for i, (r, pipeline) in enumerate(runs):
        row = [
            f"#{i + 1}",
            r.created_at,
            pipeline,
            (r.config_sha256 or "-")[:10],
            (r.git_commit or "-")[:10] + (" (dirty)" if r.git_dirty else ""),
            *(fmt_number(r.metrics.get(m)) for m in names),
            f"FAILED {failed_cases(r)}" if failed_cases(r) else "0",
            str(r.leaks),
            ISOLATION_TEXT[r.isolation],
            fmt_number(r.latency_p95_ms, 1),
        ]
        tds = "".join(
            f"<td{' class=num' if j >= numeric_from else ''}>{esc(c)}</td>" for j, c in enumerate(row)
        )
        flagged = r.leaks or r.isolation == "fail" or failed_cases(r)
        body.append(f"<tr class='leak'>{tds}</tr>" if flagged else f"<tr>{tds}</tr>")
    return f"<table><thead><tr>{cells}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def render_html(
    all_series: Sequence[Series], metrics: Sequence[str] | None, source: str, last: int = 30
) -> str:
    """A self-contained page (the HTML report's CSS, inline SVG, no script): per dataset and policy,
    a line plot per metric with one line per pipeline (its newest ``last`` runs), and the table of runs."""
    names = chosen_metrics(all_series, metrics)
    sections = []
    for _, group in groupby(all_series, key=_same_group):
        members = [replace(s, runs=s.runs[-last:]) for s in group]
        runs = _group_runs(members)
        charts = "".join(_chart(members, runs, m) for m in names)
        sections.append(
            f"<section><h2>{esc(_heading(members[0]))}</h2>"
            f"<p class='hint'>{_count(len(runs), 'run')} of {_count(len(members), 'pipeline')}, "
            "oldest first; hover a point for its value.</p>"
            f"{charts}<h3>Runs</h3>{_runs_table(runs, names)}</section>"
        )
    body = "".join(sections) or "<section><p>No recorded runs match.</p></section>"
    return (
        "<!doctype html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<meta http-equiv='Content-Security-Policy' content=\"{CSP}\">"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>ragaudit history</title><style>{CSS}</style></head><body>"
        "<header><div class='brand'>ragaudit history</div><h1>Metric trends</h1>"
        f"<div class='sub'>{esc(source)} · runs are grouped by dataset sha256 and metric policy; runs on "
        "different datasets are never plotted together</div></header>"
        f"<main>{body}</main><footer>Written by ragaudit; this file is self-contained and works offline."
        "</footer></body></html>\n"
    )
