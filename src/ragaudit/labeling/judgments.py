"""The judgments file: an append-only, fsynced log of one annotator's labeling events.

Every action in the workbench is one JSON line, written and ``fsync``-ed before it is acknowledged, so a
killed server (even ``kill -9``) loses nothing it acknowledged; a line torn by the kill was never
acknowledged and is cut off when the file is opened again. The current labels are the replay of the log::

    {"seq": 1, "kind": "open", "annotator": "ana", "time": "...", "pool": "pool.jsonl", "pool_sha256": "..."}
    {"seq": 2, "kind": "grade", "annotator": "ana", "time": "...", "case_id": "q1", "chunk_id": "d3",
     "tenant_id": "acme", "grade": 0, "superseded": true}
    {"seq": 3, "kind": "span", ..., "case_id": "q1", "chunk_id": "d7", "doc_id": "d7", "start": 120, "end": 310}
    {"seq": 4, "kind": "unanswerable", ..., "case_id": "q2", "tenant_id": "acme", "value": true}
    {"seq": 5, "kind": "undo", ..., "target": 3}

Replay: an ``undo`` voids its target (always the latest event still in effect, so undo walks back
step by step); a pair's grade is its latest grade event in effect, its evidence every span in effect,
a case's unanswerable mark its latest such event in effect. Span offsets are into the document's text
(the golden schema's ``evidence``). One file holds one annotator: a second annotator writes their own.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ragaudit.data.lines import parse_json_line
from ragaudit.errors import InputError
from ragaudit.runner.checkpoint import _sync_directory as sync_directory

UNDOABLE = frozenset({"grade", "span", "unanswerable"})
GRADES = (0, 1, 2, 3)
SCALE = {
    3: "authoritative and complete",
    2: "relevant and helpful",
    1: "related but not sufficient",
    0: "irrelevant, or a superseded version",
}
"""The lesson's grading scale, shown in the workbench and in the docs."""

Pair = tuple[str, str]


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class LabelState:
    """The labels a log says are in effect."""

    grades: dict[Pair, dict[str, Any]] = field(default_factory=dict)
    """(case, chunk) -> the grade event in effect."""
    spans: dict[Pair, list[dict[str, Any]]] = field(default_factory=dict)
    unanswerable: dict[str, dict[str, Any]] = field(default_factory=dict)
    """case -> the unanswerable event in effect (``value`` true or false)."""
    stack: list[dict[str, Any]] = field(default_factory=list)
    """Undoable events in effect, oldest first: undo voids the last one."""
    annotators: set[str] = field(default_factory=set)

    @classmethod
    def replay(cls, events: Iterable[Mapping[str, Any]]) -> LabelState:
        events = list(events)
        voided = {e["target"] for e in events if e.get("kind") == "undo"}
        state = cls()
        for event in events:
            kind = event.get("kind")
            if event.get("annotator"):
                state.annotators.add(str(event["annotator"]))
            if kind not in UNDOABLE or event["seq"] in voided:
                continue
            state.apply(dict(event))
        return state

    def apply(self, event: dict[str, Any]) -> None:
        kind = event["kind"]
        if kind == "grade":
            self.grades[(event["case_id"], event["chunk_id"])] = event
        elif kind == "span":
            self.spans.setdefault((event["case_id"], event["chunk_id"]), []).append(event)
        elif kind == "unanswerable":
            self.unanswerable[event["case_id"]] = event
        self.stack.append(event)

    def void_last(self) -> dict[str, Any] | None:
        """Take back the latest event in effect (the state is rebuilt without it); ``None`` if none."""
        if not self.stack:
            return None
        last = self.stack.pop()
        remaining = self.stack
        self.grades, self.spans, self.unanswerable, self.stack = {}, {}, {}, []
        for event in remaining:
            self.apply(event)
        return last


def _split_torn_tail(path: Path) -> tuple[bytes, int]:
    """The file's complete lines and the size of a torn last line (one a kill cut before its newline)."""
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    return data[:end], len(data) - end


def read_events(path: str | Path) -> list[dict[str, Any]]:
    """Every complete event of a judgments file, in order (a torn last line is ignored)."""
    p = Path(path)
    if not p.is_file():
        raise InputError(str(p), None, "judgments file not found", "check the path")
    complete, _ = _split_torn_tail(p)
    events: list[dict[str, Any]] = []
    for number, raw in enumerate(complete.decode("utf-8", errors="replace").splitlines(), start=1):
        if not raw.strip():
            continue
        obj = parse_json_line(str(p), number, raw)
        if not isinstance(obj, dict) or not isinstance(obj.get("seq"), int) or "kind" not in obj:
            raise InputError(str(p), number, "not a judgment event", "pass files written by 'ragaudit label'")
        events.append(obj)
    return events


class JudgmentLog:
    """One annotator's judgments file, opened for appending (resumes what is already there)."""

    def __init__(self, path: str | Path, annotator: str, pool_info: Mapping[str, Any]) -> None:
        self.path = Path(path)
        self.annotator = annotator
        self._lock = threading.RLock()
        self.events: list[dict[str, Any]] = []
        if self.path.exists():
            complete, torn = _split_torn_tail(self.path)
            if torn:  # never acknowledged: a kill cut it before its newline reached the disk
                with self.path.open("r+b") as handle:
                    handle.truncate(len(complete))
            self.events = read_events(self.path)
        others = {str(e.get("annotator")) for e in self.events} - {annotator}
        if others:
            raise InputError(
                str(self.path),
                None,
                f"this file holds the judgments of {', '.join(sorted(others))}, not {annotator!r}",
                "give each annotator their own --out file (or pass their --annotator name to resume)",
            )
        self.path.parent.mkdir(parents=True, exist_ok=True)
        created = not self.path.exists()
        self._handle = self.path.open("ab")
        if created:
            sync_directory(self.path)
        self.state = LabelState.replay(self.events)
        self.append({"kind": "open", **dict(pool_info)})

    @property
    def next_seq(self) -> int:
        return (self.events[-1]["seq"] + 1) if self.events else 1

    def append(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        """Write one event and fsync it; return it once it is on disk (only then is it acknowledged)."""
        with self._lock:
            event = {"seq": self.next_seq, "annotator": self.annotator, "time": now_iso(), **dict(fields)}
            line = (json.dumps(event, ensure_ascii=False) + "\n").encode("utf-8")
            self._handle.write(line)
            self._handle.flush()
            os.fsync(self._handle.fileno())
            self.events.append(event)
            if event["kind"] in UNDOABLE:
                self.state.apply(event)
            return event

    def undo(self) -> dict[str, Any] | None:
        """Void the latest event in effect (logged as an ``undo`` event); return it, or ``None``."""
        with self._lock:
            if not self.state.stack:
                return None
            target = self.state.stack[-1]
            self.append({"kind": "undo", "target": target["seq"]})
            self.state.void_last()
            return target

    def close(self) -> None:
        self._handle.close()


@dataclass(frozen=True)
class AnnotatorLabels:
    """One judgments file read back: who, and the labels in effect."""

    path: str
    annotator: str
    state: LabelState
    events: list[dict[str, Any]]


def read_labels(path: str | Path) -> AnnotatorLabels:
    """Read a judgments file and replay it."""
    events = read_events(path)
    state = LabelState.replay(events)
    names = sorted(state.annotators)
    if len(names) != 1:
        found = ", ".join(names) or "none"
        raise InputError(
            str(path),
            None,
            f"expected one annotator per file (found: {found})",
            "label into one file per annotator",
        )
    return AnnotatorLabels(str(path), names[0], state, events)
