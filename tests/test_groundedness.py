"""Deterministic groundedness: value and name extraction, support by the context, plan binding, the
reference check; on the demo knowledge base with planted wrong numbers, swapped tiers, old versions."""

from __future__ import annotations

import pytest

from conftest import KB
from ragaudit.context.assemble import AssembledContext, ChunkLookup, assemble_context
from ragaudit.context.claims import (
    extract_mentions,
    extract_values,
    harvest_plan_names,
)
from ragaudit.context.groundedness import GroundednessChecker, compare_with_reference
from ragaudit.context.tokens import token_counter
from ragaudit.corpus.loading import Corpus, load_corpus
from ragaudit.data.loading import load_dataset
from ragaudit.data.schema import GoldenCase

REGEX = token_counter("regex")
# Reference answers that say more than their evidence does: an inference ("not on Starter or
# Professional" from "Enterprise only"), arithmetic ("double" 10% and 25%), and outside knowledge.
SAYS_MORE_THAN_ITS_EVIDENCE = {"acme-pricing-006", "initech-contract-002", "initech-contract-005"}


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return load_corpus(KB / "corpus.jsonl")


@pytest.fixture(scope="module")
def cases() -> dict[str, GoldenCase]:
    return load_dataset(KB / "golden.jsonl").by_id()


@pytest.fixture(scope="module")
def checker(corpus: Corpus) -> GroundednessChecker:
    return GroundednessChecker(harvest_plan_names((d.title, d.text) for d in corpus.documents))


def context_of(corpus: Corpus, case: GoldenCase, *ids: str) -> AssembledContext:
    return assemble_context([(i, None) for i in ids], case, ChunkLookup.for_corpus(corpus), REGEX, k=None)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("24 months", [("duration", 24.0, "month")]),
        ("a 24-month warranty", [("duration", 24.0, "month")]),
        ("2 years", [("duration", 2.0, "year")]),
        ("within two business days", [("duration", 2.0, "business day")]),
        ("3 weeks", [("duration", 3.0, "week")]),
        ("$1,450", [("money", 1450.0, "USD")]),
        ("EUR 2,290 per year", [("money", 2290.0, "EUR")]),
        ("49 euros", [("money", 49.0, "EUR")]),
        ("99.95% uptime, 27 percent off", [("percent", 99.95, ""), ("percent", 27.0, "")]),
        ("since 1 August 2023", [("date", "2023-08-01", "")]),
        ("on February 1, 2024", [("date", "2024-02-01", "")]),
        ("effective 2024-06-01", [("date", "2024-06-01", "")]),
        ("from May 2024", [("date", "2024-05", "")]),
        ("between 06:00 and 9pm", [("time", "06:00", ""), ("time", "21:00", "")]),
        ("50,000 API calls", [("number", 50000.0, "")]),
        ("50k calls", [("number", 50000.0, "")]),
        ("IP67 and AC-7731 and K2 and 2FA", []),
    ],
)
def test_values_are_normalised(text: str, expected: list[tuple[str, object, str]]) -> None:
    assert [(v.kind, v.amount, v.unit) for v in extract_values(text)] == expected


def test_values_compare_by_meaning() -> None:
    (a,) = extract_values("24 months")
    (b,) = extract_values("a 2-year term")
    (c,) = extract_values("12 months")
    assert a.same(b) and not a.same(c) and a.comparable(c)
    (calls,) = extract_values("50,000 API calls per month")
    (assets,) = extract_values("50,000 assets")
    (burst,) = extract_values("120 requests per minute")
    assert not calls.supported_by(assets)
    assert not calls.comparable(burst)
    (bare,) = extract_values("released in 2024")
    (date,) = extract_values("on 1 May 2024")
    assert bare.supported_by(date)
    (usd,) = extract_values("$49")
    (eur,) = extract_values("EUR 49")
    assert not usd.same(eur)


def test_mentions_skip_sentence_starts_and_values() -> None:
    mentions = extract_mentions(
        "Settings > Security: register a WebAuthn key with Okta. The Starter plan has IP67 sensors and SSO.",
        ["Starter"],
    )
    assert [(m.kind, m.text) for m in mentions] == [
        ("name", "Security"),
        ("name", "WebAuthn"),
        ("name", "Okta"),
        ("plan", "Starter"),
        ("code", "IP67"),
        ("acronym", "SSO"),
    ]


def test_plan_names_are_harvested_from_the_corpus(corpus: Corpus) -> None:
    plans = harvest_plan_names((d.title, d.text) for d in corpus.documents)
    assert plans == {"Starter", "Professional", "Enterprise", "Basic", "Scale", "Team"}


def test_reference_answers_are_grounded_in_their_evidence(
    corpus: Corpus, cases: dict[str, GoldenCase], checker: GroundednessChecker
) -> None:
    flagged = set()
    for case in cases.values():
        if not case.answer:
            continue
        result = checker.check(
            case.answer,
            context_of(corpus, case, *case.relevant_set()),
            query=case.query,
            reference=case.answer,
        )
        assert not result.declined
        assert result.correct is not False, case.id
        if not result.grounded:
            flagged.add(case.id)
    assert flagged == SAYS_MORE_THAN_ITS_EVIDENCE


def test_answers_checked_against_another_cases_evidence_are_ungrounded(
    corpus: Corpus, cases: dict[str, GoldenCase], checker: GroundednessChecker
) -> None:
    answered = [c for c in cases.values() if c.answer]
    checked = 0
    for i, case in enumerate(answered):
        other = answered[(i + 7) % len(answered)]
        if case.relevant_set() & other.relevant_set():
            continue
        result = checker.check(
            case.answer or "", context_of(corpus, other, *other.relevant_set()), query=case.query
        )
        assert not result.grounded, (case.id, other.id)
        checked += 1
    assert checked > 60


