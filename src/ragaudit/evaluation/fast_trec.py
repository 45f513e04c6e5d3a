"""Files to averages, fast: TREC qrels + a TREC run scored with the same numbers as ``ragaudit.evaluate``.

``evaluate_trec_files(qrels, run, metrics, policy)`` gives the means over answerable queries, the
per-query values and the counts that ``evaluate(qrels_dataset(qrels), run)`` gives, equal to 1e-12
(tested), without building a Python object per line:

* the qrels are read into arrays (:mod:`ragaudit.data.fast_qrels`);
* the run is read in blocks of whole queries (``block_bytes`` at a time, so memory stays bounded
  however large the file), each block tokenised, ordered, de-duplicated and joined with the qrels
  by array passes (:mod:`ragaudit.data.fast_run`), then scored by the vectorised kernels of
  :mod:`ragaudit.metrics.bulk` (the same code ``evaluate`` uses);
* a query id that comes back after its block has been scored (a run not grouped by query) is
  detected, never mis-scored: the run is then read whole (``mode == "memory"``);
* input the array reader cannot decide exactly (exotic whitespace or control bytes, NUL bytes,
  unusual numerals it cannot parse) is checked by the validated readers of
  :mod:`ragaudit.data.trec`: a bad line raises their file:line error; valid but unusual input is
  scored by ``ragaudit.evaluate`` itself (``mode == "reference"``);
* a measure that counts judged items of any grade (``Measure.reads_judged``, e.g. ``Judged@k``) is
  scored by ``ragaudit.evaluate`` too (``mode == "reference"``): the array join keeps only grades > 0.

The semantics are ragaudit's policy (``docs/metrics.md``): unanswerable queries (no grade >= the
threshold) are kept out of the means; answerable queries absent from the run score 0; ties are
ordered by score descending then doc id descending (trec_eval); a repeated doc id counts once, at its
best-ranked line, and its later lines keep their slots and gain nothing.
"""

from __future__ import annotations

import os
import tempfile
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np
import numpy.typing as npt

from ragaudit.data.fast_keys import sorted_distinct, unusual_id_rows
from ragaudit.data.fast_qrels import QrelsIndex, read_qrels_index
from ragaudit.data.fast_run import FORM_ROWS, RankedBatch, RunRows, concat_rows, parse_run_block, rank_judged
from ragaudit.data.fast_text import (
    BOM,
    PAD,
    IntArray,
    SlowPath,
    TextBlock,
    as_bytes,
    iter_blocks,
    line_number,
)
from ragaudit.data.trec import read_trec_run
from ragaudit.errors import InputError, ValidationError
from ragaudit.evaluation.id_forms import IdFormCheck
from ragaudit.metrics.bulk import FloatArray, RankMatrix, compute, width_groups
from ragaudit.metrics.measures import measure_of
from ragaudit.metrics.names import DEFAULT_METRICS, MetricSpec, parse_metrics
from ragaudit.metrics.policy import Policy, no_answerable_case

if TYPE_CHECKING:
    from ragaudit.evaluation.result import EvalResult

DEFAULT_BLOCK_BYTES = 4 * 1024 * 1024
Mode = Literal["stream", "memory", "reference"]


@dataclass(frozen=True)
class FastCounts:
    queries: int
    """Queries in the qrels."""
    answerable: int
    unanswerable: int
    missing: int
    """Answerable queries the run has no line for (scored 0)."""
    not_in_qrels: int
    """Distinct query ids in the run that the qrels do not have (ignored)."""
    duplicates: int
    """Run lines repeating a (query, doc) pair seen earlier in the ranking, in answerable queries."""


