"""Who owns a returned chunk, decided from the corpus, never from the label the retriever attaches.

A retriever's ``tenant_id`` on a chunk is a claim. A service that relabels another tenant's chunk as
the caller's would pass any check that trusts the claim, so the audit looks the chunk up itself:

1. **by id**: a document id of the corpus, a chunk id the pipeline made (``{doc_id}#{n}``), or any id
   registered with the index's chunks. The corpus loader guarantees ids are unique across tenants,
   so an id names exactly one owner.
2. **by content**, whenever the chunk carries text: the text is normalised (Unicode NFKC, case
   folded, every run of non-alphanumeric characters turned into one space) and cut into word
   shingles of :data:`SHINGLE_WORDS` words. A document *contains* the chunk when

       containment(chunk, doc) = |shingles(chunk) ∩ shingles(doc)| / |shingles(chunk)|

   (text shorter than a shingle must appear verbatim, as a normalised substring). The content owners
   are the tenants of the documents whose containment is at least :data:`MIN_CONTAINMENT` and within
   :data:`OWNER_MARGIN` of the best one: a chunk copied from one tenant's document belongs to that
   tenant even when another tenant's document, written from the same template, shares most of it.
   This catches a foreign chunk returned under an unknown or made-up id, and foreign text returned
   under one of the caller's own ids.
3. **by canary**: a planted secret (see :mod:`ragaudit.security.canaries`) found in the text names
   its tenant as an owner, whatever the id and the rest of the text say.

4. **by every other field** (:meth:`OwnershipIndex.attribute_item`, :mod:`ragaudit.security.item_fields`):
   ``source_id`` and id-named values anywhere in ``metadata`` or the extra fields (``doc_id``,
   ``source_ids``, ...) by id (document id, chunk id or the documents' ``source_id``); titles,
   snippets, highlights and every other text value by content as in 2 (a text shorter than a shingle
   counts only when it is a whole document title, or, under a key that quotes documents such as
   ``highlight``, when it has 2 words or more and occurs verbatim); canaries in any of them; ids in
   lists of corpus ids under any key; tenant-exclusive terms (:mod:`ragaudit.security.exclusive_terms`)
   in any text; the decoded forms of encoded values. The values *beside* a response's chunk list go
   through the same :meth:`OwnershipIndex.field_evidence` (:mod:`ragaudit.security.response_fields`).

**Templated near-duplicates** are told apart by the parts that differ between tenants. When the
caller's own documents are among the best-containing ones (every tenant has the same template with
other names and numbers), the chunk is still foreign when the best-containing document of another
tenant holds shingles of the chunk that *no* document of the caller holds (the other tenant's
names and numbers): :attr:`TextMatch.foreign`. The caller's own variant holds no such shingle, and
neither does boilerplate the caller's own corpus really contains, so neither is ever a leak.

A chunk is **foreign** to a caller (a leak) when any of its fields is: an id that names another
tenant, text contained only in other tenants' documents (or another tenant's variant of a template),
another tenant's canary. Text that several tenants share verbatim (boilerplate) is not a leak for any
of them. A chunk no field attributes is **unattributed**: it cannot be shown to be a leak, and the
audit reports it as *not verified* (``ragaudit audit-tenants`` exits 1 on it unless
``--allow-unattributed``).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ragaudit.corpus.model import Chunk, Document
from ragaudit.data.run import RankedItem
from ragaudit.security.canaries import Canary
from ragaudit.security.exclusive_terms import NO_TERMS, ExclusiveTerms
from ragaudit.security.item_fields import ItemField, item_fields, strip_markup
from ragaudit.security.ownership_evidence import (
    MIN_CONTAINMENT,
    NO_MATCH,
    OWNER_MARGIN,
    PASSAGE_SHINGLES,
    SHINGLE_WORDS,
    Attribution,
    FieldEvidence,
    TextMatch,
)
from ragaudit.security.ownership_ids import _ID_TOKEN, ID_SEPARATORS, base_document_id, is_distinctive_id
from ragaudit.security.query_echo import outside_query
from ragaudit.text.words import normalize_text, shingles

__all__ = [
    "ID_SEPARATORS",
    "MIN_CONTAINMENT",
    "NO_MATCH",
    "OWNER_MARGIN",
    "PASSAGE_SHINGLES",
    "SHINGLE_WORDS",
    "Attribution",
    "FieldEvidence",
    "OwnershipIndex",
    "TextMatch",
    "base_document_id",
    "is_distinctive_id",
]


_QueryFree = tuple[
    tuple[FieldEvidence, ...], FieldEvidence | None, tuple[tuple[str, tuple[str, ...]], ...] | None
]
"""A field's evidence that does not depend on the query (:meth:`OwnershipIndex._field_query_free`)."""


