"""Every reader of per-case metric values takes a number the same way (:func:`metric_value`): a
boolean is not a score. Before, ``compare.case_values`` read ``true`` as 1.0 while the tenant slices
skipped it, so a comparison and the slices of one report counted different cases."""

from __future__ import annotations

import math

import pytest

from ragaudit.evaluation.compare import LoadedReport, case_values, metric_value
from ragaudit.evaluation.slices import tenant_comparisons, tenant_slices


@pytest.mark.parametrize(
    ("value", "expected"), [(0.5, 0.5), (1, 1.0), (True, None), (False, None), (math.nan, None), ("1", None)]
)
def test_a_metric_value_is_a_finite_number_not_a_boolean(value: object, expected: float | None) -> None:
    assert metric_value(value) == expected


def _case(cid: str, tenant: str, value: object, status: str = "ok") -> dict[str, object]:
    return {"id": cid, "tenant_id": tenant, "status": status, "metrics": {"MRR": value}}


def test_comparisons_and_slices_skip_the_same_values() -> None:
    cases = [_case("a", "acme", 0.5), _case("b", "acme", True), _case("c", "globex", 1.0)]
    assert case_values(cases, "MRR") == {"a": 0.5, "c": 1.0}
    slices = {row["tenant"]: row for row in tenant_slices(cases, ["MRR"], resamples=10)["tenants"]}
    assert slices["acme"]["metrics"]["MRR"]["n"] == 1 and slices["acme"]["metrics"]["MRR"]["mean"] == 0.5


def test_a_tenant_with_only_unanswerable_cases_has_no_comparison_row() -> None:
    cases = [_case("a", "acme", 0.5), _case("b", "globex", None, "unanswerable")]
    report = LoadedReport("r", "r.json", {"per_case": cases})
    rows = tenant_comparisons(report, [report], ["MRR"], n_resamples=10)["rows"]
    assert [row["tenant"] for row in rows] == ["acme"]
