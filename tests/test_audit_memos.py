"""The tenant audit's per-field memos give what the uncached computation gives: exclusive terms picked
from a text's precomputed occurrences, a field's evidence whatever query was asked before, and a leak
checker's per-caller reading of an attribution."""

from __future__ import annotations

import random

import pytest

from conftest import KB
from ragaudit.corpus.chunkers import chunk_corpus, make_chunker
from ragaudit.corpus.loading import Corpus, load_corpus
from ragaudit.data.run import RankedItem
from ragaudit.security.exclusive_terms import ExclusiveTerms
from ragaudit.security.item_fields import ItemField
from ragaudit.security.leak_checker import LeakChecker
from ragaudit.security.ownership import OwnershipIndex
from ragaudit.security.probes import Probe
from ragaudit.text.words import normalize_text


@pytest.fixture(scope="module")
def kb() -> Corpus:
    return load_corpus(KB / "corpus.jsonl")


def fresh_index(kb: Corpus) -> OwnershipIndex:
    return OwnershipIndex.build(kb.documents, chunk_corpus(kb, make_chunker("whole")))


def scan(terms: ExclusiveTerms, words: list[str], query: str | None) -> dict[str, tuple[str, ...]]:
    """The one-pass scan ``find`` did before it was split into occurrences and a pick (the reference)."""
    out: dict[str, tuple[str, ...]] = {}
    echoed = f" {query} " if query else ""
    for start in range(len(words)):
        for size in range(1, terms.longest + 1):
            term = tuple(words[start : start + size])
            if len(term) < size:
                break
            tenant = terms.owner.get(term)
            if tenant is None or tenant in out:
                continue
            if echoed and f" {' '.join(term)} " in echoed:
                continue
            out[tenant] = term
    return out


def test_terms_picked_from_occurrences_are_the_scans_in_the_same_order(kb: Corpus) -> None:
    terms = fresh_index(kb).terms
    rng = random.Random(7)
    texts = [normalize_text(f"{d.title}\n{d.text}").split() for d in kb.documents]
    owned = [" ".join(t) for t in terms.owner]
    checked = 0
    for _ in range(300):
        words = rng.choice(texts) + rng.choice(texts)  # two tenants' terms in one text, sometimes
        start = rng.randrange(len(words))
        window = words[start : start + rng.randint(5, 120)]
        query = rng.choice([None, "", " ".join(window[:6]), rng.choice(owned), f"{rng.choice(owned)} refund"])
        expected = scan(terms, window, query)
        found = terms.find(window, query)
        assert list(found.items()) == list(expected.items())  # the first tenant's term comes first
        assert terms.pick(terms.occurrences(window), query) == expected
        checked += bool(expected)
    assert checked > 100  # most windows hold some tenant's term


def test_field_evidence_does_not_depend_on_what_was_asked_before(kb: Corpus) -> None:
    doc = kb.documents[3]
    others = [d for d in kb.documents if d.tenant_id != doc.tenant_id]
    terms = fresh_index(kb).terms
    foreign_term = " ".join(
        min(t for t, tenant in terms.owner.items() if tenant != doc.tenant_id and len(t) > 1)
    )
    fields = [
        ItemField("text", "text", f"{doc.title}\n{doc.text}", quoted=True),
        ItemField("metadata.see_also", "id", others[0].doc_id),
        ItemField("snippet", "text", f"{others[1].text[:200]} see {others[2].doc_id}", quoted=True),
        ItemField("summary", "text", f"{doc.text[:300]} and {foreign_term}", quoted=True),
        ItemField("title", "text", others[3].title),
    ]
    queries = [
        None,
        normalize_text(doc.text[:80]),
        normalize_text(others[1].text[:60]),
        foreign_term,
        "refund",
    ]
    warm = fresh_index(kb)
    for field in fields:
        for query in queries:
            warm.field_evidence(field, query)
    for field in fields:
        for query in reversed(queries):
            assert warm.field_evidence(field, query) == fresh_index(kb).field_evidence(field, query)
    assert any(e.method == "term" for e in warm.field_evidence(fields[3], None))
    assert not any(e.method == "term" for e in warm.field_evidence(fields[3], foreign_term))  # echoed


def test_a_checker_reads_each_attribution_per_caller(kb: Corpus) -> None:
    doc = kb.documents[0]
    item = RankedItem(doc.doc_id, 1.0, "nobody", doc.text, extra={"title": doc.title})
    probe = Probe("p1", "entity", doc.title, doc.tenant_id, doc.doc_id)
    callers = [doc.tenant_id, *sorted({d.tenant_id for d in kb.documents} - {doc.tenant_id}), "*", None]
    shared = LeakChecker(fresh_index(kb))
    for caller in callers + callers:
        alone = LeakChecker(fresh_index(kb))
        before = len(shared.leaks)
        assert shared.check(probe, caller, [item], doc.title) == alone.check(probe, caller, [item], doc.title)
        assert shared.leaks[before:] == alone.leaks
        assert (alone.mismatches, alone.unattributed_count) == (1, 0)
    assert shared.mismatches == 2 * len(callers) and len(shared.leaks) == 2 * (len(callers) - 1)
