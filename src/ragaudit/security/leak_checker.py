"""The tenant audit's leak checker: each answer's chunks and the rest of its response, attributed from the
corpus (:mod:`ragaudit.security.ownership`), never from the label the retriever attaches; what it finds
becomes :class:`LeakFinding` records (the probe, the caller, the chunk, its rank, the owners, how
ownership was decided, the JSON path of every foreign value), bounded for the report by
:func:`record_json`. The audit that asks the questions is :mod:`ragaudit.security.tenant_audit`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ragaudit.data.run import RankedItem
from ragaudit.security.ownership import Attribution, FieldEvidence, OwnershipIndex
from ragaudit.security.probes import Probe
from ragaudit.security.response_fields import ResponseEnvelope, response_evidence
from ragaudit.security.semantic_attribution import SemanticAttributor, SemanticMatch
from ragaudit.text.words import normalize_text

EXCERPT_CHARS = 160
MAX_LISTED = 200
"""At most this many unattributed chunks and hostile outcomes are listed in the report (all are counted)."""
MAX_FIELDS_PER_RECORD = 20
"""Foreign fields listed in one leak record (all are counted in ``fields_total``)."""


def excerpt(text: str | None) -> str:
    flat = " ".join((text or "").split())
    return flat[:EXCERPT_CHARS] + ("..." if len(flat) > EXCERPT_CHARS else "")


@dataclass(frozen=True)
class LeakFinding:
    """One foreign chunk served to a caller, with the evidence."""

    probe: Probe
    caller: str | None
    chunk_id: str
    rank: int
    owners: tuple[str, ...]
    """The tenant(s) other than the caller that own the chunk according to the corpus."""
    attributed_by: str
    owner_doc_id: str | None
    containment: float | None
    canaries: tuple[str, ...]
    claimed_tenant: str | None
    excerpt: str
    hostile: bool = False
    """The caller was a hostile tenant id (not a tenant of the corpus)."""
    asked: Mapping[str, Any] | None = None
    """How the request that got it was asked: ``top_k``, round, concurrency, sequence, text, part."""
    fields: tuple[Mapping[str, Any], ...] = ()
    """The fields other than id and content that are foreign (title, snippet, metadata value, source id):
    ``{"field", "path", "method", "owner", "doc_id", "excerpt"}`` each (``path``: the JSON path in the
    response, ``$.results[2].metadata.see_also[0]``)."""
    where: Literal["results", "response"] = "results"
    """``results``: a returned chunk; ``response``: values beside the chunk list (``$.facets``, ``$.debug``),
    whose ``chunk_id`` is then the JSON path of the first foreign value and ``rank`` 0."""

    @property
    def leak_class(self) -> str:
        """What kind of evidence made it a leak, for the per-class counts: ``response`` or ``results``,
        and the methods (``results:id+content``, ``response:term``)."""
        methods = sorted({part.split("@")[0] for part in self.attributed_by.split("+")})
        return f"{self.where}:{'+'.join(methods)}"

    def to_json(self) -> dict[str, Any]:
        return {
            **({"asked": dict(self.asked)} if self.asked is not None else {}),
            **({"fields": [dict(f) for f in self.fields]} if self.fields else {}),
            **({"where": self.where} if self.where != "results" else {}),
            "probe": self.probe.to_json(),
            "caller": self.caller,
            "hostile_caller": self.hostile,
            "chunk_id": self.chunk_id,
            "rank": self.rank,
            "owner": list(self.owners),
            "attributed_by": self.attributed_by,
            "owner_doc_id": self.owner_doc_id,
            "containment": self.containment,
            "canaries": list(self.canaries),
            "claimed_tenant": self.claimed_tenant,
            "excerpt": self.excerpt,
        }


class LeakChecker:
    """Attributes returned chunks and collects leaks, unattributed chunks and label mismatches."""

    def __init__(
        self,
        ownership: OwnershipIndex,
        shared: frozenset[str] = frozenset(),
        semantic: SemanticAttributor | None = None,
    ) -> None:
        self.ownership = ownership
        self.real = set(ownership.tenants)
        self.shared = shared
        self.semantic = semantic
        self.leaks: list[LeakFinding] = []
        self.unattributed: list[dict[str, Any]] = []
        self.unattributed_count = 0
        self.mismatches = 0
        self.checked = 0
        self.shared_chunks = 0
        self.semantic_chunks = 0
        self.semantic_leaks = 0
        self._read: dict[
            tuple[int, str | None], tuple[Attribution, frozenset[str], bool, frozenset[str]]
        ] = {}
        self.sent_texts: dict[str | None, set[str]] = {}
        """Every query each caller has sent (normalised): a service may echo them later."""

    def _owners(
        self, who: Attribution, caller: str | None, hostile: bool
    ) -> tuple[frozenset[str], bool, frozenset[str]]:
        """``(who.owners, who.attributed, the owners that make it a leak for caller)``, computed once per
        attribution and caller (the index memoises attributions: the same one comes back thousands of times)."""
        key = (id(who), caller)
        known = self._read.get(key)
        if known is None or known[0] is not who:  # the attribution is held, so its id is not reused
            known = (who, who.owners, who.attributed, who.owners if hostile else who.foreign_owners(caller))
            self._read[key] = known
        return known[1], known[2], known[3]

    def note_sent(self, caller: str | None, text: str) -> None:
        """Remember that ``caller`` sent ``text``: a value beside a later answer to the same caller that is
        exactly one of its own earlier queries (a "recent searches" list) is no evidence, even when the
        audit's probe it was quotes another tenant."""
        self.sent_texts.setdefault(caller, set()).add(normalize_text(text))

    def check(
        self,
        probe: Probe,
        caller: str | None,
        items: Sequence[RankedItem],
        query: str | None = None,
        response: ResponseEnvelope | None = None,
    ) -> int:
        """Check one ranking, and the rest of the response it came in; return how many leaks it held.
        ``query`` is the text sent (an echo of it is no evidence beside the results)."""
        found = 0
        hostile = caller not in self.real
        where = response or ResponseEnvelope(None)
        for rank, item in enumerate(items, start=1):
            self.checked += 1
            who = self.ownership.attribute_item(item, query)
            everyone, attributed, owners = self._owners(who, caller, hostile)
            if item.tenant_id is not None and attributed and item.tenant_id not in everyone:
                self.mismatches += 1
            foreign = owners - self.shared
            self.shared_chunks += bool(owners) and not foreign
            if not attributed and not owners:
                placed = self._semantic(item)
                if placed is not None:
                    self.semantic_chunks += 1
                    if hostile or (placed.tenant_id != caller and placed.tenant_id not in self.shared):
                        found += 1
                        self.semantic_leaks += 1
                        self.leaks.append(_semantic_finding(probe, caller, rank, item, placed, hostile))
                    continue
                self.unattributed_count += 1
                if len(self.unattributed) < MAX_LISTED:
                    self.unattributed.append(
                        {
                            "probe_id": probe.id,
                            "caller": caller,
                            "chunk_id": item.chunk_id,
                            "rank": rank,
                            "containment": who.containment,
                            "excerpt": excerpt(item.content),
                        }
                    )
                continue
            if foreign:  # a foreign field is a leak even beside text nobody can attribute
                found += 1
                finding = self._finding(probe, caller, rank, item, who, foreign, hostile, where)
                self.leaks.append(finding)
        if response is not None:
            found += self._check_response(probe, caller, response, query, hostile)
        return found

    def _check_response(
        self, probe: Probe, caller: str | None, response: ResponseEnvelope, query: str | None, hostile: bool
    ) -> int:
        """The values beside the chunk list: one leak record per response, listing every foreign value."""
        evidence = response_evidence(self.ownership, response, query, self.sent_texts.get(caller, set()))
        owned = [(e, self._response_owners(e, caller, hostile)) for e in evidence]
        foreign = [e for e, owners_of in owned if owners_of]
        if not foreign:
            return 0
        owners = frozenset(o for _, owners_of in owned for o in owners_of)
        self.leaks.append(
            LeakFinding(
                probe,
                caller,
                foreign[0].path,
                0,
                tuple(sorted(owners)),
                "+".join(dict.fromkeys(f"{e.method}@{e.path}" for e in foreign)),
                foreign[0].doc_id,
                None,
                tuple(dict.fromkeys(e.value for e in foreign if e.method == "canary")),
                None,
                excerpt(foreign[0].value),
                hostile,
                fields=tuple(_field_json(e, caller, hostile) for e in foreign),
                where="response",
            )
        )
        return 1

    def _response_owners(self, evidence: FieldEvidence, caller: str | None, hostile: bool) -> frozenset[str]:
        """The tenants a value beside the results belongs to that the caller may not see (shared
        tenants' values may be served to everyone)."""
        return frozenset(evidence.owners if hostile else evidence.foreign(caller)) - self.shared

    def _semantic(self, item: RankedItem) -> SemanticMatch | None:
        if self.semantic is None or not item.content:
            return None
        return self.semantic.match(item.content)

    def semantic_summary(self) -> dict[str, Any] | None:
        if self.semantic is None:
            return None
        return {
            "settings": self.semantic.settings(),
            "chunks": self.semantic_chunks,
            "leaks": self.semantic_leaks,
        }

    @staticmethod
    def _finding(
        probe: Probe,
        caller: str | None,
        rank: int,
        item: RankedItem,
        who: Attribution,
        foreign: frozenset[str],
        hostile: bool,
        response: ResponseEnvelope,
    ) -> LeakFinding:
        return LeakFinding(
            probe,
            caller,
            item.chunk_id,
            rank,
            tuple(sorted(foreign)),
            who.method if hostile else who.foreign_method(caller),
            who.doc_id,
            round(who.containment, 4) if who.containment is not None else None,
            tuple(c.secret for c in who.canaries),
            item.tenant_id,
            excerpt(item.content),
            hostile,
            fields=tuple(
                _field_json(e, caller, hostile, response.item_path(rank - 1))
                for e in who.fields
                if hostile or e.foreign(caller)
            ),
        )


