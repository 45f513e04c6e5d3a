"""Golden JSONL: every problem reported at once with file:line and a fix; the valid cases load typed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import write_lines
from ragaudit.data.golden_jsonl import load_golden_jsonl, read_golden_jsonl
from ragaudit.errors import ValidationError

GOOD = {
    "id": "pricing-001",
    "query": "API limit of the Professional plan?",
    "tenant_id": "acme",
    "relevant_chunk_ids": ["pro-v3"],
    "relevance": {"pro-v3": 3, "starter-v2": 1, "pro-v2": 0},
    "evidence": [{"doc_id": "pro", "start": 3, "end": 40, "grade": 3}],
    "answer": "50,000",
    "tags": ["pricing"],
}


def test_valid_case_loads_with_every_field(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "g.jsonl",
        [json.dumps(GOOD), json.dumps({"id": "u1", "query": "x?", "relevant_chunk_ids": []})],
    )
    ds = load_golden_jsonl(path)
    case, probe = ds.cases
    assert case.tenant_id == "acme" and case.answer == "50,000" and case.tags == ("pricing",)
    assert case.relevant_set() == {"pro-v3"} and case.grades()["pro-v2"] == 0
    assert case.evidence[0].end == 40 and case.line == 1
    assert not probe.is_answerable() and probe.line == 2
    assert len(ds.sha256) == 64 and ds.format == "jsonl"


def test_relevant_id_without_grade_gets_grade_one_and_grades_only_use_the_threshold(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "g.jsonl",
        [
            json.dumps({"id": "a", "query": "q", "relevant_chunk_ids": ["x"]}),
            json.dumps({"id": "b", "query": "q", "relevance": {"x": 1, "y": 2, "z": 0}}),
        ],
    )
    a, b = load_golden_jsonl(path).cases
    assert a.grades() == {"x": 1}
    assert b.relevant_set(1) == {"x", "y"} and b.relevant_set(2) == {"y"}


def test_every_problem_is_reported_with_its_line(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "bad.jsonl",
        [
            json.dumps(GOOD),
            "{not json",
            json.dumps({"id": "x", "relevant_chunk_ids": ["a"]}),  # no query
            json.dumps({"id": "y", "query": "q", "relevance": {"a": -2}}),  # negative grade
            json.dumps(
                {"id": "z", "query": "q", "relevant_chunk_ids": ["a"], "relevance": {"a": 0}}
            ),  # inconsistent
            json.dumps(GOOD),  # duplicate id
            json.dumps({"id": "w", "query": "q"}),  # no labels
            json.dumps(
                {
                    "id": "v",
                    "query": "q",
                    "relevant_chunk_ids": [],
                    "evidence": [{"doc_id": "d", "start": 5, "end": 2}],
                }
            ),
            json.dumps([1, 2]),
            json.dumps({"id": "t", "query": "q", "relevance": {"a": "high"}}),
        ],
    )
    _, problems = read_golden_jsonl(path)
    by_line = {p.line: p for p in problems if p.severity == "error"}
    assert set(by_line) == {2, 3, 4, 5, 6, 7, 8, 9, 10}
    assert "malformed JSON" in by_line[2].message
    assert "'query'" in by_line[3].message
    assert "negative grade" in by_line[4].message and "use 0" in by_line[4].fix
    assert "graded 0" in by_line[5].message
    assert "duplicate case id" in by_line[6].message and "line 1" in by_line[6].message
    assert "no labels" in by_line[7].message
    assert "evidence[0]" in by_line[8].message
    assert "JSON object" in by_line[9].message
    assert "integer" in by_line[10].message
    assert all(str(p).startswith(f"{path}:") and p.fix for p in by_line.values())
    with pytest.raises(ValidationError) as info:
        load_golden_jsonl(path)
    assert len(info.value.problems) == 9


def test_bom_crlf_blank_lines_and_invalid_utf8(tmp_path: Path) -> None:
    path = tmp_path / "g.jsonl"
    path.write_bytes(
        b"\xef\xbb\xbf" + json.dumps(GOOD).encode() + b"\r\n\r\n" + b'{"id": "\xff\xfe", "query": "q"}\r\n'
    )
    cases, problems = read_golden_jsonl(path)
    assert [c.id for c in cases] == ["pricing-001"]
    assert len(problems) == 1 and problems[0].line == 3 and "UTF-8" in problems[0].message


def test_nan_and_unknown_fields(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "g.jsonl",
        [
            '{"id": "a", "query": "q", "relevance": {"x": NaN}}',
            json.dumps({"id": "b", "query": "q", "relevant_chunk_ids": ["x"], "relevnce": {}}),
        ],
    )
    cases, problems = read_golden_jsonl(path)
    assert [c.id for c in cases] == ["b"]
    assert problems[0].line == 1 and "malformed JSON" in problems[0].message
    assert problems[1].severity == "warning" and "relevnce" in problems[1].message


def test_empty_file_is_an_error(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "g.jsonl", ["", "  "])
    with pytest.raises(ValidationError, match="no cases"):
        load_golden_jsonl(path)


def test_case_round_trips_through_json(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "g.jsonl", [json.dumps(GOOD)])
    case = load_golden_jsonl(path).cases[0]
    again = write_lines(tmp_path / "h.jsonl", [json.dumps(case.to_json())])
    assert load_golden_jsonl(again).cases[0].to_json() == case.to_json() == GOOD
