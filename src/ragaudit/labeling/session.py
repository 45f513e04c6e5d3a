"""What the workbench does, apart from HTTP: the pool it shows, the actions it accepts, the state it reports.

Span offsets travel between the page and here as offsets into the candidate's text; they are stored as
offsets into the document (the candidate's ``start`` added), which is what the golden schema's
``evidence`` holds. A candidate whose place in its document is unknown keeps its own id and offsets.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ragaudit.errors import BadAction
from ragaudit.labeling.judgments import GRADES, SCALE, AnnotatorLabels, JudgmentLog
from ragaudit.labeling.pool import Candidate, Pool, PoolCase


class LabelSession:
    """One annotator labeling one pool into one judgments file."""

    def __init__(self, pool: Pool, log: JudgmentLog, others: Sequence[AnnotatorLabels] = ()) -> None:
        self.pool = pool
        self.log = log
        self.others = list(others)
        self.cases: dict[str, PoolCase] = {c.case_id: c for c in pool.cases}
        self.candidates: dict[tuple[str, str], Candidate] = {
            (c.case_id, cand.chunk_id): cand for c in pool.cases for cand in c.candidates
        }
        self._pool_bytes: bytes | None = None

    # ---- what the page loads -------------------------------------------------------------------
    def _other_grades(self, case_id: str, chunk_id: str) -> dict[str, int]:
        out: dict[str, int] = {}
        for other in self.others:
            event = other.state.grades.get((case_id, chunk_id))
            if event is not None:
                out[other.annotator] = int(event["grade"])
        return out

    def pool_payload(self) -> bytes:
        """The pool as the page needs it (computed once: it does not change during a session)."""
        if self._pool_bytes is None:
            cases = []
            for case in self.pool.cases:
                candidates = []
                for cand in case.candidates:
                    item = cand.to_json()
                    if self.others:
                        item["others"] = self._other_grades(case.case_id, cand.chunk_id)
                    candidates.append(item)
                cases.append(
                    {
                        "case_id": case.case_id,
                        "query": case.query,
                        "tenant_id": case.tenant_id,
                        "prior_unanswerable": case.unanswerable,
                        "draft": case.draft,
                        "candidates": candidates,
                    }
                )
            payload = {
                "annotator": self.log.annotator,
                "scale": {str(g): SCALE[g] for g in sorted(SCALE, reverse=True)},
                "adjudicating": [o.annotator for o in self.others],
                "header": self.pool.header,
                "cases": cases,
            }
            self._pool_bytes = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        return self._pool_bytes

    def pair_state(self, case_id: str, chunk_id: str) -> dict[str, Any]:
        """The grade and spans in effect for one candidate (spans as offsets into its text)."""
        event = self.log.state.grades.get((case_id, chunk_id))
        base = self._base(case_id, chunk_id)
        spans = [
            {"start": s["start"] - base, "end": s["end"] - base, "seq": s["seq"]}
            for s in self.log.state.spans.get((case_id, chunk_id), [])
        ]
        grade = None if event is None else {"grade": event["grade"], "superseded": event["superseded"]}
        return {"case_id": case_id, "chunk_id": chunk_id, "judgment": grade, "spans": spans}

    def case_state(self, case_id: str) -> dict[str, Any]:
        event = self.log.state.unanswerable.get(case_id)
        return {"case_id": case_id, "unanswerable": bool(event and event["value"])}

    def state_payload(self) -> dict[str, Any]:
        pairs = {(c, k) for c, k in self.log.state.grades} | set(self.log.state.spans)
        return {
            "pairs": [self.pair_state(c, k) for c, k in sorted(pairs)],
            "cases": [self.case_state(c) for c in sorted(self.log.state.unanswerable)],
            "events": len(self.log.events),
        }

    # ---- actions -------------------------------------------------------------------------------
    def _candidate(self, body: Mapping[str, Any]) -> tuple[str, str, Candidate]:
        case_id, chunk_id = body.get("case_id"), body.get("chunk_id")
        cand = self.candidates.get((str(case_id), str(chunk_id)))
        if cand is None:
            raise BadAction(f"no candidate {chunk_id!r} in case {case_id!r} of this pool")
        return str(case_id), str(chunk_id), cand

    def _base(self, case_id: str, chunk_id: str) -> int:
        cand = self.candidates.get((case_id, chunk_id))
        return cand.text.start if cand is not None and cand.text.start is not None else 0

    def judge(self, body: Mapping[str, Any]) -> dict[str, Any]:
        case_id, chunk_id, _ = self._candidate(body)
        grade, superseded = body.get("grade"), bool(body.get("superseded", False))
        if not isinstance(grade, int) or isinstance(grade, bool) or grade not in GRADES:
            raise BadAction(f"grade must be one of 0, 1, 2, 3 (got {grade!r})")
        if superseded and grade != 0:
            raise BadAction("a superseded version is graded 0")
        tenant = self.cases[case_id].tenant_id
        self.log.append(
            {
                "kind": "grade",
                "case_id": case_id,
                "chunk_id": chunk_id,
                "tenant_id": tenant,
                "grade": grade,
                "superseded": superseded,
            }
        )
        return self.pair_state(case_id, chunk_id)

    def span(self, body: Mapping[str, Any]) -> dict[str, Any]:
        case_id, chunk_id, cand = self._candidate(body)
        start, end = body.get("start"), body.get("end")
        size = len(cand.text.text)
        if (
            not isinstance(start, int)
            or not isinstance(end, int)
            or isinstance(start, bool)
            or isinstance(end, bool)
            or not 0 <= start < end <= size
        ):
            raise BadAction(f"a span needs 0 <= start < end <= {size} (got {start!r}, {end!r})")
        base = cand.text.start if cand.text.start is not None else 0
        self.log.append(
            {
                "kind": "span",
                "case_id": case_id,
                "chunk_id": chunk_id,
                "tenant_id": self.cases[case_id].tenant_id,
                "doc_id": cand.text.doc_id or chunk_id,
                "start": base + start,
                "end": base + end,
            }
        )
        return self.pair_state(case_id, chunk_id)

    def unanswerable(self, body: Mapping[str, Any]) -> dict[str, Any]:
        case_id = str(body.get("case_id"))
        if case_id not in self.cases:
            raise BadAction(f"no case {case_id!r} in this pool")
        value = body.get("value")
        if not isinstance(value, bool):
            raise BadAction(f"value must be true or false (got {value!r})")
        self.log.append(
            {
                "kind": "unanswerable",
                "case_id": case_id,
                "tenant_id": self.cases[case_id].tenant_id,
                "value": value,
            }
        )
        return self.case_state(case_id)

    def undo(self) -> dict[str, Any]:
        """Take back the latest action; the answer names it and gives the state it leaves behind."""
        target = self.log.undo()
        if target is None:
            return {"undone": None}
        out: dict[str, Any] = {
            "undone": {"kind": target["kind"], "case_id": target["case_id"], "seq": target["seq"]}
        }
        if target["kind"] == "unanswerable":
            out["case"] = self.case_state(target["case_id"])
        else:
            out["undone"]["chunk_id"] = target["chunk_id"]
            out["pair"] = self.pair_state(target["case_id"], target["chunk_id"])
        return out
