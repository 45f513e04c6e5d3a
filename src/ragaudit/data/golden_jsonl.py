"""Reader of the golden JSONL format (see :mod:`ragaudit.data.schema`), collecting every problem at once."""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType
from typing import Any

from ragaudit.artifacts.provenance import sha256_of
from ragaudit.data.lines import iter_json_records
from ragaudit.data.schema import Dataset, Evidence, GoldenCase
from ragaudit.errors import Problem, ValidationError

KNOWN_FIELDS = {
    "id",
    "query",
    "tenant_id",
    "relevant_chunk_ids",
    "relevance",
    "evidence",
    "answer",
    "tags",
    "metadata",
}


class _CaseParser:
    def __init__(self, path: str, line: int, problems: list[Problem]) -> None:
        self.path, self.line, self.problems = path, line, problems

    def fail(self, message: str, fix: str) -> None:
        self.problems.append(Problem(self.path, self.line, message, fix))

    def _str(self, obj: dict[str, Any], key: str, *, required: bool) -> str | None:
        value = obj.get(key)
        if value is None:
            if required:
                self.fail(f"missing field {key!r}", f'add "{key}": "..." to the case')
            return None
        if isinstance(value, int) and not isinstance(value, bool) and key == "id":
            return str(value)
        if not isinstance(value, str) or (required and not value.strip()):
            self.fail(
                f"field {key!r} must be a non-empty string (got {value!r:.60})", f'write "{key}": "..."'
            )
            return None
        return value

    def _grade(self, doc_id: str, grade: Any) -> int | None:
        if isinstance(grade, float) and grade.is_integer():
            grade = int(grade)
        if isinstance(grade, bool) or not isinstance(grade, int):
            self.fail(f"grade of {doc_id!r} must be an integer 0..3 (got {grade!r})", "use 0, 1, 2 or 3")
            return None
        if grade < 0:
            self.fail(
                f"negative grade {grade} for {doc_id!r}", "use 0 for judged non-relevant or superseded items"
            )
            return None
        return grade

    def _evidence(self, value: Any) -> tuple[Evidence, ...]:
        if not isinstance(value, list):
            self.fail("'evidence' must be a list of {doc_id, start, end, grade?}", "wrap the spans in [...]")
            return ()
        spans: list[Evidence] = []
        for i, item in enumerate(value):
            ok = isinstance(item, dict) and isinstance(item.get("doc_id"), str)
            start, end = (item.get("start"), item.get("end")) if isinstance(item, dict) else (None, None)
            if (
                not (ok and isinstance(start, int) and isinstance(end, int))
                or isinstance(start, bool)
                or not (0 <= start < end)
            ):
                self.fail(
                    f'evidence[{i}] must be {{"doc_id": str, "start": int, "end": int}} with 0 <= start < end',
                    "give character offsets into the document's text",
                )
                continue
            grade = item.get("grade")
            if grade is not None:
                grade = self._grade(f"evidence[{i}]", grade)
            spans.append(Evidence(item["doc_id"], start, end, grade))
        return tuple(spans)

    def parse(self, obj: Any) -> GoldenCase | None:
        if not isinstance(obj, dict):
            self.fail(f"expected a JSON object, got {type(obj).__name__}", "write one {...} case per line")
            return None
        before = len(self.problems)
        case_id = self._str(obj, "id", required=True)
        query = self._str(obj, "query", required=True)
        tenant = self._str(obj, "tenant_id", required=False)
        answer = self._str(obj, "answer", required=False)
        unknown = sorted(set(obj) - KNOWN_FIELDS)
        if unknown:
            self.problems.append(
                Problem(
                    self.path,
                    self.line,
                    f"unknown field(s) {', '.join(unknown)} ignored",
                    "check the spelling against the golden-set schema (docs/datasets.md)",
                    "warning",
                )
            )
        relevant: tuple[str, ...] | None = None
        raw_ids = obj.get("relevant_chunk_ids")
        if raw_ids is not None:
            if not isinstance(raw_ids, list) or not all(isinstance(x, str) and x for x in raw_ids):
                self.fail(
                    "'relevant_chunk_ids' must be a list of non-empty strings",
                    'e.g. ["doc-1#0"], or [] for unanswerable',
                )
            else:
                relevant = tuple(dict.fromkeys(raw_ids))
                if len(relevant) != len(raw_ids):
                    self.problems.append(
                        Problem(
                            self.path,
                            self.line,
                            "duplicate ids in 'relevant_chunk_ids' counted once",
                            "list each id once",
                            "warning",
                        )
                    )
        grades: dict[str, int] = {}
        raw_rel = obj.get("relevance")
        if raw_rel is not None:
            if not isinstance(raw_rel, dict):
                self.fail("'relevance' must be an object {chunk_id: grade}", 'e.g. {"doc-1#0": 3}')
            else:
                for doc_id, grade in raw_rel.items():
                    g = self._grade(doc_id, grade)
                    if g is not None:
                        grades[doc_id] = g
        if raw_ids is None and raw_rel is None:
            self.fail(
                "no labels: neither 'relevant_chunk_ids' nor 'relevance'",
                'add "relevant_chunk_ids": [...] ([] marks an unanswerable probe)',
            )
        for doc_id in relevant or ():
            if grades.get(doc_id) == 0:
                self.fail(
                    f"{doc_id!r} is listed as relevant but graded 0",
                    "grade it 1-3, or remove it from relevant_chunk_ids if it is superseded/irrelevant",
                )
        evidence = self._evidence(obj["evidence"]) if obj.get("evidence") is not None else ()
        tags_raw = obj.get("tags", [])
        if not isinstance(tags_raw, list) or not all(isinstance(t, str) for t in tags_raw):
            self.fail("'tags' must be a list of strings", 'e.g. ["pricing", "misspelled"]')
            tags_raw = []
        if any(p.severity == "error" for p in self.problems[before:]) or case_id is None or query is None:
            return None
        return GoldenCase(
            case_id,
            query,
            relevant,
            MappingProxyType(grades),
            tenant,
            evidence,
            answer,
            tuple(tags_raw),
            self.line,
        )


def read_golden_jsonl(path: str | Path) -> tuple[list[GoldenCase], list[Problem]]:
    """Parse every line; return the good cases and every problem (errors and warnings) found."""
    p = str(path)
    cases: list[GoldenCase] = []
    problems: list[Problem] = []
    first_line: dict[str, int] = {}
    for number, obj in iter_json_records(path, problems):
        case = _CaseParser(p, number, problems).parse(obj)
        if case is None:
            continue
        if case.id in first_line:
            problems.append(
                Problem(
                    p,
                    number,
                    f"duplicate case id {case.id!r} (first on line {first_line[case.id]})",
                    "give every case a unique id",
                )
            )
            continue
        first_line[case.id] = number
        cases.append(case)
    if not cases and not any(pr.severity == "error" for pr in problems):
        problems.append(Problem(p, None, "no cases found", "write one JSON case per line"))
    return cases, problems


def load_golden_jsonl(path: str | Path) -> Dataset:
    """Load a golden JSONL file; raise :class:`ValidationError` listing every error if any."""
    cases, problems = read_golden_jsonl(path)
    errors = [pr for pr in problems if pr.severity == "error"]
    if errors:
        raise ValidationError(errors)
    return Dataset(tuple(cases), str(path), sha256_of(path), "jsonl")
