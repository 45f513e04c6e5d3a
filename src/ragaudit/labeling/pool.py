"""TREC depth-k pooling: the candidates a human should judge for each case.

The pool of a case is the union of every system's top ``depth`` results (each system's ranking with
repeated ids counted once). Each candidate keeps the systems that found it and the rank each gave it,
its text (so the workbench needs no corpus), where that text sits in its document (``doc_id`` and the
``start`` offset, for evidence spans) and the grade the existing golden set already gives it, if any
(carried over: not to be judged again). Grades of documents no system found are kept on the case too,
so a merged golden set loses none of them.

Pool file (JSONL): a header line ``{"ragaudit_pool": 1, "depth": ..., "systems": [...], ...}``, then
one case per line::

    {"case_id": "acme-pricing-001", "query": "...", "tenant_id": "acme",
     "judged": {"acme-pricing-professional-v2": 0}, "unanswerable": false,
     "candidates": [{"chunk_id": "acme-pricing-professional-v3", "doc_id": "acme-pricing-professional-v3",
                     "start": 0, "title": "...", "text": "...", "metadata": {...},
                     "found_by": {"bm25": 1, "dense": 2}, "prior_grade": 3}]}

Candidates are ordered by their best rank, then by how many systems found them, then by id.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragaudit.data.lines import iter_json_records
from ragaudit.data.run import Run
from ragaudit.data.schema import GoldenCase
from ragaudit.errors import InputError, Problem, ValidationError
from ragaudit.labeling.siblings import Versions

POOL_VERSION = 1


@dataclass(frozen=True)
class ChunkText:
    """What the annotator sees of one candidate, and where its text sits in its document."""

    doc_id: str | None
    start: int | None
    title: str
    text: str
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class Candidate:
    chunk_id: str
    text: ChunkText
    found_by: dict[str, int] = field(default_factory=dict)
    """System name -> 1-based rank."""
    prior_grade: int | None = None
    versions: Versions | None = None
    """Newer and older versions of this candidate's document (:mod:`ragaudit.labeling.siblings`)."""
    suggested_grade: int | None = None
    """A model's suggested grade (:mod:`ragaudit.labeling.suggest`): shown, never taken as a label."""

    @property
    def best_rank(self) -> int:
        return min(self.found_by.values()) if self.found_by else 10**9

    def to_json(self) -> dict[str, Any]:
        return {
            "chunk_id": self.chunk_id,
            "doc_id": self.text.doc_id,
            "start": self.text.start,
            "title": self.text.title,
            "text": self.text.text,
            "metadata": dict(self.text.metadata),
            "found_by": self.found_by,
            "prior_grade": self.prior_grade,
            "versions": self.versions.to_json() if self.versions is not None else None,
            "suggested_grade": self.suggested_grade,
        }


@dataclass
class PoolCase:
    case_id: str
    query: str
    tenant_id: str | None
    candidates: list[Candidate]
    judged: dict[str, int] = field(default_factory=dict)
    """Every grade the existing golden set gives this case (found by a system or not)."""
    unanswerable: bool = False
    """The existing golden set marks the case unanswerable (``relevant_chunk_ids: []``)."""
    draft: str | None = None
    """``"unanswerable"`` for a drafted probe: kept only if the annotator marks it unanswerable."""

    @property
    def unjudged(self) -> int:
        return sum(1 for c in self.candidates if c.prior_grade is None)

    def to_json(self) -> dict[str, Any]:
        return {
            "case_id": self.case_id,
            "query": self.query,
            "tenant_id": self.tenant_id,
            "judged": self.judged,
            "unanswerable": self.unanswerable,
            "draft": self.draft,
            "candidates": [c.to_json() for c in self.candidates],
        }


@dataclass
class Pool:
    cases: list[PoolCase]
    header: dict[str, Any] = field(default_factory=dict)

    @property
    def candidates(self) -> int:
        return sum(len(c.candidates) for c in self.cases)

    @property
    def unjudged(self) -> int:
        return sum(c.unjudged for c in self.cases)

    def judged_share(self) -> dict[str, float]:
        """Per system, Judged@depth before labeling: the mean over cases of the share of its pooled top
        ``depth`` that the existing golden set already grades (cases it returned nothing for are left out).
        Below 1, that system's scores on the existing set are lower bounds (unjudged counts as irrelevant)."""
        shares: dict[str, list[float]] = {}
        for case in self.cases:
            found: dict[str, list[bool]] = {}
            for cand in case.candidates:
                for system in cand.found_by:
                    found.setdefault(system, []).append(cand.prior_grade is not None)
            for system, judged in found.items():
                shares.setdefault(system, []).append(sum(judged) / len(judged))
        order = [s for s in self.header.get("systems", []) if s in shares] + sorted(
            set(shares) - set(self.header.get("systems", []))
        )
        return {system: sum(shares[system]) / len(shares[system]) for system in order}

    def write(self, path: str | Path) -> None:
        """Write the pool file (header line, then one case per line), replacing ``path`` atomically."""
        target = Path(path)
        tmp = target.with_name(target.name + ".tmp")
        with tmp.open("w", encoding="utf-8") as out:
            out.write(json.dumps({"ragaudit_pool": POOL_VERSION, **self.header}) + "\n")
            for case in self.cases:
                out.write(json.dumps(case.to_json(), ensure_ascii=False) + "\n")
        tmp.replace(target)