def test_a_planted_wrong_number_is_unsupported_and_contradicts_the_reference(
    corpus: Corpus, cases: dict[str, GoldenCase], checker: GroundednessChecker
) -> None:
    case = cases["acme-pricing-001"]
    context = context_of(corpus, case, "acme-pricing-professional-v3")
    result = checker.check(
        "The Professional plan includes 75,000 API calls per month.",
        context,
        query=case.query,
        reference=case.answer,
    )
    assert not result.grounded
    assert [(u.claim, u.kind) for u in result.unsupported] == [("75,000", "number")]
    assert result.correct is False
    assert result.reference is not None
    assert [(a.text, r.text) for a, r in result.reference.contradictions] == [("75,000", "50,000")]


def test_a_swapped_plan_tier_is_caught_by_plan_binding(
    corpus: Corpus, cases: dict[str, GoldenCase], checker: GroundednessChecker
) -> None:
    case = cases["acme-pricing-002"]
    context = context_of(corpus, case, "acme-pricing-professional-v3", "acme-pricing-starter-v2")
    right = checker.check(
        "The Professional plan includes 50,000 API calls per month.", context, query=case.query
    )
    assert right.grounded
    assert right.values[0].sources == ("acme-pricing-professional-v3",)
    swapped = checker.check(
        "The Starter plan includes 50,000 API calls per month.", context, query=case.query
    )
    (problem,) = swapped.unsupported
    assert problem.claim == "50,000"
    assert "another plan than Starter" in problem.reason
    assert swapped.values[0].other_plan_sources == ("acme-pricing-professional-v3",)


def test_the_question_binds_values_when_the_answer_names_no_plan(
    corpus: Corpus, cases: dict[str, GoldenCase], checker: GroundednessChecker
) -> None:
    case = cases["acme-pricing-004"]  # "How many sensors can one Starter site connect?"
    context = context_of(corpus, case, "acme-pricing-starter-v2", "acme-pricing-professional-v3")
    assert checker.check("Up to 10 sensors per site.", context, query=case.query).grounded
    wrong = checker.check("Up to 100 sensors per site.", context, query=case.query, reference=case.answer)
    assert not wrong.grounded and wrong.correct is False


def test_following_a_superseded_version_is_grounded_but_wrong(
    corpus: Corpus, cases: dict[str, GoldenCase], checker: GroundednessChecker
) -> None:
    case = cases["acme-warranty-001"]
    context = context_of(corpus, case, "acme-warranty-policy-v1")
    result = checker.check(
        "The warranty is 12 months from delivery.", context, query=case.query, reference=case.answer
    )
    assert result.grounded  # faithful to the (obsolete) context...
    assert result.correct is False  # ...and wrong: the current policy says 24 months
    assert result.values[0].sources == ("acme-warranty-policy-v1",)


def test_names_must_occur_in_the_context_or_the_question(
    corpus: Corpus, cases: dict[str, GoldenCase], checker: GroundednessChecker
) -> None:
    case = cases["acme-security-005"]
    context = context_of(corpus, case, "acme-security-sso")
    spelled = checker.check("Copy the ACS URL and Entity ID into Okta.", context, query=case.query)
    assert spelled.grounded  # ACS = Assertion Consumer Service, spelled out in the chunk
    made_up = checker.check("Copy the ACS URL into OneLogin and Okta.", context, query=case.query)
    assert [(u.claim, u.kind) for u in made_up.unsupported] == [("OneLogin", "name")]


def test_declines_are_not_checked_and_question_values_may_be_restated(
    corpus: Corpus, cases: dict[str, GoldenCase], checker: GroundednessChecker
) -> None:
    case = cases["acme-warranty-002"]  # "my gateway died after 14 months, is it still under warranty??"
    context = context_of(corpus, case, "acme-warranty-policy-v2")
    declined = checker.check("I don't know based on the provided context.", context, query=case.query)
    assert declined.declined and declined.grounded and not declined.values
    restated = checker.check(
        "After 14 months it is still covered if it was delivered on or after 1 February 2024.",
        context,
        query=case.query,
    )
    assert restated.grounded
    assert restated.values[0].in_question


def test_reference_comparison_rules() -> None:
    answer = extract_values("24 months, and batteries 6 months")
    assert compare_with_reference(answer, "24 months from delivery.").correct is True
    wrong = compare_with_reference(extract_values("12 months"), "24 months from delivery.")
    assert wrong.correct is False and wrong.contradictions
    incomplete = compare_with_reference(
        extract_values("burst of 120 requests per minute"), "50,000 API calls per month."
    )
    assert incomplete.correct is False and not incomplete.contradictions and incomplete.missing
    assert compare_with_reference(answer, "No, it is not covered.").correct is None


@pytest.mark.slow
def test_embedding_support_scores_paraphrases(corpus: Corpus, cases: dict[str, GoldenCase]) -> None:
    from ragaudit.retrieval.embedder import Embedder

    checker = GroundednessChecker(encoder=Embedder())
    case = cases["globex-warranty-002"]
    context = context_of(corpus, case, "globex-warranty-tap-v2")
    result = checker.check("Cracked displays are excluded from cover.", context, query=case.query)
    (sentence,) = result.sentences
    assert sentence.embedding is not None
    off_topic = checker.check("Invoices are sent by email every month.", context, query=case.query)
    assert off_topic.sentences[0].embedding is not None
    assert sentence.embedding > off_topic.sentences[0].embedding
    assert checker.info()["embedding_model"]
