"""A budget of ``inf`` checks nothing, so the policy refuses it (before: ``latency_p95_ms = inf``
parsed, and the operations gate printed ``[pass] latency p95 0.2 ms <= inf ms``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragaudit.errors import ValidationError
from ragaudit.gates.policy import load_policy


@pytest.mark.parametrize("line", ["latency_p95_ms = inf", "latency_p95_ms = nan", "max_error_rate = inf"])
def test_a_budget_that_is_not_finite_is_refused(tmp_path: Path, line: str) -> None:
    policy = tmp_path / "gates.toml"
    policy.write_text(f"[operations]\n{line}\n", encoding="utf-8")
    with pytest.raises(ValidationError) as refused:
        load_policy(policy)
    (problem,) = refused.value.problems
    assert problem.line == 2 and "must be a number" in str(problem)


def test_a_finite_budget_is_kept(tmp_path: Path) -> None:
    policy = tmp_path / "gates.toml"
    policy.write_text("[operations]\nlatency_p95_ms = 1e9\n", encoding="utf-8")
    assert load_policy(policy).latency_p95_ms == 1e9
