"""Failure attribution into the lesson's quadrants, on the planted answers shipped with the demo KB."""

from __future__ import annotations

import json

import pytest

from conftest import KB
from ragaudit.context.assemble import ChunkLookup, assemble_context
from ragaudit.context.attribution import LABELS, Verdict, attribute, summarize_attribution
from ragaudit.context.audit import missing_evidence
from ragaudit.context.claims import harvest_plan_names
from ragaudit.context.context_metrics import context_metrics
from ragaudit.context.groundedness import GroundednessChecker
from ragaudit.context.tokens import token_counter
from ragaudit.corpus.loading import Corpus, load_corpus
from ragaudit.data.loading import load_dataset
from ragaudit.data.schema import GoldenCase

REGEX = token_counter("regex")
PLANTED = [json.loads(line) for line in (KB / "answers_demo.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return load_corpus(KB / "corpus.jsonl")


@pytest.fixture(scope="module")
def cases() -> dict[str, GoldenCase]:
    return load_dataset(KB / "golden.jsonl").by_id()


@pytest.fixture(scope="module")
def checker(corpus: Corpus) -> GroundednessChecker:
    return GroundednessChecker(harvest_plan_names((d.title, d.text) for d in corpus.documents))


def verdict(
    corpus: Corpus, checker: GroundednessChecker, case: GoldenCase, ids: list[str], answer: str
) -> Verdict:
    lookup = ChunkLookup.for_corpus(corpus)
    context = assemble_context([(i, None) for i in ids], case, lookup, REGEX, k=None)
    result = checker.check(answer, context, query=case.query, reference=case.answer)
    texts = {d.doc_id: d.text for d in corpus.documents}
    return attribute(
        result,
        context,
        answerable=case.is_answerable(),
        evidence_present=context_metrics(context, case, texts=texts).evidence_present,
        missing_evidence=missing_evidence(case, context, lookup, texts),
    )


def test_the_lessons_warranty_cases_land_in_different_quadrants(
    corpus: Corpus, cases: dict[str, GoldenCase], checker: GroundednessChecker
) -> None:
    case = cases["acme-warranty-001"]
    answer = "The warranty on Fieldsense enterprise hardware is 12 months."
    obsolete = verdict(corpus, checker, case, ["acme-warranty-policy-v1"], answer)
    assert obsolete.label == "faithful_to_bad_context"
    assert "superseded chunk acme-warranty-policy-v1" in obsolete.reason and "24 months" in obsolete.reason
    pristine = verdict(corpus, checker, case, ["acme-warranty-policy-v2"], answer)
    assert pristine.label == "generation_failure"
    right = verdict(corpus, checker, case, ["acme-warranty-policy-v2"], "It is 24 months from delivery.")
    assert right.label == "success"
    nothing = verdict(corpus, checker, case, ["acme-shipping-policy"], "It is 36 months from delivery.")
    assert nothing.label == "retrieval_failure"


@pytest.mark.parametrize(
    "row", [r for r in PLANTED if "expect" in r], ids=lambda r: f"{r['id']}-{r['planted']}"
)
def test_every_planted_answer_gets_its_expected_quadrant(
    row: dict[str, object], corpus: Corpus, cases: dict[str, GoldenCase], checker: GroundednessChecker
) -> None:
    case = cases[str(row["id"])]
    ids = row["context_chunk_ids"]
    assert isinstance(ids, list)
    got = verdict(corpus, checker, case, ids, str(row["answer"]))
    assert got.label == row["expect"], got.reason


def test_the_planted_file_covers_every_quadrant_and_failure_kind() -> None:
    planted = [r for r in PLANTED if "expect" in r]
    assert {r["expect"] for r in planted} == set(LABELS)
    kinds = {r["planted"] for r in planted}
    assert {"wrong-number", "swapped-plan-tier", "superseded-version", "another-tenant"} <= kinds
    assert len(PLANTED) == 84  # one answer per golden case


def test_declining_is_attributed_by_whether_the_evidence_was_there(
    corpus: Corpus, cases: dict[str, GoldenCase], checker: GroundednessChecker
) -> None:
    case = cases["globex-refund-001"]
    decline = "I don't know based on the provided context."
    assert verdict(corpus, checker, case, ["globex-refund-policy-v2"], decline).label == "generation_failure"
    assert verdict(corpus, checker, case, ["globex-faq-general"], decline).label == "retrieval_failure"
    probe = cases["globex-unanswerable-003"]
    assert verdict(corpus, checker, probe, ["globex-pricing-basic-v1"], decline).label == "success"


def test_a_value_only_the_missed_evidence_states_is_a_retrieval_failure(
    corpus: Corpus, cases: dict[str, GoldenCase], checker: GroundednessChecker
) -> None:
    case = cases["globex-pricing-005"]  # users from the plan page, the extra-user price from the add-ons page
    answer = case.answer or ""
    partial = verdict(corpus, checker, case, ["globex-pricing-professional-v2"], answer)
    assert partial.label == "retrieval_failure"
    assert "evidence stating EUR 8 (globex-pricing-addons) was not in the context" in partial.reason
    both = ["globex-pricing-professional-v2", "globex-pricing-addons"]
    assert verdict(corpus, checker, case, both, answer).label == "success"
    invented = verdict(
        corpus, checker, case, ["globex-pricing-professional-v2"], "5 users; extra users cost EUR 11."
    )
    assert invented.label == "generation_failure"  # EUR 11 is nowhere, not even in the missed evidence


def test_summary_counts_every_label_and_keeps_a_few_examples() -> None:
    entries = [
        {"id": f"c{i}", "attribution": label, "attribution_reason": "r", "query": "q", "answer": "a"}
        for i, label in enumerate(["success"] * 5 + ["retrieval_failure", "generation_failure"])
    ]
    entries.append({"id": "none", "attribution": None})
    summary = summarize_attribution(entries)
    assert summary["counts"] == {
        "success": 5,
        "retrieval_failure": 1,
        "generation_failure": 1,
        "faithful_to_bad_context": 0,
    }
    assert len(summary["examples"]["success"]) == 3
    assert summary["examples"]["retrieval_failure"][0]["id"] == "c5"
    assert summary["rates"]["success"] == pytest.approx(5 / 7)
