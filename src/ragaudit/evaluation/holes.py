"""Holes in the judgments: how much of each system's top k is judged, and the warning when too little is.

A golden set pooled from some systems (``ragaudit pool``) judges what *they* returned; another system's
top k can be full of items nobody labelled. Every measure but the condensed-list ones (``nDCG'``,
``bpref``) scores an unjudged item as non-relevant, so that system's scores are **lower bounds**, and
comparing it with the pooled systems is biased against it.

Each report says, for each system, ``Judged@k`` (:mod:`ragaudit.metrics.measures.judged`): the mean,
over the answerable cases that returned at least one result, of the judged share of the top k, with

* ``k`` = the cut-off of the report's first metric that has one (``nDCG@10`` -> 10), else 10;
* ``status``: ``complete`` when the mean is at least ``min_judged`` (``--min-judged``, default 0.8),
  ``incomplete`` below it (the warning: scores are lower bounds, naming the worst cases and how many
  are under the threshold), ``not_measured`` when the report has no per-case lists to measure
  (the ``--fast`` TREC engine) or no case returned anything.

It is a warning, not a failure: the scores are exactly what the judgments say. ``--require-judged``
turns anything but ``complete`` into exit 1, so that a pipeline gate is never green on a score that
is only a lower bound.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ragaudit.metrics.measures.judged import judged_at_k
from ragaudit.metrics.names import MetricSpec, parse_metric

DEFAULT_MIN_JUDGED = 0.8
DEFAULT_K = 10
WORST_SHOWN = 10
"""How many of the worst cases a summary keeps (the count of all cases under the threshold is kept too)."""

HoleStatus = Literal["complete", "incomplete", "not_measured"]


def judged_k(specs: Iterable[MetricSpec]) -> int:
    """The k of the holes check: the first metric's cut-off that has one, else :data:`DEFAULT_K`."""
    return next((s.k for s in specs if s.k is not None), DEFAULT_K)


def judged_k_of_names(names: Iterable[str]) -> int:
    """:func:`judged_k` of metric names as a report writes them (names that do not parse are skipped)."""
    specs = []
    for name in names:
        try:
            specs.append(parse_metric(name))
        except ValueError:
            continue
    return judged_k(specs)


@dataclass(frozen=True)
class HoleSummary:
    """One system's judged share of the top k (see the module docstring)."""

    system: str
    k: int
    min_judged: float
    judged: float | None
    """Mean Judged@k over the measured cases (None when not measured)."""
    cases: int
    """Answerable cases that returned at least one result (the cases measured)."""
    below: int
    """Measured cases whose own Judged@k is under ``min_judged``."""
    worst: tuple[tuple[str, float], ...]
    """``(case id, Judged@k)`` of the worst cases under ``min_judged``, worst first (at most :data:`WORST_SHOWN`)."""
    unmeasured_because: str = ""

    @property
    def status(self) -> HoleStatus:
        if self.judged is None:
            return "not_measured"
        return "complete" if self.judged >= self.min_judged else "incomplete"

    def warning(self) -> str | None:
        """The warning a report prints for this system (None when its top k is judged enough)."""
        if self.status == "complete":
            return None
        if self.judged is None:
            return (
                f"{self.system}: the judged share of the top {self.k} was not measured "
                f"({self.unmeasured_because}); its scores may be lower bounds"
            )
        worst = ", ".join(f"{cid} ({value:.0%})" for cid, value in self.worst)
        more = f" and {self.below - len(self.worst)} more" if self.below > len(self.worst) else ""
        return (
            f"{self.system}: only {self.judged:.1%} of the top {self.k} is judged (Judged@{self.k} over "
            f"{self.cases} answered cases, --min-judged {self.min_judged:.0%}); {self.below} case(s) under "
            f"{self.min_judged:.0%}, worst: {worst}{more}. Its scores are lower bounds (an unjudged item "
            "scores as non-relevant), and comparing it with the systems the judgments were pooled from is "
            "biased against it: label its holes (ragaudit pool, ragaudit label) or read nDCG' / bpref"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "system": self.system,
            "k": self.k,
            "min_judged": self.min_judged,
            "judged": self.judged,
            "cases": self.cases,
            "below": self.below,
            "worst": [{"id": cid, "judged": value} for cid, value in self.worst],
            "status": self.status,
            "warning": self.warning(),
        }


def summarize(
    system: str, values: Mapping[str, float], k: int, min_judged: float, unmeasured_because: str = ""
) -> HoleSummary:
    """The summary of per-case Judged@k ``values`` (``{case id: share}``, measured cases only)."""
    if not values:
        return HoleSummary(
            system,
            k,
            min_judged,
            None,
            0,
            0,
            (),
            unmeasured_because or "no answerable case returned a result",
        )
    under = sorted(((v, cid) for cid, v in values.items() if v < min_judged), key=lambda p: (p[0], p[1]))
    return HoleSummary(
        system,
        k,
        min_judged,
        math.fsum(values.values()) / len(values),
        len(values),
        len(under),
        tuple((cid, v) for v, cid in under[:WORST_SHOWN]),
    )


def _from_retrieved(case: Mapping[str, Any], k: int) -> float | None:
    """Judged@k of a report's per-case ``retrieved`` records (``grade: null`` = unjudged)."""
    records = [r for r in case.get("retrieved", []) if isinstance(r, Mapping)]
    if not records:
        return None
    ids = [str(r.get("chunk_id")) for r in records]
    grades = {str(r.get("chunk_id")): 0 for r in records if r.get("grade") is not None}
    return judged_at_k(ids, grades, k)


def report_holes(report: Mapping[str, Any], system: str, min_judged: float) -> HoleSummary:
    """The summary of an eval report read from JSON: its per-case ``judged`` values, or (a report
    written before they existed) Judged@k of its per-case ``retrieved`` lists."""
    holes = report.get("holes")
    k_written = holes.get("k") if isinstance(holes, Mapping) else None
    k = k_written if isinstance(k_written, int) else judged_k_of_names(report.get("metrics", {}))
    values: dict[str, float] = {}
    lists = False
    for case in report.get("per_case", []):
        if not isinstance(case, Mapping) or case.get("status") != "ok":
            continue
        lists = lists or bool(case.get("retrieved"))
        value = case.get("judged")
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            value = _from_retrieved(case, k) if k_written is None else None
        if value is not None:
            values[str(case.get("id"))] = float(value)
    because = "" if lists else "the report has no per-case result lists (the --fast TREC engine)"
    return summarize(system, values, k, min_judged, because)


def any_incomplete(summaries: Sequence[HoleSummary]) -> bool:
    """Whether some system's top k is not judged enough, or could not be measured."""
    return any(s.status != "complete" for s in summaries)
