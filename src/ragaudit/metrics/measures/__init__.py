"""The measure registry: every module of this package defines one ``MEASURE`` (a metric family).

Modules are found by name, so a new family is one new module here (plus its tests); nothing else
lists the families. :data:`MEASURES` is in each measure's ``order``.
"""

from __future__ import annotations

import importlib
import pkgutil

from ragaudit.metrics.measure import Measure


def _discover() -> tuple[Measure, ...]:
    found: list[Measure] = []
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        measure = getattr(module, "MEASURE", None)
        if not isinstance(measure, Measure):
            raise TypeError(f"{module.__name__} defines no MEASURE")
        found.append(measure)
    return tuple(sorted(found, key=lambda m: m.order))


MEASURES: tuple[Measure, ...] = _discover()
BY_FAMILY: dict[str, Measure] = {m.family: m for m in MEASURES}


def measure_of(family: str) -> Measure:
    """The measure of a canonical family name (as :class:`~ragaudit.metrics.names.MetricSpec` holds it)."""
    try:
        return BY_FAMILY[family]
    except KeyError:
        raise ValueError(f"no measure for {family!r}") from None
