"""Canaries: secrets planted in one tenant's documents, to prove a leak beyond doubt.

File format, one JSON object per line::

    {"tenant_id": "acme", "doc_id": "acme-contract-northwind-msa", "secret": "price-protection rider AC-7731"}

``doc_id`` is optional. A canary is matched in returned text after the same normalisation as
content ownership (:func:`ragaudit.text.words.normalize_text`), so case, punctuation and
line breaks do not hide it. Checked against the corpus: the secret must occur in the named document
(which must belong to the tenant), or in some document of the tenant when none is named, and in no
other tenant's documents (then finding it would prove nothing).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ragaudit.corpus.model import Document
from ragaudit.data.lines import iter_json_records
from ragaudit.errors import Problem, ValidationError
from ragaudit.text.words import contains_phrase, normalize_text


@dataclass(frozen=True)
class Canary:
    """A planted secret of ``tenant_id`` (in ``doc_id`` when known)."""

    tenant_id: str
    secret: str
    doc_id: str | None = None

    def to_json(self) -> dict[str, str]:
        out = {"tenant_id": self.tenant_id, "secret": self.secret}
        if self.doc_id is not None:
            out["doc_id"] = self.doc_id
        return out


def _parse(path: str, number: int, obj: object, problems: list[Problem]) -> Canary | None:
    if not isinstance(obj, dict):
        problems.append(Problem(path, number, "expected a JSON object", '{"tenant_id": ..., "secret": ...}'))
        return None
    tenant, secret, doc_id = obj.get("tenant_id"), obj.get("secret"), obj.get("doc_id")
    if not isinstance(tenant, str) or not tenant.strip():
        problems.append(Problem(path, number, "missing or empty 'tenant_id'", 'add "tenant_id": "acme"'))
        return None
    if not isinstance(secret, str) or not normalize_text(secret):
        problems.append(
            Problem(path, number, "missing or empty 'secret'", 'add "secret": "a phrase planted in the doc"')
        )
        return None
    if doc_id is not None and not isinstance(doc_id, str):
        problems.append(Problem(path, number, "'doc_id' must be a string", "or leave it out"))
        return None
    return Canary(tenant, secret, doc_id)


def _check(path: str, number: int, canary: Canary, documents: dict[str, Document]) -> Problem | None:
    def holds(doc: Document) -> bool:
        return contains_phrase(f"{doc.title}\n{doc.text}", canary.secret)

    if canary.doc_id is not None:
        doc = documents.get(canary.doc_id)
        if doc is None:
            return Problem(path, number, f"doc_id {canary.doc_id!r} is not in the corpus", "check the id")
        if doc.tenant_id != canary.tenant_id:
            return Problem(
                path,
                number,
                f"doc {canary.doc_id!r} belongs to {doc.tenant_id!r}, not {canary.tenant_id!r}",
                "fix tenant_id or doc_id",
            )
        if not holds(doc):
            return Problem(
                path, number, f"the secret does not occur in {canary.doc_id!r}", "plant it in the document"
            )
    others = sorted({d.tenant_id for d in documents.values() if d.tenant_id != canary.tenant_id and holds(d)})
    if others:
        return Problem(
            path,
            number,
            f"the secret also occurs in documents of {', '.join(others)}",
            "choose a phrase only this tenant's documents hold",
        )
    own = [d for d in documents.values() if d.tenant_id == canary.tenant_id]
    if not own:
        return Problem(path, number, f"tenant {canary.tenant_id!r} owns no document", "check tenant_id")
    if canary.doc_id is None and not any(holds(d) for d in own):
        return Problem(
            path,
            number,
            f"the secret occurs in no document of {canary.tenant_id!r}",
            "plant it in one of the tenant's documents, or fix the phrase",
        )
    return None


def load_canaries(path: str | Path, documents: Iterable[Document] = ()) -> tuple[Canary, ...]:
    """Read a canary file; with ``documents``, check every canary against them (see module docstring).

    Raises :class:`~ragaudit.errors.ValidationError` listing every problem with its file:line.
    """
    p = str(path)
    docs = {d.doc_id: d for d in documents}
    problems: list[Problem] = []
    found: list[Canary] = []
    for number, obj in iter_json_records(path, problems):
        canary = _parse(p, number, obj, problems)
        if canary is None:
            continue
        problem = _check(p, number, canary, docs) if docs else None
        if problem is not None:
            problems.append(problem)
            continue
        found.append(canary)
    if not found and not problems:
        problems.append(Problem(p, None, "no canaries found", "write one JSON object per line"))
    if problems:
        raise ValidationError(problems)
    return tuple(found)
