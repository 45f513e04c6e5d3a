"""One metric family, described once: its name rule, reference function, bulk kernel and known answers.

A :class:`Measure` is everything ragaudit knows about a family (``nDCG``, ``R``, ...): the name
grammar (:mod:`ragaudit.metrics.names`), the bulk engine (:mod:`ragaudit.metrics.bulk`), the gate
self-test (:mod:`ragaudit.gates.selftest`) and the agreement tests all read it from the registry
(:mod:`ragaudit.metrics.measures`), so adding a family is one new module there plus its tests.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Literal

from ragaudit.metrics.matrix import FloatArray, Ranks
from ragaudit.metrics.pure import Gain

Cutoff = Literal["required", "optional", "none"]
PureFunction = Callable[[Sequence[str], Mapping[str, int], Set[str], "int | None", Gain], float]
"""``(ranking, grades, relevant set, k, gain) -> value`` for one query."""
Kernel = Callable[[Ranks, "int | None", Gain], FloatArray]
"""``(ranks of a batch, k, gain) -> value per row``."""


@dataclass(frozen=True)
class KnownAnswer:
    """``metric`` of ``ranking`` against ``grades`` (relevant = grade >= 1) must equal ``expected``."""

    name: str
    metric: str
    ranking: tuple[str, ...]
    grades: Mapping[str, int]
    expected: float
    why: str
    gain: Gain = "exponential"


@dataclass(frozen=True)
class TrecName:
    """trec_eval's name for the family: ``whole`` without a cut-off, ``cut`` + ``_k`` with one."""

    whole: str | None = None
    cut: str | None = None

    def of(self, k: int | None) -> str | None:
        """The trec_eval result key, e.g. ``ndcg_cut_10``; ``None`` where trec_eval has no equal."""
        if k is None:
            return self.whole
        return None if self.cut is None else f"{self.cut}_{k}"


@dataclass(frozen=True)
class Measure:
    """A metric family (see the module docstring)."""

    family: str
    """Canonical name, printed as ``family`` or ``family@k``."""
    meaning: str
    order: int
    """Where the family is listed (``ragaudit metrics``, the valid names of an error message)."""
    cutoff: Cutoff
    examples: tuple[str, ...]
    pure: PureFunction
    kernel: Kernel
    aliases: tuple[str, ...] = ()
    """Lower-case spellings besides the canonical name's own lower case."""
    needs_relevant: bool = False
    """Undefined (``nan`` in bulk, ``ValueError`` in the pure function) when no item is relevant."""
    reads_ideal: bool = False
    """The kernel reads :attr:`RankMatrix.ideal` up to its cut-off."""
    reads_judged: bool = False
    """The kernel reads :attr:`RankMatrix.judged`, :attr:`RankMatrix.length` and :attr:`RankMatrix.n_nonrelevant`."""
    reads_past_cutoff: bool = False
    """``family@k`` may read ranks below k (a condensed list: the top k *judged* items), so the bulk
    engine must not cut the rankings at the largest cut-off."""
    trec_eval: TrecName = TrecName()
    ranx: Callable[[int | None, int, Gain], str | None] = lambda k, threshold, gain: None
    """ranx's metric for ``(k, relevance threshold, gain)`` where it is defined identically."""
    ir_measures: Callable[[int | None], str | None] = lambda k: None
    """ir_measures' name where it is defined identically."""
    known_answers: tuple[KnownAnswer, ...] = ()

    @property
    def spellings(self) -> tuple[str, ...]:
        return (self.family.lower(), *self.aliases)

    def value(
        self, ranking: Sequence[str], grades: Mapping[str, int], relevant: Set[str], k: int | None, gain: Gain
    ) -> float:
        """The pure function's value, ``nan`` where it is undefined (as the bulk kernel gives it)."""
        if self.needs_relevant and not relevant:
            return math.nan
        return self.pure(ranking, grades, relevant, k, gain)


def level(threshold: int) -> str:
    """ranx's relevance-level suffix (``-l2``; nothing at its default level 1)."""
    return f"-l{threshold}" if threshold != 1 else ""


def required(k: int | None, family: str) -> int:
    """``k`` for a family whose name grammar demands a cut-off."""
    if k is None:
        raise ValueError(f"{family} needs a cut-off")
    return k
