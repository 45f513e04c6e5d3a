"""Adversarial probes made from each tenant's own documents.

A probe is a query that should find one tenant's data and nothing else. The tenant audit issues every
probe as every *other* tenant: whatever a built-in or user retriever returns that the corpus says is
the probe tenant's (:mod:`ragaudit.security.ownership`) is a leak.

Kinds, in the order a tenant's budget is filled (every canary first, then round robin over the other
kinds, best first within each):

- ``canary``: a planted secret of the tenant (:mod:`ragaudit.security.canaries`), verbatim;
- ``confidential``: a sentence holding a confidentiality marker (confidential, internal, secret,
  proprietary, restricted, NDA, do not share), or the title of a document whose metadata says
  ``confidential: true``;
- ``entity``: a rare name or code only this tenant's documents use (``Northwind``, ``AC-7731``,
  ``BLUE LANTERN``): a run of words holding a capital letter or a digit, each word occurring in at
  most :data:`MAX_ENTITY_DOCS` documents, all of them the tenant's; ranked by summed idf;
- ``sentence``: each document's most distinctive sentence, scored by ``Σ idf(w)`` over its distinct
  words ``w`` that no other tenant uses, with ``idf(w) = ln(N / df(w))`` over all ``N`` documents;
- ``title``: document titles.

``generic`` probes (the lesson's "What are the confidential severance clauses?" and a few like it)
belong to no tenant and are issued as every tenant. Generation is deterministic: the same corpus
gives the same probes in the same order, in every process (scores are exact sums, never summed in a
set's hash order, and ties keep document order), whatever ``PYTHONHASHSEED`` is.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ragaudit.corpus.chunkers import split_sentences
from ragaudit.corpus.model import Document
from ragaudit.security.canaries import Canary
from ragaudit.text.words import normalize_text

PROBE_KINDS = ("canary", "confidential", "entity", "sentence", "title", "generic")
GENERIC_PROBES = (
    "What are the confidential severance clauses?",
    "confidential discount agreed with a customer",
    "executive employment agreement compensation and termination",
    "internal code name of the deal",
    "admin password and API keys",
)
MAX_ENTITY_DOCS = 3
DEFAULT_PER_TENANT = 24
_MARKERS = re.compile(
    r"\b(confidential|internal(ly)?|secret|proprietary|restricted|nda|do not (share|distribute))\b", re.I
)
_HEADING_LINE = re.compile(r"^[ \t]{0,3}#{1,6}[^\n]*$", re.MULTILINE)
_WORD = re.compile(r"[^\W_](?:[\w'\-]*[^\W_])?")
_MIN_WORDS, _MAX_WORDS = 5, 60


@dataclass(frozen=True)
class Probe:
    """One audit query, and the tenant (and document) it was made from."""

    id: str
    kind: str
    text: str
    tenant_id: str | None
    """The tenant whose documents the probe targets; ``None`` for generic probes."""
    doc_id: str | None = None

    def to_json(self) -> dict[str, str | None]:
        return {
            "id": self.id,
            "kind": self.kind,
            "text": self.text,
            "tenant": self.tenant_id,
            "doc_id": self.doc_id,
        }


@dataclass(frozen=True)
class _Candidate:
    kind: str
    text: str
    doc_id: str | None
    score: float


class _Stats:
    """Document and tenant frequencies of normalised words over the whole corpus."""

    def __init__(self, documents: Sequence[Document]) -> None:
        self.n = max(1, len(documents))
        self.df: dict[str, int] = defaultdict(int)
        self.tenants: dict[str, set[str]] = defaultdict(set)
        for doc in documents:
            for word in set(normalize_text(f"{doc.title}\n{doc.text}").split()):
                self.df[word] += 1
                self.tenants[word].add(doc.tenant_id)

    def idf(self, word: str) -> float:
        return math.log(self.n / max(1, self.df.get(word, 0)))

    def exclusive(self, word: str, tenant: str) -> bool:
        return self.tenants.get(word) == {tenant}


def _idf_sum(stats: _Stats, words: Iterable[str]) -> float:
    """``Σ idf(w)`` summed exactly (``math.fsum``), so the score does not depend on the order a set
    yields its words in (which changes with ``PYTHONHASHSEED``): probes are the same in every process."""
    return math.fsum(stats.idf(w) for w in words)


def sentences(text: str) -> list[str]:
    """The sentences of a document's text, markdown heading lines left out, whitespace collapsed."""
    body = _HEADING_LINE.sub("\n", text)
    return [" ".join(body[a:b].split()) for a, b in split_sentences(body, 0, len(body))]


