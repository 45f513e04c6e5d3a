"""Metric names: one grammar, parsed and printed back identically.

``FAMILY`` or ``FAMILY@k``. The families, their spellings and whether they need, allow or refuse a
cut-off come from the measure registry (:mod:`ragaudit.metrics.measures`): ``nDCG``, ``R`` (recall),
``P`` (precision), ``MRR``, ``MAP``, ``Hit``, ``RPrec``, ... ``R``, ``P`` and ``Hit`` need a cut-off;
``nDCG``, ``MRR`` and ``MAP`` take one optionally (none means the whole ranking); ``RPrec`` takes none.

``parse_metric("nDCG@10").name == "nDCG@10"`` for every canonical name. Common spellings are accepted
(``ndcg@10``, ``recall@5``, ``precision@5``, ``success@5``, ``map@100``) and print in canonical form.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from ragaudit.errors import MetricNameError
from ragaudit.metrics.measures import MEASURES

FAMILIES: dict[str, str] = {m.family: m.meaning for m in MEASURES}
_NEEDS_K = {m.family for m in MEASURES if m.cutoff == "required"}
_NO_K = {m.family for m in MEASURES if m.cutoff == "none"}
_ALIASES: dict[str, str] = {spelling: m.family for m in MEASURES for spelling in m.spellings}

EXAMPLES = tuple(example for m in MEASURES for example in m.examples)


@dataclass(frozen=True, order=True)
class MetricSpec:
    """A parsed metric: its family and its cut-off (``None`` for the whole ranking)."""

    family: str
    k: int | None = None

    @property
    def name(self) -> str:
        """The canonical name, e.g. ``nDCG@10``."""
        return self.family if self.k is None else f"{self.family}@{self.k}"

    def __str__(self) -> str:
        return self.name


def _valid_help() -> str:
    return "valid metrics: " + ", ".join(EXAMPLES) + " (any positive cut-off after @)"


def _suggest(text: str) -> str:
    family_text, at, k_text = text.partition("@")
    spellings = {**{f.lower(): f for f in FAMILIES}, **_ALIASES}
    close = difflib.get_close_matches(family_text.strip().lower(), list(spellings), n=1, cutoff=0.5)
    if not close:
        return ""
    family = spellings[close[0]]
    if family in _NO_K:
        return f"; did you mean {family!r}?"
    k = k_text.strip() if at and k_text.strip().isdigit() else ("10" if family in _NEEDS_K else "")
    return f"; did you mean {family + ('@' + k if k else '')!r}?"


def parse_metric(text: str) -> MetricSpec:
    """Parse one metric name; raise :class:`MetricNameError` listing the valid names if it is wrong."""
    raw = text.strip()
    family_text, at, k_text = raw.partition("@")
    family = _ALIASES.get(family_text.strip().lower())
    if family is None:
        raise MetricNameError(f"unknown metric {text!r}{_suggest(raw)}; {_valid_help()}")
    k: int | None = None
    if at:
        if family in _NO_K:
            raise MetricNameError(f"{family} takes no cut-off (got {text!r}); write {family!r}")
        k_text = k_text.strip()
        if not k_text.isdigit() or int(k_text) <= 0:
            raise MetricNameError(
                f"the cut-off in {text!r} must be a positive integer, e.g. {family}@10; {_valid_help()}"
            )
        k = int(k_text)
    elif family in _NEEDS_K:
        raise MetricNameError(f"{family} needs a cut-off (got {text!r}); write e.g. {family}@10")
    return MetricSpec(family, k)


def parse_metrics(text: str | list[str] | tuple[str, ...]) -> tuple[MetricSpec, ...]:
    """Parse a comma-separated list (or a sequence) of names, keeping order and dropping repeats."""
    items = text.split(",") if isinstance(text, str) else list(text)
    specs: list[MetricSpec] = []
    for item in items:
        if not item.strip():
            continue
        spec = parse_metric(item)
        if spec not in specs:
            specs.append(spec)
    if not specs:
        raise MetricNameError(f"no metric given; {_valid_help()}")
    return tuple(specs)


DEFAULT_METRICS: tuple[MetricSpec, ...] = parse_metrics("nDCG@10,R@5,R@10,R@100,P@5,MRR@10,MAP@100,Hit@5")
