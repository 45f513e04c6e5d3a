"""Run history: every evaluation recorded in an SQLite file that lives in the user's repository.

Where the file is (decided once, the same for every command):

1. ``path`` when given (``ragaudit history --history FILE``);
2. else ``$RAGAUDIT_HISTORY`` when set;
3. else ``.ragaudit/history.sqlite`` under the **git top-level** of the current directory (found by
   walking up to the folder holding ``.git``), so running from a sub-folder of a repository adds to
   the same history; outside a repository, under the current directory.

What a run records: when the report was made, the dataset (sha256 and path), the pipeline or run name
and its config hash, the metric policy, every mean metric, the case counts, the number of cross-tenant
leaks, the tenant-isolation verdict in three states (``pass``, ``fail``, ``not_verified``) with its
reason (a run recorded before verdicts had three states reads back as ``not_verified``), latency p95, the ragaudit version and the git commit (and whether the working tree had local
changes) of the user's repository: the report's provenance, else ``git`` asked in the current directory.
Recording the same report twice is a no-op (reports are keyed by the sha256 of their canonical JSON,
:func:`ragaudit.artifacts.json_text.canonical_bytes`: sorted keys, NaN as ``null``, so a report and its
file give one key).
A run may carry a ``key`` (``ragaudit eval --results FILE`` uses the results file): a resumed run
(``replaces=True``) takes the place of the entry of the run it continues, so one run is one entry
however many times it was resumed; a new run under the same key starts a new entry.

In-sample reports are not recorded: a fitted stage scored on the cases it was fitted on
(:mod:`ragaudit.artifacts.in_sample`) flatters itself, and a trend must not mix such figures with
honest ones. :func:`record_run` says so instead of recording.

Comparability: a metric value only means something against the same golden set scored under the same
policy. :func:`series` therefore groups runs by **dataset sha256 and policy** first and by pipeline
name second; runs on different dataset hashes are never put in one series, whatever their path says.
A change of pipeline config inside a series (same name, new ``config_sha256``) is kept and flagged.
A live run that asked for fewer results than a metric's cut-off (``--top-k 5`` with ``nDCG@10``) scored
that metric on a shorter list than its name says: its policy gains ``scored_depth`` (the ``top_k``), so
it starts a series of its own instead of showing as a dip in the full-depth trend.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ragaudit.artifacts.in_sample import HOLDOUT_FIX, is_in_sample
from ragaudit.artifacts.json_text import canonical_bytes
from ragaudit.artifacts.provenance import recorded_top_k, sha256_of
from ragaudit.errors import InputError
from ragaudit.verdict import STATES, VerdictState, isolation_of

ADDED_COLUMNS = {"isolation": "TEXT", "isolation_reason": "TEXT", "run_key": "TEXT"}
"""Columns added after schema version 1 (``run_key``: version 3); an older history file gains them when opened."""

HISTORY_ENV = "RAGAUDIT_HISTORY"
HISTORY_FILE = Path(".ragaudit") / "history.sqlite"
SCHEMA_VERSION = 3

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    report_sha256 TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    kind TEXT NOT NULL,
    dataset_sha256 TEXT NOT NULL,
    dataset_path TEXT,
    pipeline TEXT NOT NULL,
    config_sha256 TEXT,
    policy_json TEXT NOT NULL,
    policy_sha256 TEXT NOT NULL,
    counts_json TEXT NOT NULL,
    leaks INTEGER NOT NULL,
    isolation TEXT,
    isolation_reason TEXT,
    latency_p95_ms REAL,
    git_commit TEXT,
    git_dirty INTEGER,
    ragaudit_version TEXT
);
CREATE TABLE IF NOT EXISTS metrics (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    value REAL,
    PRIMARY KEY (run_id, name)
);
CREATE INDEX IF NOT EXISTS runs_by_series ON runs (dataset_sha256, pipeline, created_at);
"""


def repo_root(start: str | Path | None = None) -> Path | None:
    """The nearest folder at or above ``start`` (default: the current directory) holding ``.git``."""
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    return None


def default_history_path(cwd: str | Path | None = None) -> Path:
    """``$RAGAUDIT_HISTORY``, else ``.ragaudit/history.sqlite`` under the git top-level or ``cwd``."""
    env = os.environ.get(HISTORY_ENV)
    if env:
        return Path(env).expanduser()
    base = Path(cwd) if cwd is not None else Path.cwd()
    return (repo_root(base) or base) / HISTORY_FILE