def _sentence_candidates(doc: Document, stats: _Stats) -> list[_Candidate]:
    best: _Candidate | None = None
    found: list[_Candidate] = []
    for sentence in sentences(doc.text):
        words = set(normalize_text(sentence).split())
        if _MARKERS.search(sentence) and len(words) >= 3:
            found.append(_Candidate("confidential", sentence, doc.doc_id, _idf_sum(stats, words)))
        if not _MIN_WORDS <= len(words) <= _MAX_WORDS:
            continue
        score = _idf_sum(stats, (w for w in words if stats.exclusive(w, doc.tenant_id)))
        if score > 0 and (best is None or score > best.score):
            best = _Candidate("sentence", sentence, doc.doc_id, score)
    return found + ([best] if best is not None else [])


def _entity_candidates(doc: Document, stats: _Stats) -> list[_Candidate]:
    found: list[_Candidate] = []
    run: list[str] = []
    last_end = 0

    def close() -> None:
        if run:
            phrase = " ".join(run)
            score = _idf_sum(stats, normalize_text(phrase).split())
            found.append(_Candidate("entity", phrase, doc.doc_id, score))
            run.clear()

    for part in (doc.title, doc.text):  # a run never spans the title and the text
        for match in _WORD.finditer(part):
            token = match.group()
            words = normalize_text(token).split()
            rare = bool(words) and all(
                stats.exclusive(w, doc.tenant_id) and stats.df[w] <= MAX_ENTITY_DOCS for w in words
            )
            if rare and len(token) >= 3 and any(ch.isupper() or ch.isdigit() for ch in token):
                if run and match.start() - last_end > 1:
                    close()
                run.append(token)
                last_end = match.end()
            else:
                close()
        close()
    return found


def _tenant_candidates(
    tenant: str, docs: Sequence[Document], stats: _Stats, canaries: Iterable[Canary]
) -> dict[str, list[_Candidate]]:
    by_kind: dict[str, list[_Candidate]] = defaultdict(list)
    for canary in canaries:
        if canary.tenant_id == tenant:
            by_kind["canary"].append(_Candidate("canary", canary.secret, canary.doc_id, math.inf))
    for doc in docs:
        if doc.metadata.get("confidential") is True and doc.title:
            by_kind["confidential"].append(_Candidate("confidential", doc.title, doc.doc_id, math.inf))
        for candidate in _sentence_candidates(doc, stats) + _entity_candidates(doc, stats):
            by_kind[candidate.kind].append(candidate)
        if len(doc.title.split()) >= 2:
            by_kind["title"].append(_Candidate("title", doc.title, doc.doc_id, 0.0))
    for kind, items in by_kind.items():  # best first; ties in document order (a stable sort)
        by_kind[kind] = sorted(items, key=lambda c: -c.score)
    return by_kind


def _round_robin(queues: Sequence[Sequence[_Candidate]], budget: int) -> list[_Candidate]:
    """Every candidate of the first queue (the canaries), then one from each other queue in turn until
    ``budget`` probes are picked; a text already picked (after normalisation) is skipped."""
    picked: list[_Candidate] = []
    seen: set[str] = set()

    def take(candidate: _Candidate) -> bool:
        key = normalize_text(candidate.text)
        if not key or key in seen:
            return False
        seen.add(key)
        picked.append(candidate)
        return True

    for candidate in queues[0]:
        take(candidate)
    pending = [iter(queue) for queue in queues[1:]]
    while pending and len(picked) < budget:
        for queue in list(pending):
            if len(picked) >= budget:
                break
            if not any(take(candidate) for candidate in queue):  # consumes up to the first new text
                pending.remove(queue)
    return picked


def generate_probes(
    documents: Iterable[Document],
    *,
    canaries: Iterable[Canary] = (),
    per_tenant: int = DEFAULT_PER_TENANT,
    generic: Sequence[str] = GENERIC_PROBES,
) -> list[Probe]:
    """Up to ``per_tenant`` probes per tenant (canaries always included), then the ``generic`` ones."""
    if per_tenant < 1:
        raise ValueError(f"per_tenant must be at least 1 (got {per_tenant})")
    docs = list(documents)
    wanted = list(canaries)
    stats = _Stats(docs)
    by_tenant: dict[str, list[Document]] = defaultdict(list)
    for doc in docs:
        by_tenant[doc.tenant_id].append(doc)
    probes: list[Probe] = []
    for tenant in sorted(by_tenant):
        by_kind = _tenant_candidates(tenant, by_tenant[tenant], stats, wanted)
        picked = _round_robin([by_kind.get(kind, []) for kind in PROBE_KINDS], per_tenant)
        probes += [
            Probe(f"{tenant}/{c.kind}/{n}", c.kind, c.text, tenant, c.doc_id) for n, c in enumerate(picked)
        ]
    probes += [Probe(f"generic/{i}", "generic", text, None) for i, text in enumerate(generic)]
    return probes