@dataclass(frozen=True)
class FastResult:
    """Means over answerable queries, their per-query values (qrels order) and the counts."""

    metrics: dict[str, float]
    cases: tuple[str, ...]
    """Every query of the qrels, in order of first appearance (``evaluate``'s case order)."""
    answerable: npt.NDArray[np.bool_]
    """Which of ``cases`` have an item with grade >= the relevance threshold."""
    in_run: npt.NDArray[np.bool_]
    """Which of ``cases`` the run has lines for."""
    per_query: dict[str, FloatArray]
    """``{metric: values}`` aligned with :attr:`query_ids` (the answerable cases)."""
    counts: FastCounts
    policy: Policy
    mode: Mode
    """``stream`` (blocks of queries), ``memory`` (run not grouped by query) or ``reference``."""
    notes: tuple[str, ...] = ()
    qrels: dict[str, object] = field(default_factory=dict)
    run: dict[str, object] = field(default_factory=dict)

    @property
    def dataset_notes(self) -> tuple[str, ...]:
        """How the qrels were read (negative grades, repeated pairs): the dataset's own notes."""
        notes = self.qrels.get("notes", ())
        return tuple(str(n) for n in notes) if isinstance(notes, tuple) else ()

    @property
    def query_ids(self) -> tuple[str, ...]:
        """The answerable cases, in qrels order: the rows of :attr:`per_query`."""
        return tuple(c for c, ok in zip(self.cases, self.answerable.tolist(), strict=True) if ok)

    @property
    def answered(self) -> npt.NDArray[np.bool_]:
        """Whether the run has lines for each of :attr:`query_ids`."""
        return self.in_run[self.answerable]

    def per_query_values(self, metric: str) -> dict[str, float]:
        """``{query_id: value}`` of one metric (the shape of ``EvalResult.per_case_values``)."""
        return dict(zip(self.query_ids, self.per_query[metric].tolist(), strict=True))

    def to_eval_result(self, with_cases: bool = True) -> EvalResult:
        """The same figures as an :class:`EvalResult` (for reports, history, gates and compare).

        Cases carry their status, metrics and tenant as ``evaluate`` gives them, but no retrieved
        items, and repeats are counted in total (``counts`` and notes), not per case. Without
        ``with_cases`` the result holds no cases (:mod:`ragaudit.evaluation.fast_report` writes them
        from the arrays).
        """
        from ragaudit.data.beir import DEFAULT_TENANT
        from ragaudit.evaluation.result import CaseResult, Counts, EvalResult

        names = list(self.per_query)
        columns = [self.per_query[n].tolist() for n in names] if with_cases else []
        row = 0
        per_case: list[CaseResult] = []
        cases = (
            zip(self.cases, self.answerable.tolist(), self.in_run.tolist(), strict=True) if with_cases else ()
        )
        for case, ok, seen in cases:
            if ok:
                values = {n: column[row] for n, column in zip(names, columns, strict=True)}
                status: Literal["ok", "missing"] = "ok" if seen else "missing"
                per_case.append(CaseResult(case, status, seen, values, tenant_id=DEFAULT_TENANT))
                row += 1
            else:
                per_case.append(CaseResult(case, "unanswerable", seen, {}, tenant_id=DEFAULT_TENANT))
        c = self.counts
        counts = Counts(c.queries, c.answerable, c.unanswerable, c.missing, 0, c.not_in_qrels)
        run_path = str(self.run.get("path", ""))
        dataset = {
            "path": self.qrels.get("path"),
            "sha256": self.qrels.get("sha256"),
            "format": "qrels",
            "cases": c.queries,
            "skipped": {},
        }
        run = {
            "name": Path(run_path).stem,
            "source": run_path,
            "sha256": None,
            "cases": int(self.in_run.sum()) + c.not_in_qrels,
        }
        return EvalResult(self.metrics, counts, tuple(per_case), self.policy, dataset, run, self.notes)


def _specs(metrics: Iterable[MetricSpec] | str | Sequence[str] | None) -> tuple[MetricSpec, ...]:
    if metrics is None:
        return DEFAULT_METRICS
    if isinstance(metrics, str):
        return parse_metrics(metrics)
    items = list(metrics)
    if all(isinstance(m, str) for m in items):
        return parse_metrics([str(m) for m in items])
    return tuple(m for m in items if isinstance(m, MetricSpec))


def _default_workers() -> int:
    return max(1, min(4, os.cpu_count() or 1))


