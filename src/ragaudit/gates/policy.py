"""The release-gate policy file (``gates.toml``), parsed strictly: every problem named with its key,
its line and the fix.

```toml
[quality]
floors = { "nDCG@10" = 0.70, "R@5" = 0.85 }   # each metric's mean must reach its floor
max_regression = 0.02   # against --baseline, counted only when significant at alpha
alpha = 0.05            # significance level of the paired test, after Holm correction
# regression_metrics = ["nDCG@10", "R@5"]   # default: the floors' metrics, else all shared metrics
per_tenant_floors = { "acme" = { "nDCG@10" = 0.70 }, "*" = { "R@5" = 0.80 } }   # "*": every tenant
max_tenant_regression = 0.05   # no tenant's mean drops more against --baseline (when significant)
min_tenant_cases = 5    # a tenant with fewer answerable cases is "too few cases to judge"
[security]
max_leaks = 0           # cross-tenant chunks allowed (eval report + --audit reports)
# shared_tenants = ["public"]   # tenants whose documents every tenant may be served (not leaks)
# min_attributed = 0.95         # an --audit that allowed unattributed chunks verifies only above this share
# min_audit_requests = 3000     # a smaller --audit is too small to verify isolation (lowering it is said)
# min_probes_per_tenant = 24    # an --audit with fewer distinct probes of a tenant verifies nothing (likewise)
[operations]
latency_p95_ms = 800    # budget for the 95th-percentile query latency
max_error_rate = 0.01   # failed cases (errors and missing) / cases; 0 when absent
```

Every section and key is optional. Absent ``[security]`` still means ``max_leaks = 0``: a leak blocks
a release whatever the policy forgets to say, and tenant isolation that could not be verified (neither
the eval report nor an ``--audit`` report verified it) blocks it too unless ``allow_unverified = true``
(the gate then still says "not verified"). An absent latency budget is not checked; an absent
``max_error_rate`` is 0: a run whose cases failed never passes.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragaudit.data.toml_files import parse_toml_text, read_toml
from ragaudit.errors import InputError, MetricNameError, Problem, ValidationError
from ragaudit.gates.audit_probes import DEFAULT_MIN_PROBES_PER_TENANT
from ragaudit.gates.audit_size import DEFAULT_MIN_AUDIT_REQUESTS
from ragaudit.metrics.names import parse_metric

KEYS: dict[str, set[str]] = {
    "quality": {
        "floors",
        "max_regression",
        "alpha",
        "regression_metrics",
        "per_tenant_floors",
        "max_tenant_regression",
        "min_tenant_cases",
    },
    "security": {
        "max_leaks",
        "allow_unverified",
        "shared_tenants",
        "min_attributed",
        "min_audit_requests",
        "min_probes_per_tenant",
    },
    "operations": {"latency_p95_ms", "max_error_rate"},
}


@dataclass(frozen=True)
class GatePolicy:
    """Thresholds of the quality, security and operations gates (the self-test has none)."""

    floors: dict[str, float] = field(default_factory=dict)
    max_regression: float | None = None
    alpha: float = 0.05
    regression_metrics: tuple[str, ...] = ()
    max_leaks: int = 0
    allow_unverified: bool = False
    shared_tenants: tuple[str, ...] = ()
    """Tenants whose documents may be returned to every tenant: their chunks are not leaks."""
    min_attributed: float = 0.95
    """An ``--audit`` report with unattributed chunks verifies isolation only when at least this share of
    its returned chunks was attributed."""
    min_audit_requests: int = DEFAULT_MIN_AUDIT_REQUESTS
    """A clean ``--audit`` that sent fewer requests is too small to verify isolation (gates/audit_size.py)."""
    min_probes_per_tenant: int = DEFAULT_MIN_PROBES_PER_TENANT
    """A clean ``--audit`` with fewer distinct probes of a tenant verifies nothing (gates/audit_probes.py)."""
    latency_p95_ms: float | None = None
    max_error_rate: float | None = None
    per_tenant_floors: dict[str, dict[str, float]] = field(default_factory=dict)
    """``{tenant: {metric: floor}}``; the tenant ``"*"`` is every tenant of the report."""
    max_tenant_regression: float | None = None
    min_tenant_cases: int = 5
    source: str = "<defaults>"

    @property
    def by_tenant(self) -> bool:
        """Whether the policy sets a per-tenant check (the tenants gate runs only then)."""
        return bool(self.per_tenant_floors) or self.max_tenant_regression is not None

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "quality": {
                "floors": self.floors,
                "max_regression": self.max_regression,
                "alpha": self.alpha,
                "regression_metrics": list(self.regression_metrics),
                "per_tenant_floors": self.per_tenant_floors,
                "max_tenant_regression": self.max_tenant_regression,
                "min_tenant_cases": self.min_tenant_cases,
            },
            "security": {
                "max_leaks": self.max_leaks,
                "allow_unverified": self.allow_unverified,
                "shared_tenants": list(self.shared_tenants),
                "min_attributed": self.min_attributed,
                "min_audit_requests": self.min_audit_requests,
                "min_probes_per_tenant": self.min_probes_per_tenant,
            },
            "operations": {"latency_p95_ms": self.latency_p95_ms, "max_error_rate": self.max_error_rate},
        }


def _line_of(text: str, section: str, key: str | None) -> int | None:
    """The line of ``[section]`` (or of ``key`` inside it) in the TOML text, for error messages."""
    current = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        header = re.match(r"^\[\s*([^\]]+?)\s*\]", line)
        if header:
            current = header.group(1).strip().strip('"')
            if key is None and current == section:
                return number
            continue
        if current == section and key is not None and re.match(rf'^"?{re.escape(key)}"?\s*=', line):
            return number
    return None


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


class _Parser:
    def __init__(self, path: str, text: str) -> None:
        self.path, self.text = path, text
        self.problems: list[Problem] = []

    def fail(self, section: str, key: str | None, message: str, fix: str) -> None:
        where = f"[{section}]" + (f" {key}" if key else "")
        self.problems.append(
            Problem(self.path, _line_of(self.text, section, key), f"{where}: {message}", fix)
        )

    def number(
        self,
        section: str,
        table: Mapping[str, Any],
        key: str,
        *,
        low: float,
        high: float | None,
        example: str,
    ) -> float | None:
        if key not in table:
            return None
        value = table[key]
        ok = _is_number(value) and math.isfinite(value) and value >= low and (high is None or value <= high)
        if not ok:
            span = f"between {low} and {high}" if high is not None else f"at least {low}, finite"
            self.fail(section, key, f"must be a number {span} (got {value!r})", f"write {key} = {example}")
            return None
        return float(value)

    def metric(self, section: str, key: str, name: object) -> str | None:
        try:
            return parse_metric(str(name)).name
        except MetricNameError as exc:
            self.fail(section, key, str(exc), 'use a metric name such as "nDCG@10" or "R@5"')
            return None

    def unknown_keys(self, section: str, table: Mapping[str, Any]) -> None:
        for key in table:
            if key not in KEYS[section]:
                close = difflib.get_close_matches(key, sorted(KEYS[section]), n=1)
                hint = f"did you mean {close[0]!r}? " if close else ""
                self.fail(
                    section,
                    key,
                    f"unknown key {key!r}",
                    f"{hint}valid keys in [{section}]: {', '.join(sorted(KEYS[section]))}",
                )

    def quality(self, table: Mapping[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        floors_raw = table.get("floors", {})
        if not isinstance(floors_raw, Mapping):
            self.fail(
                "quality", "floors", "must be a table of metric = floor", 'floors = { "nDCG@10" = 0.70 }'
            )
            floors_raw = {}
        floors: dict[str, float] = {}
        for name, value in floors_raw.items():
            metric = self.metric("quality", "floors", name)
            if not _is_number(value) or not 0 <= value <= 1:
                self.fail(
                    "quality",
                    "floors",
                    f"the floor of {name!r} must be a number between 0 and 1 (got {value!r})",
                    f'write "{name}" = 0.70',
                )
            elif metric is not None:
                floors[metric] = float(value)
        out["floors"] = floors
        out["max_regression"] = self.number(
            "quality", table, "max_regression", low=0.0, high=1.0, example="0.02"
        )
        alpha = self.number("quality", table, "alpha", low=0.0, high=1.0, example="0.05")
        if alpha is not None and not 0 < alpha < 1:
            self.fail("quality", "alpha", f"must be strictly between 0 and 1 (got {alpha})", "alpha = 0.05")
        elif alpha is not None:
            out["alpha"] = alpha
        names = table.get("regression_metrics")
        if names is not None:
            if not isinstance(names, list) or not names:
                self.fail(
                    "quality",
                    "regression_metrics",
                    "must be a non-empty list of metric names",
                    'regression_metrics = ["nDCG@10", "R@5"]',
                )
            else:
                parsed = [self.metric("quality", "regression_metrics", n) for n in names]
                out["regression_metrics"] = tuple(n for n in parsed if n is not None)
        out["per_tenant_floors"] = self.tenant_floors(table.get("per_tenant_floors", {}))
        out["max_tenant_regression"] = self.number(
            "quality", table, "max_tenant_regression", low=0.0, high=1.0, example="0.05"
        )
        if "min_tenant_cases" in table:
            value = table["min_tenant_cases"]
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                self.fail(
                    "quality",
                    "min_tenant_cases",
                    f"must be a whole number >= 1 (got {value!r})",
                    "min_tenant_cases = 5",
                )
            else:
                out["min_tenant_cases"] = value
        return out

    def tenant_floors(self, raw: object) -> dict[str, dict[str, float]]:
        """``{tenant: {metric: floor}}`` from ``per_tenant_floors``; every bad entry is a problem."""
        fix = 'per_tenant_floors = { "acme" = { "nDCG@10" = 0.70 } }'
        if not isinstance(raw, Mapping):
            self.fail("quality", "per_tenant_floors", "must be a table of tenant = { metric = floor }", fix)
            return {}
        out: dict[str, dict[str, float]] = {}
        for tenant, floors in raw.items():
            if not isinstance(floors, Mapping) or not floors:
                self.fail(
                    "quality",
                    "per_tenant_floors",
                    f"tenant {tenant!r} must map to a non-empty table of metric = floor (got {floors!r})",
                    fix,
                )
                continue
            for name, value in floors.items():
                metric = self.metric("quality", "per_tenant_floors", name)
                if not _is_number(value) or not 0 <= value <= 1:
                    self.fail(
                        "quality",
                        "per_tenant_floors",
                        f"the floor of {name!r} for tenant {tenant!r} must be a number between 0 and 1 (got {value!r})",
                        fix,
                    )
                elif metric is not None:
                    out.setdefault(str(tenant), {})[metric] = float(value)
        return out

    def security(self, table: Mapping[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if "allow_unverified" in table:
            allow = table["allow_unverified"]
            if isinstance(allow, bool):
                out["allow_unverified"] = allow
            else:
                self.fail(
                    "security",
                    "allow_unverified",
                    f"must be true or false (got {allow!r})",
                    "allow_unverified = false (unverified tenant isolation blocks the release)",
                )
        if "shared_tenants" in table:
            names = table["shared_tenants"]
            if isinstance(names, list) and all(isinstance(n, str) and n.strip() for n in names):
                out["shared_tenants"] = tuple(sorted({n.strip() for n in names}))
            else:
                self.fail(
                    "security",
                    "shared_tenants",
                    f"must be a list of tenant ids (got {names!r})",
                    'shared_tenants = ["public"]',
                )
        share = self.number("security", table, "min_attributed", low=0.0, high=1.0, example="0.95")
        if share is not None:
            out["min_attributed"] = share
        if "min_audit_requests" in table:
            size = table["min_audit_requests"]
            if isinstance(size, bool) or not isinstance(size, int) or size < 0:
                self.fail(
                    "security",
                    "min_audit_requests",
                    f"must be a whole number >= 0 (got {size!r})",
                    f"min_audit_requests = {DEFAULT_MIN_AUDIT_REQUESTS} (audit-tenants' default --budget)",
                )
            else:
                out["min_audit_requests"] = size
        if "min_probes_per_tenant" in table:
            probes = table["min_probes_per_tenant"]
            if isinstance(probes, bool) or not isinstance(probes, int) or probes < 0:
                self.fail(
                    "security",
                    "min_probes_per_tenant",
                    f"must be a whole number >= 0 (got {probes!r})",
                    f"min_probes_per_tenant = {DEFAULT_MIN_PROBES_PER_TENANT} (audit-tenants' default "
                    "--probes-per-tenant)",
                )
            else:
                out["min_probes_per_tenant"] = probes
        if "max_leaks" not in table:
            return out
        value = table["max_leaks"]
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            self.fail(
                "security",
                "max_leaks",
                f"must be a whole number >= 0 (got {value!r})",
                "max_leaks = 0 (any cross-tenant leak blocks the release)",
            )
            return out
        return {**out, "max_leaks": value}

    def operations(self, table: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "latency_p95_ms": self.number(
                "operations", table, "latency_p95_ms", low=0.0, high=None, example="800"
            ),
            "max_error_rate": self.number(
                "operations", table, "max_error_rate", low=0.0, high=1.0, example="0.01"
            ),
        }


def parse_policy(raw: Mapping[str, Any], path: str = "<policy>", text: str = "") -> GatePolicy:
    """Build a :class:`GatePolicy` from parsed TOML; raise :class:`ValidationError` naming every problem."""
    parser = _Parser(path, text)
    values: dict[str, Any] = {}
    for section, table in raw.items():
        if section not in KEYS:
            close = difflib.get_close_matches(section, sorted(KEYS), n=1)
            parser.problems.append(
                Problem(
                    path,
                    _line_of(text, section, None),
                    f"unknown section [{section}]",
                    (f"did you mean [{close[0]}]? " if close else "")
                    + "sections are [quality], [security] and [operations]",
                )
            )
            continue
        if not isinstance(table, Mapping):
            parser.problems.append(
                Problem(
                    path, None, f"{section} must be a [{section}] table", f"write [{section}] on its own line"
                )
            )
            continue
        parser.unknown_keys(section, table)
        values.update(getattr(parser, section)(table))
    if parser.problems:
        raise ValidationError(parser.problems)
    return GatePolicy(**{k: v for k, v in values.items() if v is not None}, source=path)


def bundled_policy() -> GatePolicy:
    """The policy ``ragaudit init`` writes (``templates/init/gates.toml``): the lesson's thresholds."""
    from ragaudit.templates import template_text

    text = template_text("gates.toml")
    return parse_policy(parse_toml_text(text), "ragaudit:templates/init/gates.toml", text)


def load_policy(path: str | Path) -> GatePolicy:
    """Read and check a ``gates.toml``; every problem is an error naming file:line and the fix."""
    p = Path(path)
    try:
        raw, text = read_toml(
            p, what="policy file", fix="fix the syntax; see docs/gates.md for a complete example"
        )
    except InputError as exc:
        raise ValidationError([exc.problem]) from None
    return parse_policy(raw, str(p), text)
