"""Version siblings: documents of one tenant that look like versions of one another.

Documents are grouped (within a tenant) by, in this order of trust:

1. links in their metadata: ``supersedes`` / ``superseded_by`` (a document id or a list of them), and a
   shared ``source_id``;
2. the same id once a version suffix is removed (``pricing-pro-v2`` and ``pricing-pro-v3``);
3. the same title once version and date markers are removed, when one of them had such a marker and
   at least three words remain (``Starter plan pricing (2022)`` and ``Starter plan pricing``).

Within a group the newest is the one with the highest ``(not superseded by status or link, version,
effective_date, id's version number)``; every other member is older. The workbench shows each candidate's newer and
older siblings, and suggests grade 0 (superseded) for an older version once a newer one is graded
relevant: the lesson's "Version & Temporal Diligence" rule.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ragaudit.corpus.model import Document

_ID_VERSION = re.compile(r"[-_.]v(?:ersion)?[-_.]?(\d+)$", re.I)
_TITLE_MARKERS = re.compile(
    r"\(\s*(?:19|20)\d\d(?:-\d\d(?:-\d\d)?)?\s*\)|\b(?:19|20)\d\d(?:-\d\d(?:-\d\d)?)?\b"
    r"|\bv(?:ersion)?\s*\d+(?:\.\d+)*\b|\((?:old|new|draft|current|latest|archived?)\)",
    re.I,
)
MIN_TITLE_WORDS = 3
"""Titles group only when at least this many words remain once the markers are removed."""


@dataclass(frozen=True)
class Versions:
    """Where one document stands among its versions."""

    group: str
    newer: tuple[str, ...]
    older: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"group": self.group, "newer": list(self.newer), "older": list(self.older)}


def _links(value: Any) -> list[str]:
    if isinstance(value, str) and value:
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str) and v]
    return []


def _title_key(title: str) -> str:
    return " ".join(_TITLE_MARKERS.sub(" ", title).lower().split())


def _order(doc: Document, replaced: set[str]) -> tuple[int, float, str, int]:
    version = doc.metadata.get("version")
    try:
        number = float(version) if version is not None and not isinstance(version, bool) else -1.0
    except (TypeError, ValueError):
        number = -1.0
    match = _ID_VERSION.search(doc.doc_id)
    date = doc.metadata.get("effective_date")
    return (
        0 if doc.status == "superseded" or doc.doc_id in replaced else 1,
        number,
        date if isinstance(date, str) else "",
        int(match.group(1)) if match else -1,
    )


class _Groups:
    """Union-find over document ids."""

    def __init__(self, ids: Iterable[str]) -> None:
        self.parent = {i: i for i in ids}

    def find(self, i: str) -> str:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def join(self, a: str, b: str) -> None:
        if a in self.parent and b in self.parent:
            self.parent[self.find(a)] = self.find(b)


def version_siblings(documents: Iterable[Document]) -> dict[str, Versions]:
    """Every document that has at least one version sibling -> its newer and older siblings."""
    docs = list(documents)
    by_id = {d.doc_id: d for d in docs}
    groups = _Groups(by_id)
    keys: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    marked: set[tuple[str, str, str]] = set()
    replaced: set[str] = set()
    """Documents a link says are superseded (the target of ``supersedes``, or carrying ``superseded_by``)."""
    for doc in docs:
        older = _links(doc.metadata.get("supersedes"))
        newer = _links(doc.metadata.get("superseded_by"))
        for other in older + newer:
            if other in by_id and by_id[other].tenant_id == doc.tenant_id:
                groups.join(doc.doc_id, other)
                replaced.add(other if other in older else doc.doc_id)
        source = doc.metadata.get("source_id")
        if isinstance(source, str) and source:
            keys[(doc.tenant_id, "source", source)].append(doc.doc_id)
        if _ID_VERSION.search(doc.doc_id):
            keys[(doc.tenant_id, "id", _ID_VERSION.sub("", doc.doc_id))].append(doc.doc_id)
        title = _title_key(doc.title)
        if len(title.split()) >= MIN_TITLE_WORDS:
            key = (doc.tenant_id, "title", title)
            keys[key].append(doc.doc_id)
            if title != " ".join(doc.title.lower().split()):
                marked.add(key)
    for key, members in keys.items():
        if key[1] == "title" and key not in marked:  # equal titles without a version marker: not versions
            continue
        for other in members[1:]:
            groups.join(members[0], other)
    members_of: dict[str, list[Document]] = defaultdict(list)
    for doc in docs:
        members_of[groups.find(doc.doc_id)].append(doc)
    out: dict[str, Versions] = {}
    for root, group in members_of.items():
        if len(group) < 2:
            continue
        ordered = sorted(group, key=lambda d: _order(d, replaced))
        ids = [d.doc_id for d in ordered]
        for i, member in enumerate(ordered):
            out[member.doc_id] = Versions(root, tuple(reversed(ids[i + 1 :])), tuple(reversed(ids[:i])))
    return out
