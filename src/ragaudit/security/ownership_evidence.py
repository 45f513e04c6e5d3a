"""What the ownership index finds (:mod:`ragaudit.security.ownership`): where a text is in the corpus
(:class:`TextMatch`), what one other field says (:class:`FieldEvidence`), and the verdict on a whole
returned chunk (:class:`Attribution`: its owners, how they were found, whether it is a leak for a
caller), with the thresholds the content match uses."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ragaudit.security.canaries import Canary

SHINGLE_WORDS = 5
"""Words per content shingle."""
MIN_CONTAINMENT = 0.5
"""Share of a chunk's shingles a document must hold to count as containing the chunk."""
OWNER_MARGIN = 0.1
"""Only documents within this much of the best containment name content owners."""
PASSAGE_SHINGLES = 4
"""A run of this many consecutive shingles (8 words) of a text that another tenant's documents hold and
none of the caller's is a foreign passage: a leak even inside the caller's own text."""
_NONE: frozenset[int] = frozenset()


@dataclass(frozen=True)
class TextMatch:
    """Where a returned text is found in the corpus."""

    owners: frozenset[str]
    """Tenants of the documents containing the text (at least the minimum, within the margin of the best)."""
    doc_id: str | None
    """The best-containing document."""
    containment: float | None
    held: Mapping[str, frozenset[int]] = field(default_factory=dict)
    """For each tenant holding any shingle of the text: the positions of the shingles its documents hold."""
    best_held: Mapping[str, frozenset[int]] = field(default_factory=dict)
    """For each owner: the positions of the shingles its best-containing document holds."""

    def passages(self, caller: str | None) -> frozenset[str]:
        """The tenants, other than ``caller`` and the text's owners, whose documents hold a passage of
        the text that neither the caller's documents nor the owners' hold: :data:`PASSAGE_SHINGLES`
        consecutive shingles or more (a neighbouring chunk of another tenant appended to the caller's
        own). A passage an owner holds too names the owner only: a name two tenants' documents share is
        no second owner of a chunk that is wholly one tenant's (the owners are :meth:`foreign`'s)."""
        covered = set(self.held.get(caller or "", _NONE))
        for owner in self.owners:
            covered |= self.held.get(owner, _NONE)
        return frozenset(
            t
            for t, held in self.held.items()
            if t != caller and t not in self.owners and _longest_run(held - covered) >= PASSAGE_SHINGLES
        )

    def foreign(self, caller: str | None) -> frozenset[str]:
        """The tenants that make this text a leak for ``caller``: every owner when the caller holds none
        of it; else the owners whose best document holds shingles no document of the caller holds
        (another tenant's variant of a template: its names and numbers); and, either way, the tenants
        with a foreign passage in it (:meth:`passages`)."""
        found = self.passages(caller)
        if not self.owners:
            return found
        if caller not in self.owners:
            return self.owners | found
        mine = self.held.get(caller or "", _NONE)
        return found | {t for t in self.owners if t != caller and self.best_held.get(t, _NONE) - mine}


NO_MATCH = TextMatch(frozenset(), None, None)


@dataclass(frozen=True)
class FieldEvidence:
    """What the corpus says about one field of a returned chunk other than its id and content."""

    path: str
    """Where the field is: ``title``, ``snippet``, ``metadata.related[0].doc_id``, ``source_id``."""
    method: str
    """``id``, ``content`` (a text contained in documents), ``title`` (a whole title), ``term`` (a name
    or code only one tenant's documents use) or ``canary``."""
    owners: frozenset[str]
    doc_id: str | None
    value: str
    match: TextMatch | None = None
    also_in: frozenset[str] = frozenset()
    """For a title: the tenants whose documents contain it verbatim (their own text, not a leak to them)."""

    def foreign(self, caller: str | None) -> frozenset[str]:
        """Its owners when ``caller`` is not one of them (a title or source id several tenants share is
        no leak for any of them, nor a title the caller's own documents contain); every other tenant's
        canary; a text as :meth:`TextMatch.foreign`."""
        if self.match is not None:
            return self.match.foreign(caller)
        if self.method == "canary":
            return frozenset(o for o in self.owners if o != caller)
        return frozenset() if caller in self.owners or caller in self.also_in else self.owners


