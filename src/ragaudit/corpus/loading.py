"""Load a corpus: ragaudit JSONL (multi-tenant, with version metadata) or BEIR (single tenant).

Formats (detected from the path and the first record; see ``docs/corpus.md``):

* ragaudit JSONL, one document per line::

    {"doc_id": "pricing-professional", "tenant_id": "acme", "title": "Pricing", "text": "...",
     "metadata": {"version": "3", "status": "active", "source_id": "pricing", "effective_date": "2025-01-01"}}

* BEIR: a folder holding ``corpus.jsonl``, or that file itself: ``{"_id", "title", "text"}``. Every
  document belongs to the tenant :data:`ragaudit.data.beir.DEFAULT_TENANT`.

The file is read line by line; every problem is collected with its file:line and a fix, and all errors
are raised together as one :class:`~ragaudit.errors.ValidationError`. Warnings (an empty text, an unknown
field) do not stop loading; they are kept on :attr:`Corpus.warnings`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from ragaudit.artifacts.provenance import sha256_of
from ragaudit.corpus.model import Document
from ragaudit.data.beir import DEFAULT_TENANT
from ragaudit.data.lines import iter_json_records, iter_lines, parse_json_line
from ragaudit.errors import InputError, Problem, ValidationError

CorpusFormat = Literal["jsonl", "beir"]
STATUSES = ("active", "superseded")
JSONL_FIELDS = frozenset({"doc_id", "tenant_id", "title", "text", "metadata"})
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


@dataclass(frozen=True)
class Corpus:
    """The documents of one corpus file, in file order, with where they came from."""

    documents: tuple[Document, ...]
    path: str
    sha256: str
    """SHA-256 of the corpus file's bytes (``corpus.jsonl`` for a BEIR folder)."""
    format: CorpusFormat = "jsonl"
    warnings: tuple[Problem, ...] = ()
    by_id: Mapping[str, Document] = field(init=False, repr=False, compare=False)
    tenants: tuple[str, ...] = field(init=False, repr=False, compare=False)
    """Every tenant that owns a document, sorted."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_id", MappingProxyType({d.doc_id: d for d in self.documents}))
        object.__setattr__(self, "tenants", tuple(sorted({d.tenant_id for d in self.documents})))

    def __len__(self) -> int:
        return len(self.documents)

    def info(self) -> dict[str, object]:
        return {
            "path": self.path,
            "sha256": self.sha256,
            "format": self.format,
            "documents": len(self.documents),
            "tenants": list(self.tenants),
        }


def _corpus_file(path: str | Path) -> Path:
    p = Path(path)
    if not p.exists():
        raise InputError(str(p), None, "corpus not found", "check the corpus path")
    if p.is_dir():
        inner = p / "corpus.jsonl"
        if not inner.is_file():
            raise InputError(
                str(p),
                None,
                "folder has no corpus.jsonl",
                "point at a ragaudit corpus JSONL file or a BEIR folder holding corpus.jsonl",
            )
        return inner
    return p


def detect_corpus_format(path: str | Path) -> CorpusFormat:
    """``beir`` when the first record has ``_id`` and no ``doc_id``, else ``jsonl`` (a folder: its corpus.jsonl).

    A folder written by ``ragaudit import beir`` holds a ragaudit JSONL ``corpus.jsonl``, so folders are
    detected by content too.
    """
    p = _corpus_file(path)
    for number, text in iter_lines(p):
        if isinstance(text, InputError):
            return "jsonl"
        try:
            obj = parse_json_line(str(p), number, text)
        except InputError:
            return "jsonl"
        is_beir = isinstance(obj, dict) and "_id" in obj and "doc_id" not in obj
        return "beir" if is_beir else "jsonl"
    return "jsonl"


class _RecordParser:
    """Turns one JSON record into a :class:`Document`, appending every problem it finds."""

    def __init__(self, path: str, line: int, fmt: CorpusFormat, problems: list[Problem]) -> None:
        self.path, self.line, self.fmt, self.problems = path, line, fmt, problems

    def fail(self, message: str, fix: str, severity: str = "error") -> None:
        self.problems.append(Problem(self.path, self.line, message, fix, severity))

    def _string(self, obj: Mapping[str, Any], key: str, *, required: bool, non_empty: bool) -> str | None:
        value = obj.get(key)
        if value is None and not required:
            return ""
        if value is None:
            self.fail(f"missing field {key!r}", f'add "{key}": "..." to the document')
            return None
        if not isinstance(value, str) or (non_empty and not value.strip()):
            kind = "a non-empty string" if non_empty else "a string"
            self.fail(f"field {key!r} must be {kind} (got {value!r:.60})", f'write "{key}": "..."')
            return None
        return value

    def _metadata(self, value: Any) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.fail("'metadata' must be an object", 'e.g. "metadata": {"version": "2", "status": "active"}')
            return {}
        status = value.get("status")
        if status is not None and status not in STATUSES:
            self.fail(
                f"metadata.status must be one of {', '.join(STATUSES)} (got {status!r:.60})",
                'mark the current version "active" and older ones "superseded"',
            )
        for key in ("source_id", "effective_date"):
            if key in value and not isinstance(value[key], str):
                self.fail(
                    f"metadata.{key} must be a string (got {value[key]!r:.60})", f'write "{key}": "..."'
                )
        version = value.get("version")
        if version is not None and (isinstance(version, bool) or not isinstance(version, (str, int))):
            self.fail(f"metadata.version must be a string or an integer (got {version!r:.60})", 'e.g. "3"')
        when = value.get("effective_date")
        if isinstance(when, str) and not _is_iso_date(when):
            self.fail(
                f"metadata.effective_date {when!r:.40} is not an ISO date",
                "write YYYY-MM-DD (a time may follow, e.g. 2025-01-31T09:00:00Z)",
            )
        return value

    def parse(self, obj: Any) -> Document | None:
        if not isinstance(obj, dict):
            self.fail(
                f"expected a JSON object, got {type(obj).__name__}", "write one {...} document per line"
            )
            return None
        before = len(self.problems)
        if self.fmt == "beir":
            doc_id = self._string(obj, "_id", required=True, non_empty=True)
            tenant: str | None = DEFAULT_TENANT
        else:
            doc_id = self._string(obj, "doc_id", required=True, non_empty=True)
            tenant = self._tenant(obj)
            unknown = sorted(set(obj) - JSONL_FIELDS)
            if unknown:
                self.fail(
                    f"unknown field(s) {', '.join(unknown)} ignored",
                    "put extra fields under 'metadata' (docs/corpus.md)",
                    "warning",
                )
        title = self._string(obj, "title", required=False, non_empty=False)
        text = self._string(obj, "text", required=True, non_empty=False)
        metadata = self._metadata(obj.get("metadata"))
        if text is not None and not text.strip():
            what = "it is indexed by its title only" if title else "it has nothing to index"
            self.fail(
                f"document {doc_id!r} has empty text: {what}", "fill in 'text' or drop the line", "warning"
            )
        failed = any(p.severity == "error" for p in self.problems[before:])
        if failed or doc_id is None or tenant is None or text is None or title is None:
            return None
        return Document(doc_id, tenant, text, title, MappingProxyType(metadata))

    def _tenant(self, obj: Mapping[str, Any]) -> str | None:
        value = obj.get("tenant_id")
        if value is None:
            self.fail(
                "missing field 'tenant_id'",
                'add "tenant_id": "..." to every document, or write the corpus in the BEIR format '
                '({"_id", "title", "text"}) for a single-tenant corpus',
            )
            return None
        return self._string(obj, "tenant_id", required=True, non_empty=True)


def _is_iso_date(value: str) -> bool:
    if not _ISO_DATE.match(value):
        return False
    try:
        date.fromisoformat(value[:10])
    except ValueError:
        return False
    return True


def iter_documents(
    path: str | Path, fmt: CorpusFormat, problems: list[Problem]
) -> Iterator[tuple[int, Document]]:
    """Stream ``(line, document)`` from one corpus file; append every problem (duplicates too) to ``problems``."""
    p = str(path)
    first_line: dict[str, int] = {}
    for number, obj in iter_json_records(path, problems):
        doc = _RecordParser(p, number, fmt, problems).parse(obj)
        if doc is None:
            continue
        if doc.doc_id in first_line:
            problems.append(
                Problem(
                    p,
                    number,
                    f"duplicate doc id {doc.doc_id!r} (first on line {first_line[doc.doc_id]})",
                    "give every document a unique id (prefix it with the tenant if ids repeat across tenants)",
                )
            )
            continue
        first_line[doc.doc_id] = number
        yield number, doc


def read_corpus(
    path: str | Path, fmt: CorpusFormat | Literal["auto"] = "auto"
) -> tuple[list[Document], list[Problem], CorpusFormat]:
    """Read every document; return the good ones, every problem (errors and warnings) and the format."""
    file = _corpus_file(path)
    kind = detect_corpus_format(file) if fmt == "auto" else fmt
    problems: list[Problem] = []
    documents = [doc for _, doc in iter_documents(file, kind, problems)]
    if not documents and not any(p.severity == "error" for p in problems):
        problems.append(Problem(str(file), None, "no documents found", "write one JSON document per line"))
    return documents, problems, kind


def load_corpus(path: str | Path, fmt: CorpusFormat | Literal["auto"] = "auto") -> Corpus:
    """Load a ragaudit corpus JSONL file, a BEIR ``corpus.jsonl`` or a BEIR folder.

    Raises :class:`~ragaudit.errors.ValidationError` listing every error (with file:line and a fix) if
    any; warnings are kept on the returned corpus.
    """
    documents, problems, kind = read_corpus(path, fmt)
    errors = [p for p in problems if p.severity == "error"]
    if errors:
        raise ValidationError(errors)
    file = _corpus_file(path)
    return Corpus(tuple(documents), str(path), sha256_of(file), kind, tuple(problems))