class _NotGrouped(Exception):
    """A query id came back after its block was scored."""


def _check_block_slowly(path: str, block: TextBlock) -> None:
    """Raise the validated reader's file:line errors for a block of lines, if it has any."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "block.trec"
        copy.write_bytes(block.text())
        _, problems = read_trec_run(copy)
    errors = [p for p in problems if p.severity == "error"]
    if errors:
        shift = line_number(path, block.offset) - 1
        raise ValidationError(
            [replace(p, path=path, line=None if p.line is None else p.line + shift) for p in errors]
        )


def _parse(path: str, block: TextBlock) -> RunRows:
    try:
        return parse_run_block(block)
    except SlowPath:
        _check_block_slowly(path, block)
        raise


def _first_column(buffer: bytes | bytearray, start: int, end: int) -> tuple[bytes | bytearray | None, int]:
    """First column of the first non-blank line in ``buffer[start:end]`` and where that line starts."""
    while start < end:
        stop = buffer.find(b"\n", start, end)
        stop = end if stop < 0 else stop
        fields = buffer[start:stop].split(None, 1)
        if fields:
            return fields[0], start
        start = stop + 1
    return None, end


def _tail_start(buffer: bytes | bytearray, end: int) -> int:
    """Start of the lines at the end of ``buffer[:end]`` that share the last line's query id.

    A binary search over byte offsets (a few dozen ``find`` calls whatever the block holds), so
    that blocks can be parsed independently. In a run grouped by query the lines of the last id
    are a contiguous tail; should the cut ever split a query (a run not grouped by query, ids with
    exotic whitespace), the scorer sees the id come back and re-reads the run whole, so a wrong cut
    costs time, never correctness.
    """
    last = buffer.rfind(b"\n", 0, max(end - 1, 0)) + 1
    while last > 0 and not buffer[last:end].strip():  # blank lines at the end
        last = buffer.rfind(b"\n", 0, last - 1) + 1
    qid, _ = _first_column(buffer, last, end)
    if qid is None:
        return 0
    lo, hi = 0, last
    while lo < hi:
        mid = (lo + hi) // 2
        line = mid if mid == 0 or buffer[mid - 1] == 0x0A else buffer.find(b"\n", mid, end) + 1
        first, at = _first_column(buffer, line, end)
        if first == qid and at <= last:
            hi = mid
        else:
            lo = mid + 1
    return lo if lo == 0 or buffer[lo - 1] == 0x0A else buffer.find(b"\n", lo, end) + 1


def _query_blocks(path: str, block_bytes: int) -> Iterator[TextBlock]:
    """Blocks of whole lines of the run, cut between two query ids.

    Each block's bytes are read straight into the buffer its array views (the lines carried over
    from the previous block first), so a block is copied once, by the read itself.
    """
    with Path(path).open("rb") as handle:
        carry = handle.read(len(BOM))
        offset = 0
        if carry == BOM:
            carry, offset = b"", len(BOM)
        while True:
            buffer = bytearray(len(carry) + block_bytes + 1 + PAD)
            buffer[: len(carry)] = carry
            got = handle.readinto(memoryview(buffer)[len(carry) : len(carry) + block_bytes])
            size = len(carry) + got
            if not got:
                if size:
                    yield TextBlock.in_place(buffer, size, offset)
                return
            cut = _tail_start(buffer, buffer.rfind(b"\n", 0, size) + 1)
            if cut == 0:
                carry = bytes(buffer[:size])
                continue
            carry = bytes(buffer[cut:size])
            yield TextBlock.in_place(buffer, cut, offset)
            offset += cut


def _whole_run(path: str, block_bytes: int) -> Iterator[RunRows]:
    parts = [_parse(path, block) for block in iter_blocks(path, block_bytes)]
    parts = [p for p in parts if p.size]
    if parts:
        yield concat_rows(parts)


class _Scorer:
    """Accumulates per-query metric values over batches of run rows."""

    def __init__(self, qrels: QrelsIndex, specs: tuple[MetricSpec, ...], policy: Policy) -> None:
        self.qrels = qrels
        self.specs = specs
        self.policy = policy
        self.answerable = qrels.n_relevant > 0
        ordered = qrels.file_order[self.answerable[qrels.file_order]]
        self.answerable_queries = ordered
        self.slot = np.full(qrels.n_queries, -1, dtype=np.int64)
        self.slot[ordered] = np.arange(ordered.size)
        self.values = {s.name: np.zeros(ordered.size) for s in specs}
        self.seen = np.zeros(qrels.n_queries, dtype=np.bool_)
        self.strays: list[npt.NDArray[np.bytes_]] = []
        self.duplicates = 0
        cutoffs = [s.k for s in specs if s.k is not None]
        self.all_cut = len(cutoffs) == len(specs)
        self.max_k = max(cutoffs, default=0)
        ideal_cuts = [s.k for s in specs if measure_of(s.family).reads_ideal]
        self.ideal_width = None if None in ideal_cuts else max((k for k in ideal_cuts if k), default=1)
        self.unusual = np.zeros(qrels.n_queries, dtype=np.bool_)  # judged ids not all plain (id forms)
        self.unusual[
            (qrels.keys[unusual_id_rows(qrels.doc_words)] >> np.uint64(qrels.hash_bits)).view(np.int64)
        ] = True
        self.form_rows: list[tuple[IntArray, npt.NDArray[np.bytes_]]] = []
        self.form_held = 0  # rows in form_rows
        self.form_capped = False

    def add(self, batch: RankedBatch) -> None:
        known = batch.block_query >= 0
        self.strays.append(sorted_distinct(batch.block_ids[~known]))
        queries = batch.block_query[known]
        if self.seen[queries].any():
            raise _NotGrouped
        self.seen[queries] = True
        self.duplicates += batch.duplicates
        if batch.form_docs.size:
            if self.form_held < FORM_ROWS * 10:
                self.form_rows.append((batch.form_query, batch.form_docs))
                self.form_held += batch.form_query.size
            self.form_capped |= self.form_held >= FORM_ROWS * 10
        self.form_capped |= batch.form_capped
        blocks = np.flatnonzero(known)
        blocks = blocks[self.answerable[batch.block_query[blocks]]]
        if blocks.size:
            local = np.full(batch.block_query.size, -1, dtype=np.int64)
            local[blocks] = np.arange(blocks.size)
            self._score(
                batch.block_query[blocks],
                batch.block_length[blocks],
                local[batch.judged_block],
                batch.judged_rank,
                batch.judged_grade,
            )

    def _score(
        self,
        queries: npt.NDArray[np.int64],
        lengths: npt.NDArray[np.int64],
        row: npt.NDArray[np.int64],
        rank: npt.NDArray[np.int64],
        grade: npt.NDArray[np.int64],
    ) -> None:
        """Score rankings given by the ranks and grades of their items with grade > 0."""
        if self.policy.max_depth is not None:  # trec_eval -M: each ranking's top max_depth only
            lengths = np.minimum(lengths, self.policy.max_depth)
            inside_depth = rank <= self.policy.max_depth
            row, rank, grade = row[inside_depth], rank[inside_depth], grade[inside_depth]
        deepest = np.zeros(queries.size, dtype=np.int64)
        np.maximum.at(deepest, row, rank)
        need = np.full(queries.size, self.max_k) if self.all_cut else np.maximum(deepest, self.max_k)
        widths = np.maximum(np.minimum(lengths, need), 1)
        for rows, width in width_groups(widths):  # a few long rankings never widen the others
            local = np.full(queries.size, -1, dtype=np.int64)
            local[rows] = np.arange(rows.size)
            mine = (local[row] >= 0) & (rank <= width)
            grades = np.zeros((rows.size, width), dtype=np.float64)
            grades[local[row[mine]], rank[mine] - 1] = grade[mine]
            group = queries[rows]
            matrix = RankMatrix(
                grades,
                grades >= self.policy.relevance_threshold,
                self.qrels.n_relevant[group],
                self.qrels.ideal(group, self.ideal_width),
            )
            slots = self.slot[group]
            for name, values in compute(matrix, self.specs, self.policy.gain).items():
                self.values[name][slots] = values

    def form_note(self) -> str | None:
        """The id-form hint (:mod:`ragaudit.evaluation.id_forms`) over the candidate rows the batches
        handed on: each against the judged ids of its query."""
        if not self.form_rows:
            return None
        check = IdFormCheck(capped=self.form_capped)
        queries = np.concatenate([q for q, _ in self.form_rows])
        docs = [d.decode("utf-8") for part in self.form_rows for d in part[1].tolist()]
        by_query: dict[int, list[str]] = {}
        for q, doc in zip(queries.tolist(), docs, strict=True):
            by_query.setdefault(q, []).append(doc)
        shift = np.uint64(self.qrels.hash_bits)
        for q, retrieved in by_query.items():
            lo, hi = np.searchsorted(self.qrels.keys, [np.uint64(q) << shift, np.uint64(q + 1) << shift])
            judged = {d.decode("utf-8"): 0 for d in as_bytes(self.qrels.doc_words[lo:hi]).tolist()}
            check.add(self.qrels.query_ids[q].decode("utf-8"), retrieved, judged)
        return check.note()

    def finish(self) -> tuple[npt.NDArray[np.bool_], list[str]]:
        """Score the answerable queries the run never mentioned; ``(seen per qrels query, strays)``."""
        missing = self.answerable_queries[~self.seen[self.answerable_queries]]
        if missing.size:
            empty = np.zeros(0, dtype=np.int64)
            self._score(missing, np.zeros(missing.size, dtype=np.int64), empty, empty, empty)
        strays = sorted_distinct(np.concatenate(self.strays)) if self.strays else np.zeros(0, dtype="S1")
        return self.seen, [s.decode("utf-8") for s in strays.tolist()]


def _rank_block(
    path: str,
    block: TextBlock,
    qrels: QrelsIndex,
    wanted: npt.NDArray[np.bool_],
    unusual: npt.NDArray[np.bool_],
) -> RankedBatch:
    return rank_judged(_parse(path, block), qrels, wanted, unusual)


def _score_run(
    qrels: QrelsIndex,
    run_path: str,
    specs: tuple[MetricSpec, ...],
    policy: Policy,
    block_bytes: int,
    mode: Mode,
    workers: int,
) -> tuple[_Scorer, Mode]:
    """Score the run: the pool's threads parse and rank each block (one task, while the block is in
    the processor's cache; parsing the first blocks while the qrels were read cost more CPU than it
    saved, measured) and this thread adds the ranked blocks to the scorer, a few blocks in flight."""
    scorer = _Scorer(qrels, specs, policy)
    if mode == "memory":
        for rows in _whole_run(run_path, block_bytes):
            scorer.add(rank_judged(rows, qrels, scorer.answerable, scorer.unusual))
        return scorer, mode
    pending: deque[Future[RankedBatch]] = deque()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        try:
            for block in _query_blocks(run_path, block_bytes):
                pending.append(
                    pool.submit(_rank_block, run_path, block, qrels, scorer.answerable, scorer.unusual)
                )
                while len(pending) > workers:
                    scorer.add(pending.popleft().result())
            while pending:
                scorer.add(pending.popleft().result())
        except _NotGrouped:
            for future in pending:
                future.cancel()
            return _score_run(qrels, run_path, specs, policy, block_bytes, "memory", workers)
    return scorer, mode


def _reference(qrels_path: str, run_path: str, specs: tuple[MetricSpec, ...], policy: Policy) -> FastResult:
    from ragaudit.data.loading import qrels_dataset
    from ragaudit.data.trec import load_trec_run
    from ragaudit.evaluation.evaluate import evaluate

    dataset = qrels_dataset(qrels_path)
    result = evaluate(dataset, load_trec_run(run_path), specs, policy)
    scored = [c for c in result.per_case if c.status != "unanswerable"]
    counts = result.counts
    return FastResult(
        metrics=result.metrics,
        cases=tuple(c.id for c in result.per_case),
        answerable=np.array([c.status != "unanswerable" for c in result.per_case], dtype=np.bool_),
        in_run=np.array([c.answered for c in result.per_case], dtype=np.bool_),
        per_query={s.name: np.array([c.metrics[s.name] for c in scored]) for s in specs},
        counts=FastCounts(
            counts.cases,
            counts.answerable,
            counts.unanswerable,
            counts.missing,
            counts.not_in_dataset,
            sum(c.duplicates for c in scored),
        ),
        policy=policy,
        mode="reference",
        notes=result.notes,
        qrels={"path": qrels_path, "sha256": result.dataset.get("sha256"), "notes": dataset.notes},
        run={"path": run_path},
    )


def evaluate_trec_files(
    qrels_path: str | Path,
    run_path: str | Path,
    metrics: Iterable[MetricSpec] | str | Sequence[str] | None = None,
    policy: Policy | None = None,
    *,
    block_bytes: int = DEFAULT_BLOCK_BYTES,
    stream: bool = True,
    workers: int | None = None,
) -> FastResult:
    """Score a TREC run file against TREC qrels; the numbers of ``ragaudit.evaluate``, from arrays.

    ``block_bytes`` is how much of the run is read at a time (peak memory grows with it, not with
    the file); ``stream=False`` reads the whole run before scoring (needed only for runs whose
    lines are not grouped by query, which streaming detects by itself). ``workers`` threads parse
    and rank blocks (NumPy releases the GIL); default: up to 4, no more than the CPUs.
    """
    policy = policy or Policy()
    specs = _specs(metrics)
    qrels_p, run_p = str(qrels_path), str(run_path)
    if not Path(run_p).is_file():
        raise InputError(run_p, None, "run file not found", "check the --run path")
    if block_bytes < 1:
        raise ValueError("block_bytes must be positive")
    if any(measure_of(s.family).reads_judged for s in specs):  # the array reader keeps only grades > 0
        return _reference(qrels_p, run_p, specs, policy)
    try:
        qrels = read_qrels_index(qrels_p, policy.relevance_threshold, block_bytes)
        mode: Mode = "stream" if stream else "memory"
        scorer, mode = _score_run(
            qrels, run_p, specs, policy, block_bytes, mode, workers or _default_workers()
        )
    except SlowPath:
        return _reference(qrels_p, run_p, specs, policy)
    in_run, strays = scorer.finish()
    n_answerable = int(scorer.answerable_queries.size)
    if not n_answerable:
        top = int(qrels.positive_grades.max()) if qrels.positive_grades.size else None
        raise no_answerable_case(qrels_p, policy.relevance_threshold, top)
    means = {name: float(values.mean()) for name, values in scorer.values.items()}
    notes = list(qrels.notes)
    if strays:
        shown = ", ".join(strays[:5]) + (" ..." if len(strays) > 5 else "")
        notes.append(f"{len(strays)} run result(s) for ids not in the dataset were ignored: {shown}")
    if scorer.duplicates:
        notes.append(f"{scorer.duplicates} duplicate doc id line(s); each id counts once, at its best rank")
    if mode == "memory" and stream:
        notes.append("the run is not grouped by query id, so it was read whole before scoring")
    if form_note := scorer.form_note():
        notes.append(form_note)
    order = qrels.file_order
    answerable = scorer.answerable[order]
    return FastResult(
        metrics=means,
        cases=tuple(q.decode("utf-8") for q in qrels.query_ids[order].tolist()),
        answerable=answerable,
        in_run=in_run[order],
        per_query=scorer.values,
        counts=FastCounts(
            queries=qrels.n_queries,
            answerable=n_answerable,
            unanswerable=qrels.n_queries - n_answerable,
            missing=int(np.count_nonzero(answerable & ~in_run[order])),
            not_in_qrels=len(strays),
            duplicates=scorer.duplicates,
        ),
        policy=policy,
        mode=mode,
        notes=tuple(notes),
        qrels={"path": qrels_p, "sha256": qrels.sha256, "notes": qrels.notes},
        run={"path": run_p},
    )