def top_unique(run: Run, case_id: str, depth: int) -> list[str]:
    """A system's first ``depth`` distinct ids for one case (a repeated id keeps its first rank)."""
    case_run = run.cases.get(case_id)
    if case_run is None:
        return []
    return list(dict.fromkeys(item.chunk_id for item in case_run.items))[:depth]


def _is_unanswerable(case: GoldenCase) -> bool:
    return case.relevant_chunk_ids is not None and not case.relevant_chunk_ids


def build_pool(
    cases: Iterable[GoldenCase],
    runs: Mapping[str, Run],
    depth: int,
    texts: Mapping[str, ChunkText],
    header: Mapping[str, Any] | None = None,
    *,
    versions: Mapping[str, Versions] | None = None,
    drafts: Iterable[str] = (),
) -> Pool:
    """Pool the top ``depth`` of every run in ``runs`` (system name -> run) for each case.

    ``texts`` maps a chunk id to what the annotator sees; an id missing from it is pooled with an
    empty text (the workbench says so). Grades the cases already carry are attached as ``prior_grade``;
    ``versions`` (document id -> its versions) marks version siblings; cases whose id is in ``drafts``
    are drafted unanswerable probes.
    """
    drafted = set(drafts)
    if depth <= 0:
        raise ValueError(f"depth must be a positive integer (got {depth})")
    pooled: list[PoolCase] = []
    for case in cases:
        grades = case.grades()
        found: dict[str, Candidate] = {}
        for system, run in runs.items():
            for rank, chunk_id in enumerate(top_unique(run, case.id, depth), start=1):
                candidate = found.get(chunk_id)
                if candidate is None:
                    text = texts.get(chunk_id, ChunkText(None, None, "", ""))
                    sibling = (versions or {}).get(text.doc_id or chunk_id)
                    candidate = Candidate(chunk_id, text, prior_grade=grades.get(chunk_id), versions=sibling)
                    found[chunk_id] = candidate
                candidate.found_by[system] = rank
        ordered = sorted(found.values(), key=lambda c: (c.best_rank, -len(c.found_by), c.chunk_id))
        pooled.append(
            PoolCase(
                case.id,
                case.query,
                case.tenant_id,
                ordered,
                dict(grades),
                _is_unanswerable(case),
                "unanswerable" if case.id in drafted else None,
            )
        )
    return Pool(pooled, {"depth": depth, "systems": list(runs), **dict(header or {})})


def _candidate(raw: Any) -> Candidate:
    text = ChunkText(
        raw.get("doc_id"),
        raw.get("start"),
        str(raw.get("title") or ""),
        str(raw.get("text") or ""),
        raw.get("metadata") or {},
    )
    found = {str(k): int(v) for k, v in (raw.get("found_by") or {}).items()}
    prior = raw.get("prior_grade")
    v = raw.get("versions")
    versions = (
        Versions(str(v["group"]), tuple(v["newer"]), tuple(v["older"])) if isinstance(v, dict) else None
    )
    suggested = raw.get("suggested_grade")
    return Candidate(
        str(raw["chunk_id"]),
        text,
        found,
        prior if isinstance(prior, int) else None,
        versions,
        suggested if isinstance(suggested, int) and not isinstance(suggested, bool) else None,
    )


def load_pool(path: str | Path) -> Pool:
    """Read a pool file written by :meth:`Pool.write` (``ragaudit pool``); every bad line is reported."""
    problems: list[Problem] = []
    header: dict[str, Any] = {}
    cases: list[PoolCase] = []
    seen: set[str] = set()
    for number, obj in iter_json_records(path, problems):
        if isinstance(obj, dict) and "ragaudit_pool" in obj:
            header = {k: v for k, v in obj.items() if k != "ragaudit_pool"}
            continue
        try:
            case = PoolCase(
                str(obj["case_id"]),
                str(obj.get("query") or ""),
                obj.get("tenant_id"),
                [_candidate(c) for c in obj.get("candidates") or []],
                {str(k): int(v) for k, v in (obj.get("judged") or {}).items()},
                bool(obj.get("unanswerable", False)),
                obj.get("draft") if isinstance(obj.get("draft"), str) else None,
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            problems.append(
                Problem(
                    str(path),
                    number,
                    f"not a pool case ({type(exc).__name__}: {exc})",
                    "write the pool with 'ragaudit pool'",
                )
            )
            continue
        if case.case_id in seen:
            problems.append(Problem(str(path), number, f"duplicate case {case.case_id!r}", "pool it once"))
            continue
        seen.add(case.case_id)
        cases.append(case)
    if problems:
        raise ValidationError(problems)
    if not cases:
        raise InputError(str(path), None, "the pool has no cases", "write the pool with 'ragaudit pool'")
    return Pool(cases, header)
