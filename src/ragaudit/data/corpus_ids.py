"""The ids and tenants a corpus defines, for checking labels against it (``ragaudit validate --corpus``).

Accepts a ragaudit corpus JSONL (``doc_id`` and/or ``chunk_id``, ``tenant_id``), a BEIR ``corpus.jsonl``
(``_id``, no tenants) or a BEIR folder. A document id ``D`` also makes chunk ids of the form ``D#n``
known, since chunkers name chunks that way; such a chunk belongs to ``D``'s tenants.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from ragaudit.data.lines import iter_json_records
from ragaudit.errors import Problem

ID_KEYS = ("chunk_id", "doc_id", "_id", "id")


@dataclass(frozen=True)
class CorpusIndex:
    """Every id of a corpus with the tenants that own it (empty when the corpus names no tenants)."""

    owners: dict[str, frozenset[str]]
    tenants: frozenset[str]
    lengths: dict[str, int] = field(default_factory=dict)
    """The length of each record's ``text`` (the string evidence spans index), where it has one."""

    def _base(self, doc_id: str) -> str | None:
        if doc_id in self.owners:
            return doc_id
        base, sep, tail = doc_id.rpartition("#")
        return base if sep and tail.isdigit() and base in self.owners else None

    def known(self, doc_id: str) -> bool:
        """Whether an id names a corpus record, or a chunk ``D#n`` of a known document ``D``."""
        return self._base(doc_id) is not None

    def owners_of(self, doc_id: str) -> frozenset[str]:
        """The tenants owning an id (empty if unknown or the corpus has no tenants)."""
        base = self._base(doc_id)
        return self.owners[base] if base is not None else frozenset()


def read_corpus_index(path: str | Path) -> tuple[CorpusIndex, list[Problem]]:
    p = Path(path)
    if p.is_dir():
        p = p / "corpus.jsonl"
    owners: dict[str, set[str]] = defaultdict(set)
    lengths: dict[str, int] = {}
    problems: list[Problem] = []
    for number, obj in iter_json_records(p, problems):
        found = [obj[k] for k in ID_KEYS if isinstance(obj, dict) and isinstance(obj.get(k), str)]
        if not found:
            problems.append(
                Problem(str(p), number, "corpus record has no id", f"give it one of {', '.join(ID_KEYS)}")
            )
            continue
        tenant = obj.get("tenant_id")
        for doc_id in found:
            owners[doc_id].update([tenant] if isinstance(tenant, str) else [])
            if isinstance(obj.get("text"), str):
                lengths[doc_id] = len(obj["text"])
    index = CorpusIndex(
        {d: frozenset(t) for d, t in owners.items()},
        frozenset(t for ts in owners.values() for t in ts),
        lengths,
    )
    return index, problems
