"""Deterministic entity and constraint extraction, and the rewrite preservation check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import KB, write_lines
from ragaudit.errors import InputError
from ragaudit.experiments.entities import (
    Vocabulary,
    check_rewrite,
    extract_constraints,
    load_vocabulary,
)


def keys(query: str, vocabulary: Vocabulary | None = None) -> list[tuple[str, str]]:
    return [(c.kind, c.key) for c in extract_constraints(query, vocabulary)]


def lost(original: str, rewritten: str, vocabulary: Vocabulary | None = None) -> list[str]:
    return [c.key for c in check_rewrite(original, rewritten, vocabulary).lost]


# ------------------------------------------------------------------------------------------ the brief


def test_pro_plan_rewritten_to_enterprise_loses_pro_and_reports_the_swap() -> None:
    check = check_rewrite("Pro plan api limit koto?", "What is the API limit of the Enterprise plan?")
    assert not check.preserved
    assert [(c.kind, c.text, c.slot) for c in check.lost] == [("entity", "Pro", "plan")]
    assert [c.text for c in check.added] == ["Enterprise"]  # "API" was in the query, in lower case
    assert [(a.text, b.text) for a, b in check.swapped] == [("Pro", "Enterprise")]
    assert check.to_json()["swapped"] == [
        {
            "from": {"kind": "entity", "text": "Pro", "key": "pro", "slot": "plan"},
            "to": {"kind": "entity", "text": "Enterprise", "key": "enterprise", "slot": "plan"},
        }
    ]


def test_refund_within_30_days_rewritten_to_refund_policy_loses_the_duration() -> None:
    check = check_rewrite("refund within 30 days", "refund policy")
    assert [(c.kind, c.text, c.key) for c in check.lost] == [("duration", "30 days", "30 day")]
    assert check.added == () and check.swapped == ()


def test_a_rewrite_keeping_everything_is_preserved_whatever_the_spelling() -> None:
    assert lost("refund within 30 days", "30-day refund window") == []
    assert lost("refund within thirty days", "refund window of 30 days") == []
    assert lost("pro plan api limit how much?", "What is the API limit of the Pro plan?") == []
    check = check_rewrite("refund within 30 days", "refund within 14 days")
    assert [(a.key, b.key) for a, b in check.swapped] == [("30 day", "14 day")]


# ------------------------------------------------------------------------------------------ entities


def test_entities_capitalised_names_acronyms_and_words_before_plan() -> None:
    assert keys("Does Fieldsense support SSO and 2FA?") == [
        ("entity", "fieldsense"),
        ("entity", "sso"),
        ("entity", "2fa"),
    ]
    assert keys("pro plan api limit how much?") == [("entity", "pro")]
    assert keys("What does the iPhone app of Globex Ledger cost?") == [
        ("entity", "iphone"),
        ("entity", "globex"),
        ("entity", "ledger"),
    ]
    # a capitalised first word is an ordinary word unless a name or plan word follows it
    assert keys("Refund within 30 days") == [("duration", "30 day")]
    assert keys("Professional plan limits") == [("entity", "professional")]
    assert keys("What is there?") == []
    # possessives name the owner
    assert keys("the price of Acme's gateway") == [("entity", "acme")]


def test_vocabulary_terms_match_in_any_case_and_aliases_count_as_the_same_entity() -> None:
    vocab = Vocabulary.from_lines(["Professional | Pro   # the mid tier", "", "Deskflow Kiosk"])
    assert vocab.terms == (("Professional", "Pro"), ("Deskflow Kiosk",))
    assert keys("is the deskflow kiosk covered", vocab) == [("entity", "deskflow kiosk")]
    assert lost("Pro plan api limit koto?", "What is the API limit of the Professional plan?", vocab) == []
    check = check_rewrite("Pro plan api limit koto?", "What is the API limit of the Enterprise plan?", vocab)
    assert [c.key for c in check.lost] == ["professional"]
    assert [(a.text, b.text) for a, b in check.swapped] == [("Pro", "Enterprise")]
    # without the vocabulary "Pro" and "Professional" are different names
    assert lost("Pro plan limits", "Professional plan limits") == ["pro"]


def test_load_vocabulary_reads_aliases_and_names_file_and_line_of_a_bad_entry(tmp_path: Path) -> None:
    good = write_lines(tmp_path / "vocab.txt", ["# plans", "Professional | Pro", "Ledger"])
    assert load_vocabulary(good).terms == (("Professional", "Pro"), ("Ledger",))
    bad = write_lines(tmp_path / "bad.txt", ["Ledger", "Professional || Pro"])
    with pytest.raises(InputError) as err:
        load_vocabulary(bad)
    assert f"{bad}:2" in str(err.value) and "Professional | Pro" in str(err.value)


# ------------------------------------------------------------------------------------------ numbers


def test_numbers_money_percent_and_units_are_normalised() -> None:
    assert keys("$99 per month for 50,000 API calls") == [
        ("money", "USD 99/month"),
        ("number", "50000"),
        ("entity", "api"),
    ]
    assert keys("EUR 1,200 or 1200 euros") == [("money", "EUR 1200"), ("money", "EUR 1200")]
    assert keys("20 percent off, 10GB storage, 200 ms") == [
        ("percent", "20%"),
        ("quantity", "10 gb"),
        ("quantity", "200 ms"),
    ]
    assert keys("5 sensors per gateway, 50k calls") == [("quantity", "5 sensor"), ("quantity", "50000 call")]
    assert keys("2 business days") == [("duration", "2 business day")]


def test_numeric_constraints_survive_reformatting_but_not_a_changed_value_unit_or_rate() -> None:
    assert lost("$99 per month", "99 USD monthly") == []
    assert lost("20 percent discount", "discount of 20%") == []
    assert lost("50,000 calls a month", "50000 API calls per month") == []
    assert lost("50k calls", "50,000 calls") == []
    assert lost("$99 per month", "$99") == ["USD 99/month"]  # the rate is part of the price
    assert lost("5 sensors", "5 gateways") == ["5 sensor"]
    assert lost("2 weeks", "14 days") == ["2 week"]  # units are not converted, by design
    check = check_rewrite("costs $99", "costs $89")
    assert [(a.key, b.key) for a, b in check.swapped] == [("USD 99", "USD 89")]


def test_dates_in_any_spelling_compare_equal() -> None:
    for spelling in ("2024-03-01", "March 1, 2024", "1 March 2024", "1st of March 2024"):
        assert keys(f"changes on {spelling}") == [("date", "2024-03-01")], spelling
    assert keys("March 2024 and Q3 2024 and FY2023 and last year") == [
        ("date", "2024-03"),
        ("date", "2024-q3"),
        ("date", "fy2023"),
        ("date", "last year"),
    ]
    assert keys("May I get a refund?") == []  # the verb, not the month
    assert lost("price change in March 2024", "price change 2024-03") == []
    check = check_rewrite("revenue in Q3 2024", "revenue in Q4 2024")
    assert [(a.key, b.key) for a, b in check.swapped] == [("2024-q3", "2024-q4")]


def test_comparisons_are_kept_apart_from_negations() -> None:
    assert keys("at least 10 users before March 2024") == [
        ("comparison", ">= 10 user"),
        ("quantity", "10 user"),
        ("comparison", "< 2024-03"),
        ("date", "2024-03"),
    ]
    assert keys("no more than 5 sensors") == [("comparison", "<= 5 sensor"), ("quantity", "5 sensor")]
    assert lost("plans with at least 10 users", "plans with 10 users") == [">= 10 user"]


# ------------------------------------------------------------------------------------------ negations


def test_negations_carry_their_scope_and_survive_only_with_it() -> None:
    assert keys("refunds without a receipt except for hardware") == [
        ("negation", "not receipt"),
        ("negation", "not hardware"),
    ]
    assert lost("refund without a receipt", "refund with a receipt") == ["not receipt"]
    assert lost("refund without a receipt", "refund if no receipt is available") == []
    assert lost("I don't need 2FA", "no 2FA needed") == []
    assert lost("why is it not working", "why does it fail") == ["not working"]


# ------------------------------------------------------------------------------------------ determinism


def test_extraction_is_deterministic_over_the_demo_queries() -> None:
    queries = [json.loads(line)["query"] for line in (KB / "golden.jsonl").read_text().splitlines()]
    first = [extract_constraints(q) for q in queries]
    assert [extract_constraints(q) for q in queries] == first
    for query, found in zip(queries, first, strict=True):
        for c in found:
            assert query[c.start : c.end] == c.text or c.kind == "entity"
        assert check_rewrite(query, query).preserved  # a query always keeps its own constraints