def git_of(report: Mapping[str, Any], cwd: str | Path | None = None) -> tuple[str | None, bool | None]:
    """``(commit, dirty)``: the report's provenance when it has one, else the repository around ``cwd``
    (:func:`ragaudit.artifacts.provenance.git_state`); ``(None, None)`` outside a repository."""
    provenance = report.get("provenance")
    git = provenance.get("git") if isinstance(provenance, Mapping) else None
    if not isinstance(git, Mapping):
        from ragaudit.artifacts.provenance import git_state

        git = git_state(str(cwd) if cwd is not None else None) or {}
    commit, dirty = git.get("commit"), git.get("dirty")
    return (commit if isinstance(commit, str) else None, dirty if isinstance(dirty, bool) else None)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def _sha(value: Any) -> str:
    return hashlib.sha256(_canonical(value).encode()).hexdigest()


def _finite(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


@dataclass(frozen=True)
class HistoryRun:
    """One recorded evaluation."""

    id: int
    created_at: str
    kind: str
    dataset_sha256: str
    dataset_path: str | None
    pipeline: str
    config_sha256: str | None
    policy: dict[str, Any]
    metrics: dict[str, float | None]
    counts: dict[str, Any]
    leaks: int
    latency_p95_ms: float | None
    git_commit: str | None
    git_dirty: bool | None
    ragaudit_version: str | None
    isolation: VerdictState = "not_verified"
    """The tenant-isolation verdict of the run: ``pass``, ``fail`` or ``not_verified``."""
    isolation_reason: str | None = None

    @property
    def policy_key(self) -> str:
        return _sha(self.policy)


@dataclass(frozen=True)
class Series:
    """Runs of one pipeline on one dataset (by sha256) under one metric policy, oldest first."""

    dataset_sha256: str
    dataset_path: str | None
    policy: dict[str, Any]
    pipeline: str
    runs: tuple[HistoryRun, ...]

    def values(self, metric: str) -> list[float | None]:
        return [run.metrics.get(metric) for run in self.runs]


@dataclass
class History:
    """An open history file; use as a context manager or call :meth:`close`."""

    path: Path
    _db: sqlite3.Connection = field(repr=False)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> History:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def record(
        self,
        report: Mapping[str, Any],
        *,
        cwd: str | Path | None = None,
        key: str | None = None,
        replaces: bool = False,
    ) -> int:
        """Store one eval report; return its run id (the existing id when it was recorded before).

        ``key`` names the run across invocations; with ``replaces`` the entries recorded under ``key``
        are removed first (a resumed run replaces the entry of the run it continues), without it
        they lose the key (a new run under the same key starts a new entry)."""
        row = _row_of(report, cwd)
        row["run_key"] = key
        with self._db:
            if key is not None:
                self._forget(key, delete=replaces)
            cursor = self._db.execute(
                f"INSERT OR IGNORE INTO runs ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                tuple(row.values()),
            )
            if cursor.rowcount == 0:
                found = self._db.execute(
                    "SELECT id FROM runs WHERE report_sha256 = ?", (row["report_sha256"],)
                ).fetchone()
                return int(found[0])
            run_id = int(cursor.lastrowid or 0)
            self._db.executemany(
                "INSERT INTO metrics (run_id, name, value) VALUES (?, ?, ?)",
                [(run_id, str(name), _finite(value)) for name, value in dict(report["metrics"]).items()],
            )
        return run_id

    def keyed(self, key: str) -> list[int]:
        """The ids of the runs recorded under ``key``."""
        return [int(r[0]) for r in self._db.execute("SELECT id FROM runs WHERE run_key = ?", (key,))]

    def _forget(self, key: str, *, delete: bool) -> None:
        if not delete:
            self._db.execute("UPDATE runs SET run_key = NULL WHERE run_key = ?", (key,))
            return
        ids = [(run_id,) for run_id in self.keyed(key)]
        self._db.executemany("DELETE FROM metrics WHERE run_id = ?", ids)
        self._db.executemany("DELETE FROM runs WHERE id = ?", ids)

    def runs(
        self,
        *,
        dataset: str | None = None,
        pipeline: str | None = None,
        metrics: Sequence[str] | None = None,
    ) -> list[HistoryRun]:
        """Recorded runs, oldest first; ``dataset`` is a sha256 prefix, a dataset file or a stored path."""
        where, params = [], []
        if pipeline is not None:
            where.append("pipeline = ?")
            params.append(pipeline)
        if dataset is not None:
            clause, args = _dataset_filter(dataset)
            where.append(clause)
            params += args
        sql = "SELECT * FROM runs" + (f" WHERE {' AND '.join(where)}" if where else "")
        rows = self._db.execute(sql + " ORDER BY created_at, id", params).fetchall()
        wanted = set(metrics) if metrics else None
        out = []
        for r in rows:
            values = {
                name: value
                for name, value in self._db.execute(
                    "SELECT name, value FROM metrics WHERE run_id = ? ORDER BY rowid", (r["id"],)
                )
                if wanted is None or name in wanted
            }
            out.append(
                HistoryRun(
                    id=r["id"],
                    created_at=r["created_at"],
                    kind=r["kind"],
                    dataset_sha256=r["dataset_sha256"],
                    dataset_path=r["dataset_path"],
                    pipeline=r["pipeline"],
                    config_sha256=r["config_sha256"],
                    policy=json.loads(r["policy_json"]),
                    metrics=values,
                    counts=json.loads(r["counts_json"]),
                    leaks=r["leaks"],
                    latency_p95_ms=r["latency_p95_ms"],
                    git_commit=r["git_commit"],
                    git_dirty=None if r["git_dirty"] is None else bool(r["git_dirty"]),
                    ragaudit_version=r["ragaudit_version"],
                    isolation=_state(r["isolation"]),
                    isolation_reason=r["isolation_reason"]
                    or (None if r["isolation"] else "recorded before isolation verdicts were kept"),
                )
            )
        return out


def _state(value: object) -> VerdictState:
    for state in STATES:
        if value == state:
            return state
    return "not_verified"


def _dataset_filter(dataset: str) -> tuple[str, list[str]]:
    """A file on disk is matched by its content hash; otherwise a sha256 prefix or the stored path."""
    p = Path(dataset)
    if p.is_file():
        return "dataset_sha256 = ?", [sha256_of(p)]
    text = dataset.strip().lower()
    if len(text) >= 6 and all(ch in "0123456789abcdef" for ch in text):
        return "dataset_sha256 LIKE ?", [text + "%"]
    return "dataset_path = ?", [dataset]


def _row_of(report: Mapping[str, Any], cwd: str | Path | None) -> dict[str, Any]:
    dataset = report.get("dataset")
    metrics = report.get("metrics")
    if not isinstance(dataset, Mapping) or not dataset.get("sha256") or not isinstance(metrics, Mapping):
        raise InputError(
            "history",
            None,
            f"a {report.get('kind', 'non-eval')!r} report cannot be recorded (no dataset sha256 or metrics)",
            "record eval reports (written by 'ragaudit eval --out')",
        )
    if is_in_sample(report):
        raise InputError(
            "history",
            None,
            "an IN-SAMPLE report (a fitted stage scored on the cases it was fitted on) is kept out of the "
            "history trends",
            HOLDOUT_FIX,
        )
    run, pipeline_info = _mapping(report, "run"), _mapping(report, "pipeline")
    security, latency = _mapping(report, "security"), _mapping(report, "latency_ms")
    leaks = security.get("leaks", 0)
    commit, dirty = git_of(report, cwd)
    isolation = isolation_of(report)
    provenance_pipeline = _mapping(_mapping(report, "provenance"), "pipeline")
    policy = dict(report.get("policy") or {})
    depth = _cut_depth(report)
    if depth is not None:
        policy["scored_depth"] = depth
    return {
        "report_sha256": hashlib.sha256(canonical_bytes(report)).hexdigest(),
        "created_at": str(report.get("created_at") or _now()),
        "recorded_at": _now(),
        "kind": str(report.get("kind", "eval")),
        "dataset_sha256": str(dataset["sha256"]),
        "dataset_path": str(dataset["path"]) if dataset.get("path") else None,
        "pipeline": str(run.get("name") or pipeline_info.get("name") or "run"),
        "config_sha256": pipeline_info.get("config_sha256") or provenance_pipeline.get("config_sha256"),
        "policy_json": _canonical(policy),
        "policy_sha256": _sha(policy),
        "counts_json": _canonical(report.get("counts") or {}),
        "leaks": int(leaks) if isinstance(leaks, int) else len(leaks) if isinstance(leaks, list) else 0,
        "isolation": isolation.state if isolation is not None else "not_verified",
        "isolation_reason": isolation.reason
        if isolation is not None
        else "the report has no security section",
        "latency_p95_ms": _finite(latency.get("p95")),
        "git_commit": commit,
        "git_dirty": dirty,
        "ragaudit_version": report.get("ragaudit_version"),
    }


def _cut_depth(report: Mapping[str, Any]) -> int | None:
    """The ``top_k`` of a live run that asked for fewer results than one of its metrics' cut-offs (its
    figures are those of a shorter list); ``None`` when it asked for enough, or records no ``top_k``."""
    top_k = recorded_top_k(report)
    if top_k is None:
        return None
    cutoffs = [int(m.group(1)) for name in _mapping(report, "metrics") if (m := _CUTOFF.search(str(name)))]
    return top_k if any(k > top_k for k in cutoffs) else None


_CUTOFF = re.compile(r"@(\d+)$")


def _mapping(report: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = report.get(key)
    return value if isinstance(value, Mapping) else {}


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def open_history(path: str | Path | None = None, *, create: bool = True) -> History:
    """Open (and, with ``create``, create) the history file; see the module docstring for where it is."""
    target = Path(path) if path is not None else default_history_path()
    if not create and not target.is_file():
        raise InputError(
            str(target),
            None,
            "no history recorded here yet",
            "run 'ragaudit eval' (it records every run), or pass --history FILE",
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(target)
    db.row_factory = sqlite3.Row
    try:
        db.executescript(_SCHEMA)
        have = {row[1] for row in db.execute("PRAGMA table_info(runs)")}
        for column, kind in ADDED_COLUMNS.items():
            if column not in have:
                db.execute(f"ALTER TABLE runs ADD COLUMN {column} {kind}")
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    except sqlite3.DatabaseError as exc:
        db.close()
        raise InputError(
            str(target), None, f"not a ragaudit history file ({exc})", "move it away or pass --history FILE"
        ) from None
    return History(target, db)


@contextmanager
def _opened(path: str | Path | None, create: bool) -> Iterator[History]:
    history = open_history(path, create=create)
    try:
        yield history
    finally:
        history.close()


def record(
    report_dict: Mapping[str, Any],
    path: str | Path | None = None,
    *,
    key: str | None = None,
    replaces: bool = False,
) -> int:
    """Record one eval report (``EvalResult.to_dict()``) in the history; return its run id
    (``key``, ``replaces``: see :meth:`History.record`)."""
    with _opened(path, create=True) as history:
        return history.record(report_dict, key=key, replaces=replaces)


def record_run(
    report_dict: Mapping[str, Any],
    path: str | Path | None = None,
    *,
    key: str | None = None,
    replaces: bool = False,
) -> str:
    """Record a run for a command that has already done its job: never raises for an unwritable or
    damaged history file, and returns the line to print (where it went, or why it did not). With
    ``replaces`` (a resumed run) the line names the entries it replaced."""
    target = Path(path) if path is not None else default_history_path()
    if is_in_sample(report_dict):
        return (
            f"run not recorded in the history {target}: it is IN-SAMPLE (a fitted stage scored on the cases "
            "it was fitted on), kept out of the trends"
        )
    try:
        before: list[int] = []
        if key is not None and replaces and target.is_file():
            with _opened(target, create=False) as history:
                before = history.keyed(key)
        run_id = record(report_dict, target, key=key, replaces=replaces)
    except (OSError, sqlite3.Error, InputError) as exc:
        return f"warning: run not recorded in the history {target}: {exc}"
    replaced = [i for i in before if i != run_id]
    if replaced:
        which = ", ".join(str(i) for i in replaced)
        return (
            f"run recorded in the history {target} (run {run_id}, replacing run {which} it resumed: one "
            "entry per run; see 'ragaudit history')"
        )
    return f"run recorded in the history {target} (run {run_id}; see 'ragaudit history')"


def query_runs(
    path: str | Path | None = None,
    *,
    dataset: str | None = None,
    pipeline: str | None = None,
    metrics: Sequence[str] | None = None,
) -> list[HistoryRun]:
    """The recorded runs matching the filters, oldest first (see :meth:`History.runs`)."""
    with _opened(path, create=False) as history:
        return history.runs(dataset=dataset, pipeline=pipeline, metrics=metrics)


def series(runs: Iterable[HistoryRun]) -> list[Series]:
    """Group runs by (dataset sha256, policy), then pipeline; never across dataset hashes."""
    groups: dict[tuple[str, str, str], list[HistoryRun]] = {}
    for run in runs:
        groups.setdefault((run.dataset_sha256, run.policy_key, run.pipeline), []).append(run)
    out = [
        Series(sha, members[-1].dataset_path, members[-1].policy, name, tuple(members))
        for (sha, _, name), members in groups.items()
    ]
    return sorted(out, key=lambda s: (s.dataset_sha256, _canonical(s.policy), s.pipeline))