@dataclass
class OwnershipIndex:
    """Chunk ownership over a corpus (see the module docstring). Build with :meth:`build`."""

    documents: Mapping[str, Document]
    chunk_docs: Mapping[str, str]
    canaries: tuple[Canary, ...] = ()
    min_containment: float = MIN_CONTAINMENT
    _words: dict[str, list[str]] = field(default_factory=dict, repr=False)
    _texts: dict[str, str] = field(default_factory=dict, repr=False)
    _by_shingle: dict[tuple[str, ...], list[str]] = field(default_factory=dict, repr=False)
    _by_word: dict[str, set[str]] = field(default_factory=dict, repr=False)
    _by_source: dict[str, frozenset[str]] = field(default_factory=dict, repr=False)
    _by_title: dict[str, frozenset[str]] = field(default_factory=dict, repr=False)
    _memo: dict[tuple[str, str | None], Attribution] = field(default_factory=dict, repr=False)
    _item_memo: dict[tuple[object, ...], Attribution] = field(default_factory=dict, repr=False)
    _text_memo: dict[str, TextMatch] = field(default_factory=dict, repr=False)
    _field_memo: dict[tuple[ItemField, str | None], tuple[FieldEvidence, ...]] = field(
        default_factory=dict, repr=False
    )
    _query_free: dict[ItemField, _QueryFree] = field(default_factory=dict, repr=False)
    _terms: ExclusiveTerms | None = field(default=None, repr=False)

    @classmethod
    def build(
        cls,
        documents: Iterable[Document],
        chunks: Iterable[Chunk] = (),
        canaries: Iterable[Canary] = (),
        min_containment: float = MIN_CONTAINMENT,
    ) -> OwnershipIndex:
        """Index ``documents`` (title and text), the ids of ``chunks`` made from them, and ``canaries``."""
        docs = {d.doc_id: d for d in documents}
        index = cls(docs, {c.chunk_id: c.doc_id for c in chunks}, tuple(canaries), min_containment)
        by_shingle: dict[tuple[str, ...], list[str]] = defaultdict(list)
        by_word: dict[str, set[str]] = defaultdict(set)
        by_source: dict[str, set[str]] = defaultdict(set)
        by_title: dict[str, set[str]] = defaultdict(set)
        for doc in docs.values():
            text = normalize_text(f"{doc.title}\n{doc.text}")
            words = text.split()
            index._texts[doc.doc_id] = text
            index._words[doc.doc_id] = words
            for shingle in shingles(words, SHINGLE_WORDS):
                by_shingle[shingle].append(doc.doc_id)
            for word in words:
                by_word[word].add(doc.doc_id)
            if doc.source_id:
                by_source[doc.source_id].add(doc.tenant_id)
            if normalize_text(doc.title):
                by_title[normalize_text(doc.title)].add(doc.doc_id)
        index._by_shingle = dict(by_shingle)
        index._by_word = dict(by_word)
        index._by_source = {k: frozenset(v) for k, v in by_source.items()}
        index._by_title = {k: frozenset(v) for k, v in by_title.items()}
        return index

    @property
    def terms(self) -> ExclusiveTerms:
        """The tenant-exclusive terms of the indexed documents (built on first use: about 0.2 ms of CPU
        per document; none for an index of ids alone)."""
        if self._terms is None:
            self._terms = (
                ExclusiveTerms.build(self.documents.values(), self._texts) if self._texts else NO_TERMS
            )
        return self._terms

    @property
    def tenants(self) -> tuple[str, ...]:
        return tuple(sorted({d.tenant_id for d in self.documents.values()}))

    def document_of(self, chunk_id: str) -> Document | None:
        """The document an id names: a document id, a registered chunk id, ``D#n`` of document ``D``, or
        a distinctive document id followed by a separator and a suffix of the service's own
        (``D:c0``, ``D::2``, ``D/chunks/3``: :func:`is_distinctive_id`)."""
        doc_id = self.chunk_docs.get(chunk_id, chunk_id)
        doc = self.documents.get(doc_id)
        if doc is None:
            base = base_document_id(chunk_id)
            doc = self.documents.get(base) if base is not None else None
        if doc is None:
            doc = self._prefix_document(chunk_id)
        return doc

    def _prefix_document(self, value: str) -> Document | None:
        """The document whose distinctive id is the longest prefix of ``value`` ending at a separator."""
        for end in range(len(value) - 1, 5, -1):
            if value[end] in ID_SEPARATORS and value[end - 1] not in ID_SEPARATORS:
                doc = self.documents.get(value[:end])
                if doc is not None and is_distinctive_id(doc.doc_id):
                    return doc
        return None

    def embedded_ids(self, text: str) -> tuple[list[Document], str]:
        """The documents named by distinctive ids inside a longer text: a URL path or query
        (``https://kb/docs/D?ref=1``), prose (``boosted by D``), a composite id (``D::0``); and the text
        without those ids (the words of an id are no terms: ``acme-security-sso`` names a document, it
        does not quote another tenant's "Security SSO")."""
        found: dict[str, Document] = {}

        def take(token: re.Match[str]) -> str:
            value = token.group(0)
            doc = self.documents.get(self.chunk_docs.get(value, value)) or self.document_of(value)
            if doc is None or not is_distinctive_id(doc.doc_id):
                return value
            found.setdefault(doc.doc_id, doc)
            return " "

        rest = _ID_TOKEN.sub(take, text)
        return list(found.values()), rest

    def match_text(self, content: str) -> TextMatch:
        """Where ``content`` is found in the corpus (see the module docstring; memoised)."""
        found = self._text_memo.get(content)
        if found is None:
            found = self._match(content)
            self._text_memo[content] = found
        return found

    def _match(self, content: str) -> TextMatch:
        words = normalize_text(strip_markup(content)).split()
        if not words:
            return NO_MATCH
        if len(words) < SHINGLE_WORDS:
            candidates = set.intersection(*(self._by_word.get(w, set()) for w in set(words)))
            phrase = " ".join(words)
            scores = {d: 1.0 for d in candidates if f" {phrase} " in f" {self._texts[d]} "}
            own: list[tuple[str, ...]] = []
        else:
            own = list(dict.fromkeys(_ordered_shingles(words)))
            counts: dict[str, int] = defaultdict(int)
            for shingle in own:
                for doc_id in self._by_shingle.get(shingle, ()):
                    counts[doc_id] += 1
            scores = {d: n / len(own) for d, n in counts.items()}
        if not scores:
            return TextMatch(frozenset(), None, 0.0)
        best = max(sorted(scores), key=lambda d: scores[d])
        floor = max(self.min_containment, scores[best] - OWNER_MARGIN)
        best_docs: dict[str, str] = {}
        for doc_id in sorted(scores):
            tenant = self.documents[doc_id].tenant_id
            if scores[doc_id] >= floor and scores[doc_id] > scores.get(best_docs.get(tenant, ""), -1.0):
                best_docs[tenant] = doc_id
        owners = frozenset(best_docs)
        if not own:  # a short verbatim text: no parts to compare
            return TextMatch(owners, best, scores[best])
        held, best_held = self._parts(own, best_docs)
        if not owners:  # no one document holds it: passages of several (a merged context block)
            owners, best_held = self._merged_owners(held, len(own))
        return TextMatch(owners, best, scores[best], held, best_held)

    def _merged_owners(
        self, held: Mapping[str, frozenset[int]], size: int
    ) -> tuple[frozenset[str], dict[str, frozenset[int]]]:
        """The tenants whose documents *together* hold at least the minimum containment of a text no one
        document holds (and within the margin of the best such tenant), each with what it holds."""
        share = {t: len(p) / size for t, p in held.items()}
        if not share or max(share.values()) < self.min_containment:
            return frozenset(), {}
        floor = max(self.min_containment, max(share.values()) - OWNER_MARGIN)
        owners = frozenset(t for t, s in share.items() if s >= floor)
        return owners, {t: held[t] for t in owners}

    def _parts(
        self, own: list[tuple[str, ...]], best_docs: Mapping[str, str]
    ) -> tuple[dict[str, frozenset[int]], dict[str, frozenset[int]]]:
        """Which of a text's shingles (by position) each tenant's documents hold, and each owner's best
        document: what tells templated variants apart (only computed when several tenants own a text)."""
        held: dict[str, set[int]] = defaultdict(set)
        best: dict[str, set[int]] = defaultdict(set)
        wanted = {doc_id: tenant for tenant, doc_id in best_docs.items()}
        for position, shingle in enumerate(own):
            for doc_id in self._by_shingle.get(shingle, ()):
                held[self.documents[doc_id].tenant_id].add(position)
                if doc_id in wanted:
                    best[wanted[doc_id]].add(position)
        return {t: frozenset(p) for t, p in held.items()}, {t: frozenset(p) for t, p in best.items()}

    def content_match(self, content: str) -> tuple[frozenset[str], str | None, float | None]:
        """``(content owners, best document, best containment)`` of a text; ``(∅, None, None)`` for no text."""
        found = self.match_text(content)
        return found.owners, found.doc_id, found.containment

    def canaries_in(self, content: str) -> tuple[Canary, ...]:
        text = f" {normalize_text(content)} "
        return tuple(c for c in self.canaries if f" {normalize_text(c.secret)} " in text)

    def attribute(self, chunk_id: str, content: str | None = None) -> Attribution:
        """Decide who owns a returned chunk from its id and, when given, its text (memoised)."""
        key = (chunk_id, content)
        found = self._memo.get(key)
        if found is not None:
            return found
        doc = self.document_of(chunk_id)
        match: TextMatch | None = None
        canaries: tuple[Canary, ...] = ()
        if content and self._texts:  # an index of ids alone (a built-in pipeline's) checks no text
            match = self.match_text(content)
            canaries = self.canaries_in(content)
        found = Attribution(
            doc.tenant_id if doc is not None else None,
            match.owners if match is not None else frozenset(),
            doc.doc_id if doc is not None else (match.doc_id if match is not None else None),
            match.containment if match is not None else None,
            canaries,
            match,
        )
        self._memo[key] = found
        return found

    def attribute_item(self, item: RankedItem, query: str | None = None) -> Attribution:
        """:meth:`attribute` of the id and content, plus every other field of the chunk (source id,
        title, snippet, highlight, metadata values at any depth, decoded forms; memoised). ``query`` is
        the text the caller sent: its echo in a field is no evidence (:mod:`~ragaudit.security.query_echo`),
        nor are exclusive terms that occur in it."""
        extra = item_fields(item)
        key = (item.chunk_id, item.content, extra, query)
        found = self._item_memo.get(key)
        if found is None:
            asked = normalize_text(query) if query else None
            base = self.attribute(item.chunk_id, item.content)
            evidence = tuple(
                e
                for f in extra
                for piece in (outside_query(f, asked) if asked else (f,))
                for e in self.field_evidence(piece, asked)
            )
            found = Attribution(
                base.id_owner,
                base.content_owners,
                base.doc_id,
                base.containment,
                base.canaries,
                base.match,
                evidence,
            )
            self._item_memo[key] = found
        return found

    def _id_evidence(self, path: str, value: str) -> FieldEvidence | None:
        doc = self.document_of(value)
        if doc is not None:
            return FieldEvidence(path, "id", frozenset({doc.tenant_id}), doc.doc_id, value)
        sources = self._by_source.get(value)
        return FieldEvidence(path, "id", sources, None, value) if sources else None

    def _reads_as_id(self, item: ItemField) -> bool:
        """A text value that is a corpus id: in a list whose strings are all corpus ids (``see_also``),
        or alone when it is distinctive (letters and a digit or separator, 6+ characters), so a
        ``"page": "2"`` never names a document called ``2``."""
        value = item.value
        if not value or len(value) > 200 or any(ch.isspace() for ch in value):
            return False
        if self.document_of(value) is None and value not in self._by_source:
            return False
        if item.siblings and len(item.siblings) > 1:
            return all(self.document_of(v) is not None or v in self._by_source for v in item.siblings)
        return is_distinctive_id(value)

    def field_evidence(self, item: ItemField, query: str | None = None) -> tuple[FieldEvidence, ...]:
        """What the corpus says of one field (empty: nothing): by id, canary, content or title, and the
        tenant-exclusive terms it holds (:mod:`~ragaudit.security.exclusive_terms`) that the normalised
        ``query`` does not (memoised)."""
        key = (item, query)
        found = self._field_memo.get(key)
        if found is None:
            found = self._field_all(item, query)
            self._field_memo[key] = found
        return found

    def _field_all(self, item: ItemField, query: str | None) -> tuple[FieldEvidence, ...]:
        found, main, occurrences = self._field_query_free(item)
        if occurrences is None:  # an id
            return found
        terms = self.terms.pick(occurrences, query)
        extra = {t: term for t, term in terms.items() if main is None or t not in main.owners}
        if extra:
            doc = self.terms.docs.get(next(iter(extra.values())))
            return (*found, FieldEvidence(item.path, "term", frozenset(extra), doc, item.value))
        return found

    def _field_query_free(self, item: ItemField) -> _QueryFree:
        """What :meth:`_field_all` finds whatever the query (memoised per field: an audit sends each
        probe dozens of times and gets the same fields back): the evidence by id, canary, content,
        title and embedded ids, the main one, and the exclusive terms' occurrences (``None``: an id)."""
        known = self._query_free.get(item)
        if known is not None:
            return known
        if item.kind == "id" or self._reads_as_id(item):
            by_id = self._id_evidence(item.path, item.value)
            known = ((by_id,) if by_id is not None else (), None, None)
        else:
            main = self._field(item)
            found = [main] if main is not None else []
            docs, rest = self.embedded_ids(item.value)
            named = [d for d in docs if main is None or d.tenant_id not in main.owners]
            if named:
                tenants = frozenset(d.tenant_id for d in named)
                found.append(FieldEvidence(item.path, "id", tenants, named[0].doc_id, item.value))
            known = (tuple(found), main, self.terms.occurrences(normalize_text(rest).split()))
        self._query_free[item] = known
        return known

    def _field(self, item: ItemField) -> FieldEvidence | None:
        """What the corpus says of one text field by canary, content or title (None: nothing)."""
        canaries = self.canaries_in(item.value)
        if canaries:
            tenants = frozenset(c.tenant_id for c in canaries)
            return FieldEvidence(item.path, "canary", tenants, None, item.value)
        words = normalize_text(item.value).split()
        if item.quoted and 2 <= len(words) < SHINGLE_WORDS:  # a highlighted fragment: verbatim
            fragment = self.match_text(item.value)
            if not fragment.owners:
                return None
            return FieldEvidence(item.path, "content", fragment.owners, fragment.doc_id, item.value, fragment)
        if len(words) < SHINGLE_WORDS:
            titled = self._by_title.get(" ".join(words), frozenset())
            if not titled:
                return None
            tenants = frozenset(self.documents[d].tenant_id for d in titled)
            verbatim = self.match_text(" ".join(words)).owners
            return FieldEvidence(item.path, "title", tenants, min(titled), item.value, also_in=verbatim)
        match = self.match_text(item.value)
        if not match.owners:
            return None
        return FieldEvidence(item.path, "content", match.owners, match.doc_id, item.value, match)


def _ordered_shingles(words: list[str]) -> list[tuple[str, ...]]:
    return [tuple(words[i : i + SHINGLE_WORDS]) for i in range(len(words) - SHINGLE_WORDS + 1)]