def _semantic_finding(
    probe: Probe, caller: str | None, rank: int, item: RankedItem, placed: SemanticMatch, hostile: bool
) -> LeakFinding:
    """A rewritten text semantic attribution gave to another tenant's document."""
    return LeakFinding(
        probe,
        caller,
        item.chunk_id,
        rank,
        (placed.tenant_id,),
        f"semantic (cosine {placed.cosine:.3f}, margin {placed.margin:.3f})",
        placed.doc_id,
        None,
        (),
        item.tenant_id,
        excerpt(item.content),
        hostile,
    )


def _field_json(
    evidence: FieldEvidence, caller: str | None, hostile: bool, item_path: str | None = None
) -> dict[str, Any]:
    owners = evidence.owners if hostile else evidence.foreign(caller)
    path = evidence.path if item_path is None else f"{item_path}.{evidence.path}"
    return {
        "field": evidence.path,
        "path": path,
        "method": evidence.method,
        "owner": sorted(owners),
        "doc_id": evidence.doc_id,
        "excerpt": excerpt(evidence.value),
    }


def record_json(leak: LeakFinding) -> dict[str, Any]:
    """A leak record for the report, its foreign fields cut to :data:`MAX_FIELDS_PER_RECORD`."""
    out = leak.to_json()
    if len(leak.fields) > MAX_FIELDS_PER_RECORD:
        out["fields"] = out["fields"][:MAX_FIELDS_PER_RECORD]
        out["fields_total"] = len(leak.fields)
    return out
