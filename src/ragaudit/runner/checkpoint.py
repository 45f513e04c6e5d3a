"""The runner's append-only results file, and resuming an interrupted run from it.

The file is a JSONL run (:mod:`ragaudit.data.run_jsonl`, so ``ragaudit eval --run`` reads it): one
line per case, appended as the case finishes, with the runner's own fields when they say something —
``attempts`` (when not 1), ``tenant_id`` (the tenant asked for) and ``leaks`` (see
:class:`~ragaudit.data.run.LeakRecord`)::

    {"id": "q7", "retrieved": [{"chunk_id": "a#0", "score": 0.9, "tenant_id": "acme"}], "latency_ms": 41.2,
     "attempts": 2, "tenant_id": "acme"}

Chunk text and metadata are not stored (the file stays small and holds no document content).

Durability: each line goes to the OS in one write as soon as its case finishes, so a killed process
(``kill -9``) loses nothing that was written; ``fsync`` runs every ``sync_every`` lines or
``sync_interval_s`` seconds and on close, bounding what a power loss can take.

Resume: complete lines are kept and their cases are not run again; a torn last line (a crash in the
middle of a write) is cut off and its case is redone. Any other unreadable line means the file was
edited or is not a results file, and resuming is refused with file:line. A sidecar
``<file>.meta.json`` records ``top_k``, the run's name and what ran (``identity``: the dataset's
sha256 and the pipeline's config and corpus hashes, the endpoint or the retriever; see
:func:`ragaudit.evaluation.live.run_identity`); resuming with different ones is refused, naming both,
since the old lines were written by another system and the new ones would not be comparable.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ragaudit.data.lines import parse_json_line
from ragaudit.data.run import CaseRun
from ragaudit.data.run_jsonl import case_run_to_json, parse_case_run
from ragaudit.errors import InputError, Problem, ValidationError

FORMAT = "ragaudit-results/1"
META_SUFFIX = ".meta.json"


encode_line = case_run_to_json
"""One results-file line: a JSONL run line (runner fields included when they say something)."""
decode_line = parse_case_run
"""Parse one results-file line, or say what is wrong."""


def read_results(path: Path) -> tuple[dict[str, CaseRun], int]:
    """The finished cases in a results file and the byte length of its intact part.

    A torn tail (bytes after the last newline, or an unreadable last line) is left out of the intact
    part; any other unreadable line raises :class:`ValidationError`. A case written twice (a redone
    error) keeps its last line.
    """
    data = path.read_bytes()
    *complete, tail = data.split(b"\n")
    finished: dict[str, CaseRun] = {}
    problems: list[Problem] = []
    offset = 0
    intact = 0
    for number, raw in enumerate(complete, start=1):
        start, offset = offset, offset + len(raw) + 1
        is_last = number == len(complete) and not tail
        try:
            text = raw.decode("utf-8").rstrip("\r")
            if not text.strip():
                intact = offset
                continue
            decoded = decode_line(parse_json_line(str(path), number, text))
        except (UnicodeDecodeError, InputError) as exc:
            decoded = exc.problem.message if isinstance(exc, InputError) else "invalid UTF-8"
        if isinstance(decoded, str):
            if is_last and not problems:  # a crash while writing the last line: cut it off, redo it
                return finished, start
            problems.append(
                Problem(
                    str(path),
                    number,
                    decoded,
                    "resume only files the runner wrote; or start a new results file",
                )
            )
            continue
        case_id, case = decoded
        finished[case_id] = case
        intact = offset
    if problems:
        raise ValidationError(problems)
    return finished, intact


def _write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _sync_directory(path: Path) -> None:
    """Make a newly created file's directory entry durable (POSIX; a no-op where unsupported)."""
    try:
        fd = os.open(path.parent, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def check_resumable(path: str | Path, top_k: int, name: str, identity: Mapping[str, str] | None) -> None:
    """Refuse (:class:`InputError`, naming both sides) to resume ``path`` with another ``top_k``, name or
    system than the one that wrote it, as its sidecar records them; nothing to check without a sidecar."""
    p = Path(path)
    meta_path = p.with_name(p.name + META_SUFFIX)
    if p.is_file() and p.stat().st_size > 0 and meta_path.is_file():
        _check_meta(meta_path, _meta(top_k, name, identity))


def _meta(top_k: int, name: str, identity: Mapping[str, str] | None) -> dict[str, Any]:
    return {"format": FORMAT, "top_k": top_k, "name": name, "identity": dict(identity or {})}


def _check_meta(meta_path: Path, meta: dict[str, Any]) -> None:
    try:
        stored = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return  # unreadable sidecar: nothing to compare against; it is rewritten below
    if not isinstance(stored, dict):
        return
    fix = "resume with the same settings, or write the new run to a new results file"
    for key in ("top_k", "name"):
        if key in stored and stored[key] != meta[key]:
            raise InputError(
                str(meta_path),
                None,
                f"the results file was written with {key}={stored[key]!r}; this run has {key}={meta[key]!r}",
                fix,
            )
    before = stored.get("identity")
    now = meta["identity"]
    if not isinstance(before, dict):
        return  # written before identities were recorded: only top_k and the name can be compared
    differ = [k for k in sorted(set(before) | set(now)) if before.get(k) != now.get(k)]
    if differ:
        both = "; ".join(f"{k}: file {before.get(k)!r}, this run {now.get(k)!r}" for k in differ)
        raise InputError(
            str(meta_path),
            None,
            f"the results file was written by another system ({both}); its cases would be scored as "
            "this run's",
            "resume with the system that wrote it, or write this run to a new results file (--results NEW)",
        )


class ResultsWriter:
    """Appends one line per finished case; flushed per line, fsynced per batch and on close."""

    def __init__(self, path: Path, *, sync_every: int = 32, sync_interval_s: float = 1.0) -> None:
        self.path = path
        self._file = path.open("ab", buffering=0)
        self._sync_every = max(1, sync_every)
        self._sync_interval_s = sync_interval_s
        self._unsynced = 0
        self._last_sync = time.monotonic()

    def append(self, case_id: str, case: CaseRun) -> None:
        data = memoryview((encode_line(case_id, case) + "\n").encode("utf-8"))
        while data:  # one write per line in practice; loop in case the OS takes it in parts
            written = self._file.write(data)
            data = data[written or 0 :]
        self._unsynced += 1
        if self._unsynced >= self._sync_every or time.monotonic() - self._last_sync >= self._sync_interval_s:
            self.sync()

    def sync(self) -> None:
        if self._unsynced:
            os.fsync(self._file.fileno())
        self._unsynced = 0
        self._last_sync = time.monotonic()

    def close(self) -> None:
        if not self._file.closed:
            try:
                self.sync()
            finally:
                self._file.close()


def open_results(
    path: str | Path,
    *,
    resume: bool,
    top_k: int,
    name: str,
    sync_every: int = 32,
    identity: Mapping[str, str] | None = None,
) -> tuple[ResultsWriter, dict[str, CaseRun]]:
    """Open ``path`` for appending; return the writer and the cases an earlier run already finished.

    Without ``resume``, a file that already holds results is refused rather than mixed into; with it,
    a file written with another ``top_k``, name or ``identity`` (what ran) is refused.
    """
    p = Path(path)
    meta_path = p.with_name(p.name + META_SUFFIX)
    meta = _meta(top_k, name, identity)
    finished: dict[str, CaseRun] = {}
    existed = p.exists()
    if existed and p.is_dir():
        raise InputError(
            str(p), None, "is a directory, expected a results file path", "name a file inside it"
        )
    if existed and p.stat().st_size > 0:
        if not resume:
            raise InputError(
                str(p),
                None,
                "already holds results of an earlier run",
                "resume it (resume=True / --resume) or choose a new results path",
            )
        if meta_path.exists():
            _check_meta(meta_path, meta)
        finished, intact = read_results(p)
        if intact < p.stat().st_size:
            with p.open("r+b") as handle:
                handle.truncate(intact)
                os.fsync(handle.fileno())
    p.parent.mkdir(parents=True, exist_ok=True)
    _write_atomically(meta_path, json.dumps(meta) + "\n")
    writer = ResultsWriter(p, sync_every=sync_every)
    if not existed:
        _sync_directory(p)
    return writer, finished
