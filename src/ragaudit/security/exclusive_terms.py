"""Tenant-exclusive terms: names and codes only one tenant's documents use, so finding one anywhere in a
response served to another tenant is that tenant's data.

A customer name in a ``facets`` list, a contract code in a ``suggest`` entry or a deal name in a debug
field is too short to attribute by content (:mod:`ragaudit.security.ownership` needs 5-word shingles
or a whole title), yet it is the owner's data. The terms are built from the corpus:

- **candidates**: in each document's title and text, every window of 2 to :data:`MAX_TERM_WORDS`
  consecutive capitalised words or codes (``Northwind Logistics``, ``Harbor Cold Storage``), and every
  single **code**: a token of :data:`MIN_CODE_CHARS` or more characters with letters *and* digits
  (``AC-7731``, ``GX-DISC-0412``). Single ordinary words (``Ledger``, ``Refunds``) are never terms:
  one word says too little, and a product name every tenant may use as a plain word is no evidence;
  numbers and dates without letters are never terms either (timestamps and counts are everywhere);
- **exclusive and rare**: the normalised phrase occurs (as consecutive words, anywhere, in any case) in
  the documents of exactly one tenant, and in at most :data:`MAX_TERM_DOCS` documents.

:meth:`ExclusiveTerms.find` looks every window of a value's normalised words up; terms that occur in
the query the caller sent are skipped (a service may echo the query, and the caller wrote it).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ragaudit.corpus.model import Document
from ragaudit.text.stopwords import STOPWORDS
from ragaudit.text.words import normalize_text

MAX_TERM_WORDS = 4
MAX_TERM_DOCS = 5
"""A phrase in more documents than this is not specific enough to be a term."""
MIN_CODE_CHARS = 5
_TOKEN = re.compile(r"[^\W_](?:[\w&'’.\-/]*[^\W_])?")


def _capitalised(token: str) -> bool:
    return token[0].isupper() or any(ch.isdigit() for ch in token)


def is_code(token: str) -> bool:
    """A token with letters and digits, long enough to be specific (``AC-7731``, ``INV2024X``)."""
    return (
        len(token) >= MIN_CODE_CHARS
        and any(ch.isdigit() for ch in token)
        and any(ch.isalpha() for ch in token)
    )


def _specific(window: tuple[str, ...]) -> bool:
    """A window of capitalised words worth a term: no bare number in it (dates, counts), and no stop
    word at either end (``The Starter``)."""
    return not any(w.isdigit() for w in window) and window[0] not in STOPWORDS and window[-1] not in STOPWORDS


def _candidates(text: str) -> set[tuple[str, ...]]:
    """Windows of capitalised words (2 to MAX_TERM_WORDS) and single codes, normalised."""
    found: set[tuple[str, ...]] = set()
    for line in text.splitlines():
        run: list[str] = []
        for token in [*_TOKEN.findall(line), ""]:
            if token and _capitalised(token):
                run.append(token)
                if is_code(token):
                    code = tuple(normalize_text(token).split())
                    if code:
                        found.add(code)
                continue
            words = normalize_text(" ".join(run)).split()
            for size in range(2, MAX_TERM_WORDS + 1):
                found.update(
                    w for i in range(len(words) - size + 1) if _specific(w := tuple(words[i : i + size]))
                )
            run = []
    return found


@dataclass(frozen=True)
class ExclusiveTerms:
    """Normalised term (a tuple of words) -> the one tenant whose documents use it."""

    owner: Mapping[tuple[str, ...], str]
    docs: Mapping[tuple[str, ...], str]
    """Term -> the first document (by id) that uses it."""
    longest: int = MAX_TERM_WORDS
    """Words in the longest term (a code such as ``GX-DISC-0412-B7`` can have more than a name)."""

    @classmethod
    def build(cls, documents: Iterable[Document], texts: Mapping[str, str]) -> ExclusiveTerms:
        """The terms of ``documents``; ``texts`` is each document's normalised title and text (what the
        ownership index already holds), used to count where a phrase occurs in any case."""
        docs = {d.doc_id: d for d in documents}
        by_word: dict[str, set[str]] = defaultdict(set)
        for doc_id, text in texts.items():
            for word in text.split():
                by_word[word].add(doc_id)
        owner: dict[tuple[str, ...], str] = {}
        first: dict[tuple[str, ...], str] = {}
        seen: set[tuple[str, ...]] = set()
        for doc in docs.values():
            for term in _candidates(f"{doc.title}\n{doc.text}"):
                if term in seen:
                    continue
                seen.add(term)
                holders = set.intersection(*(by_word.get(w, set()) for w in set(term)))
                if len(holders) > MAX_TERM_DOCS * 4:
                    continue
                phrase = f" {' '.join(term)} "
                users = sorted(d for d in holders if phrase in f" {texts[d]} ")
                if not users or len(users) > MAX_TERM_DOCS:
                    continue
                tenants = {docs[d].tenant_id for d in users}
                if len(tenants) == 1:
                    owner[term] = tenants.pop()
                    first[term] = users[0]
        return cls(owner, first, max((len(t) for t in owner), default=MAX_TERM_WORDS))

    def find(self, words: list[str], query: str | None = None) -> dict[str, tuple[str, ...]]:
        """The tenants whose terms occur in ``words`` (normalised), each with its first term; terms the
        normalised ``query`` holds are skipped."""
        return self.pick(self.occurrences(words), query)

    def occurrences(self, words: list[str]) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """Every ``(tenant, term)`` whose term occurs in ``words``, in reading order (by start, then
        length), each term once: what :meth:`find` picks from, whatever the query (memoise it per text)."""
        out: dict[tuple[str, ...], str] = {}
        for start in range(len(words)):
            for size in range(1, self.longest + 1):
                term = tuple(words[start : start + size])
                if len(term) < size:
                    break
                tenant = self.owner.get(term)
                if tenant is not None and term not in out:
                    out[term] = tenant
        return tuple((tenant, term) for term, tenant in out.items())

    @staticmethod
    def pick(
        occurrences: Sequence[tuple[str, tuple[str, ...]]], query: str | None = None
    ) -> dict[str, tuple[str, ...]]:
        """:meth:`find` from the :meth:`occurrences` of a text: each tenant's first term the normalised
        ``query`` does not hold."""
        out: dict[str, tuple[str, ...]] = {}
        echoed = f" {query} " if query else ""
        for tenant, term in occurrences:
            if tenant in out or (echoed and f" {' '.join(term)} " in echoed):
                continue
            out[tenant] = term
        return out


NO_TERMS = ExclusiveTerms({}, {}, 0)
"""No terms (an index without the documents' text)."""
