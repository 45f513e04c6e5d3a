"""The ground-floor text package: one key set for the same value across answer claims and query constraints."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from ragaudit.experiments.entities import extract_constraints
from ragaudit.text.stopwords import STOPWORDS
from ragaudit.text.tables import MONTHS, in_base_unit, time_unit
from ragaudit.text.values import extract_values
from ragaudit.text.words import contains_phrase, normalize_text

TEXT_PACKAGE = Path(__file__).resolve().parents[1] / "src" / "ragaudit" / "text"


@pytest.mark.parametrize(
    ("written", "amount", "unit"),
    [
        ("2 years", 2, "year"),
        ("30-day", 30, "day"),
        ("two business days", 2, "business day"),
        ("3 weeks", 3, "week"),
        ("$99", 99, "USD"),
        ("49 euros", 49, "EUR"),
    ],
)
def test_claims_and_query_constraints_share_one_key(written: str, amount: int, unit: str) -> None:
    (value,) = extract_values(written)
    assert (value.amount, value.unit) == (float(amount), unit)
    (constraint,) = extract_constraints(written)
    assert (constraint.value, constraint.unit) == (str(amount), unit)


def test_durations_compare_in_base_units() -> None:
    assert in_base_unit(2, "year") == (24, "month")
    assert in_base_unit(3, "week") == (21, "day")
    assert in_base_unit(2, "business day") == (2, "day")
    (years,) = extract_values("2 years")
    (months,) = extract_values("24 months")
    assert years.same(months) and years.base() == (24.0, "month")
    assert time_unit("hrs") == "hour" and time_unit("h") == "hour"


def test_one_month_table_and_one_stopword_list() -> None:
    assert MONTHS["sept"] == MONTHS["september"] == 9
    assert {"the", "not", "within", "yourselves"} <= STOPWORDS
    assert normalize_text("Ａcme—Corp!") == "acme corp"
    assert contains_phrase("The ACME-corp key", "acme corp")


def test_text_package_imports_only_the_ground_floor() -> None:
    allowed = {"ragaudit.text", "ragaudit.errors"}
    for path in TEXT_PACKAGE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("ragaudit"):
                assert any(node.module == a or node.module.startswith(a + ".") for a in allowed), (
                    path.name,
                    node.module,
                )