@dataclass(frozen=True)
class Attribution:
    """What the corpus says about one returned chunk."""

    id_owner: str | None
    """The tenant whose document or chunk the id names; ``None`` for an id the corpus does not know."""
    content_owners: frozenset[str]
    """Tenants with a document containing the chunk's text (empty: no text, or no document holds it)."""
    doc_id: str | None
    """The document the id names, else the best-containing document."""
    containment: float | None
    """The best containment of the chunk's text in a document, when it was measured."""
    canaries: tuple[Canary, ...] = ()
    """Planted secrets found in the chunk's text."""
    match: TextMatch | None = None
    """Where the chunk's content is found (the parts each tenant holds: templated near-duplicates)."""
    fields: tuple[FieldEvidence, ...] = ()
    """Every other field (title, snippet, highlight, metadata values, source ids) some tenant owns."""

    @property
    def owners(self) -> frozenset[str]:
        """Every tenant the corpus links the chunk to (id, content, a passage of the content, canary or
        another field)."""
        found = set(self.content_owners) | {c.tenant_id for c in self.canaries}
        if self.match is not None:
            found |= self.match.passages(None)
        if self.id_owner is not None:
            found.add(self.id_owner)
        for evidence in self.fields:
            found |= evidence.owners
        return frozenset(found)

    @property
    def attributed(self) -> bool:
        """Whether the corpus says whose chunk this is: by a canary, or by its content and else its id or
        an id-named field (``source_id``, ``metadata.doc_id``); when it has no content, by any field.
        Content found in no document (analysed, stemmed or rewritten text) is unattributed whatever
        the id says: the id would vouch for text nobody can check. A title or snippet beside
        unattributable content does not vouch for it either (it can only make the chunk a leak)."""
        if self.canaries or self.content_owners:
            return True
        if self.text_unfound:
            return False
        if self.id_owner is not None:
            return True
        if any(e.method == "id" for e in self.fields):
            return True
        return self.match is None and bool(self.fields)

    @property
    def method(self) -> str:
        """How ownership was decided: ``id``, ``content``, ``canary`` and ``<method>@<field>`` for the
        other fields, combined with ``+`` (``none`` when nothing attributes the chunk)."""
        passages = self.match.passages(None) if self.match is not None else frozenset()
        parts = [
            name for name, hit in (("id", self.id_owner), ("content", self.content_owners or passages)) if hit
        ]
        if self.canaries:
            parts.append("canary")
        parts += [f"{e.method}@{e.path}" for e in self.fields]
        return "+".join(parts) or "none"

    @property
    def text_unfound(self) -> bool:
        """The chunk carries text found in no document (and no canary): nothing can check it."""
        return (
            self.match is not None
            and self.match.containment is not None
            and not self.match.owners
            and not self.canaries
        )

    def foreign_method(self, caller: str | None) -> str:
        """:attr:`method`, limited to the evidence that makes the chunk a leak for ``caller``
        (``content+title@title``); ``none`` when it is none."""
        parts = []
        if self.id_owner is not None and self.id_owner != caller:
            parts.append("id")
        if self.match is not None and self.match.foreign(caller):
            parts.append("content")
        if any(c.tenant_id != caller for c in self.canaries):
            parts.append("canary")
        parts += [f"{e.method}@{e.path}" for e in self.foreign_fields(caller)]
        return "+".join(parts) or "none"

    def foreign_fields(self, caller: str | None) -> tuple[FieldEvidence, ...]:
        """The fields other than id and content that make the chunk a leak for ``caller``."""
        return tuple(e for e in self.fields if e.foreign(caller))

    def foreign_owners(self, caller: str | None) -> frozenset[str]:
        """The tenants other than ``caller`` that make this chunk a leak for ``caller`` (empty: no leak)."""
        found: set[str] = set()
        if self.id_owner is not None and self.id_owner != caller:
            found.add(self.id_owner)
        if self.match is not None:
            found |= self.match.foreign(caller)
        elif self.content_owners and caller not in self.content_owners:
            found |= self.content_owners
        found |= {c.tenant_id for c in self.canaries if c.tenant_id != caller}
        for evidence in self.fields:
            found |= evidence.foreign(caller)
        return frozenset(found)

    def is_leak(self, caller: str | None) -> bool:
        return bool(self.foreign_owners(caller))


def _longest_run(positions: frozenset[int]) -> int:
    """The length of the longest run of consecutive integers in ``positions``."""
    longest = 0
    for start in positions:
        if start - 1 not in positions:
            end = start
            while end + 1 in positions:
                end += 1
            longest = max(longest, end - start + 1)
    return longest
