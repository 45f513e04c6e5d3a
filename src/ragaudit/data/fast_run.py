"""TREC run rows to ranks of judged items, with trec_eval's order and ragaudit's duplicate rule.

For a batch of run rows (whole queries), :func:`rank_judged` finds, without a per-query loop:

1. the query blocks (rows of one query id are gathered if the batch repeats an id);
2. trec_eval's order inside each query, score descending then doc id descending. Most files are
   already in that order, so the order is *checked* with adjacent comparisons and only the queries
   (or the runs of tied scores) that break it are sorted;
3. repeated doc ids in a query: hashes propose candidates, the id words decide; the best-ranked
   copy counts, later copies keep their slot and gain nothing (the policy's duplicate rule);
4. the grade of each row, by a sorted-key join with the qrels (:class:`QrelsIndex`);
5. the final 1-based rank of each row judged relevant enough to matter (grade > 0).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
import numpy.typing as npt

from ragaudit.data.fast_keys import (
    float_order,
    grouped_keys,
    hash_rows,
    high_byte_rows,
    in_table,
    lex_argsort,
    pad_words,
    repeated,
    rows_equal,
    rows_greater,
)
from ragaudit.data.fast_numbers import parse_scores
from ragaudit.data.fast_qrels import QrelsIndex
from ragaudit.data.fast_text import (
    IntArray,
    TextBlock,
    WordArray,
    as_bytes,
    big_endian,
    refuse_comments,
    token_words,
    tokenize,
)

BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class RunRows:
    """Parsed rows of a run block: query and doc id words, and scores."""

    query_words: WordArray
    doc_words: WordArray
    scores: npt.NDArray[np.float64]
    non_ascii: bool = False
    """Whether the rows' text has a non-ASCII byte (the tokenizer's UTF-8 check says so for free)."""

    @property
    def size(self) -> int:
        return int(self.scores.size)


def concat_rows(parts: list[RunRows]) -> RunRows:
    """One batch from several (word tables zero-padded to a common width)."""
    qw = max(p.query_words.shape[1] for p in parts)
    dw = max(p.doc_words.shape[1] for p in parts)
    return RunRows(
        np.concatenate([pad_words(p.query_words, qw) for p in parts]),
        np.concatenate([pad_words(p.doc_words, dw) for p in parts]),
        np.concatenate([p.scores for p in parts]),
        any(p.non_ascii for p in parts),
    )


def parse_run_block(block: TextBlock) -> RunRows:
    """Read ``query_id Q0 doc_id rank score tag`` lines (raises ``SlowPath`` on anything unusual)."""
    refuse_comments(block, after_blanks=True)
    table = tokenize(block, (6,))
    score_start, score_len = table.column(4)
    return RunRows(
        query_words=token_words(block, *table.column(0)),
        doc_words=token_words(block, *table.column(2)),
        scores=parse_scores(token_words(block, score_start, score_len), score_len),
        non_ascii=table.non_ascii,
    )


@dataclass(frozen=True)
class RankedBatch:
    """What the metrics need from a batch of run rows."""

    block_ids: npt.NDArray[np.bytes_]
    """The query id of each block (one block per distinct query id)."""
    block_query: IntArray
    """Index of each block's query in the qrels (-1: not in the qrels)."""
    block_length: IntArray
    """Ranking length of each block (lines, repeats included: a repeat keeps its slot)."""
    judged_block: IntArray
    judged_rank: IntArray
    """1-based rank of each row with grade > 0 that is not a repeat, and its block."""
    judged_grade: IntArray
    duplicates: int
    form_query: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    form_docs: npt.NDArray[np.bytes_] = field(default_factory=lambda: np.zeros(0, dtype="S1"))
    """Unjudged rows that may equal a judged id but for their form (:func:`form_candidates`): the qrels
    query index and doc id of each, at most :data:`FORM_ROWS` a batch."""
    form_capped: bool = False
    """Whether there were more such rows than :data:`FORM_ROWS`."""


def _blocks(query_words: WordArray) -> tuple[IntArray, IntArray]:
    """Block number of each row (a new block where the query id changes) and each block's first row."""
    new = np.ones(query_words.shape[0], dtype=np.bool_)
    new[1:] = (query_words[1:] != query_words[:-1]).any(axis=1)
    return np.cumsum(new) - 1, np.flatnonzero(new)


def _trec_order(block_of: IntArray, scores: npt.NDArray[np.float64], docs_be: WordArray) -> IntArray | None:
    """Permutation putting rows in trec_eval order within each block, or ``None`` if they already are."""
    n = scores.size
    if n < 2:
        return None
    same = block_of[1:] == block_of[:-1]
    drop = same & (scores[:-1] < scores[1:])
    tie = same & (scores[:-1] == scores[1:])
    tie_wrong = tie & rows_greater(docs_be[1:], docs_be[:-1])
    if not (drop.any() or tie_wrong.any()):
        return None
    order = np.arange(n, dtype=np.int64)
    resort = np.zeros(int(block_of[-1]) + 1, dtype=np.bool_)
    resort[block_of[1:][drop]] = True
    rows = np.flatnonzero(resort[block_of])
    if rows.size:
        keys = [block_of[rows], ~float_order(scores[rows]), *(~docs_be[rows]).T]
        order[rows] = rows[lex_argsort(keys)]
    tie_wrong &= ~resort[block_of[1:]]
    if tie_wrong.any():
        run_of = np.cumsum(np.concatenate(([True], ~tie)))
        fix = np.zeros(int(run_of[-1]) + 1, dtype=np.bool_)
        fix[run_of[1:][tie_wrong]] = True
        rows = np.flatnonzero(fix[run_of])
        order[rows] = rows[lex_argsort([run_of[rows], *(~docs_be[rows]).T])]
    return order


def _duplicates(
    block_of: IntArray, n_blocks: int, hashes: npt.NDArray[np.uint64], docs_be: WordArray, position: IntArray
) -> BoolArray:
    """Rows that repeat an earlier-ranked (``position``) row's doc id within the same block."""
    later = np.zeros(block_of.size, dtype=np.bool_)
    candidates = np.flatnonzero(repeated(grouped_keys(block_of, n_blocks, hashes)))
    if candidates.size:
        c = candidates[lex_argsort([block_of[candidates], *docs_be[candidates].T, position[candidates]])]
        same = (block_of[c[1:]] == block_of[c[:-1]]) & rows_equal(docs_be[c[1:]], docs_be[c[:-1]])
        later[c[1:][same]] = True
    return later


def _grades(qrels: QrelsIndex, query: IntArray, docs: WordArray, hashes: npt.NDArray[np.uint64]) -> IntArray:
    """Qrels grade of each (query, doc) row; -1 where it is not judged."""
    grade = np.full(query.size, -1, dtype=np.int64)
    if qrels.keys.size == 0:
        return grade
    keys = grouped_keys(np.maximum(query, 0), qrels.n_queries, hashes, qrels.hash_bits)
    rows = np.flatnonzero(in_table(qrels.key_filter, keys) & (query >= 0))
    keys = keys[rows]
    at = np.searchsorted(qrels.keys, keys)
    width = max(docs.shape[1], qrels.doc_words.shape[1])
    last = qrels.keys.size - 1
    for _ in range(qrels.longest_run):  # ids of one query sharing a key: try each in turn
        np.minimum(at, last, out=at)
        hit = qrels.keys[at] == keys
        rows, keys, at = rows[hit], keys[hit], at[hit]
        same = rows_equal(pad_words(docs[rows], width), pad_words(qrels.doc_words[at], width))
        grade[rows[same]] = qrels.grades[at[same]]
        rows, keys, at = rows[~same], keys[~same], at[~same] + 1
        if rows.size == 0:
            break
    return grade


FORM_ROWS = 10_000
"""At most this many id-form candidates a batch are handed on (the check is a hint, never a score)."""


def form_candidates(
    docs: WordArray, non_ascii: bool, block_query: IntArray, block_of: IntArray, unusual: BoolArray,
    unjudged: Callable[[], BoolArray],
) -> tuple[IntArray, BoolArray] | None:  # fmt: skip
    """Rows that may equal a judged id of their query but for Unicode form or case: unjudged rows whose
    id has a non-ASCII byte (looked at only when the batch's text has one), and unjudged rows of the
    queries whose judged ids are not all plain (``unusual[q]``: a non-ASCII byte or a capital). ``None``
    when there can be none, the usual case, decided by one flag and one look-up per block before any
    pass over the rows. Not seen here: an ASCII id with capitals against plain judged ids."""
    known = block_query >= 0
    odd_blocks = np.zeros(block_query.size, dtype=np.bool_)
    odd_blocks[known] = unusual[block_query[known]]
    if not non_ascii and not odd_blocks.any():
        return None
    pick = odd_blocks[block_of]
    if non_ascii:
        pick |= high_byte_rows(docs)
    pick &= unjudged()
    return (block_query[block_of], pick) if pick.any() else None


def rank_judged(
    rows: RunRows, qrels: QrelsIndex, wanted: BoolArray, unusual: BoolArray | None = None
) -> RankedBatch:
    """Ranks of the judged rows of a batch; ``wanted[q]`` says which qrels queries need scoring;
    ``unusual`` (per qrels query: judged ids not all plain) turns on the id-form candidates."""
    block_of, first = _blocks(rows.query_words)
    ids = as_bytes(rows.query_words[first])
    unique_ids, inverse = np.unique(ids, return_inverse=True)
    docs, scores = rows.doc_words, rows.scores
    if unique_ids.size < ids.size:  # an id in several blocks of this batch: gather its rows
        block_of = inverse.reshape(-1)[block_of].astype(np.int64)
        gather = np.argsort(block_of, kind="stable")
        block_of, docs, scores = block_of[gather], docs[gather], scores[gather]
        ids = unique_ids
    block_query = qrels.query_index(ids)
    n_blocks = int(ids.size)
    block_size = np.bincount(block_of, minlength=n_blocks)
    scored = np.zeros(n_blocks, dtype=np.bool_)
    known = block_query >= 0
    scored[known] = wanted[block_query[known]]
    empty = np.zeros(0, dtype=np.int64)
    if not scored.any():
        return RankedBatch(ids, block_query, block_size, empty, empty, empty, 0)
    docs_be = big_endian(docs)
    order = _trec_order(block_of, scores, docs_be)
    position = np.arange(block_of.size, dtype=np.int64)
    if order is not None:
        position[order] = np.arange(block_of.size, dtype=np.int64)
    hashes = hash_rows(docs)
    repeats = _duplicates(block_of, n_blocks, hashes, docs_be, position)
    grade = _grades(qrels, block_query[block_of], docs, hashes)
    block_start = np.searchsorted(block_of, np.arange(n_blocks))
    in_scored = scored[block_of]
    forms = None
    if unusual is not None:
        forms = form_candidates(docs, rows.non_ascii, block_query, block_of, unusual,
                                lambda: (grade < 0) & ~repeats & in_scored)  # fmt: skip
    judged = np.flatnonzero((grade > 0) & ~repeats & in_scored)
    rank = position[judged] - block_start[block_of[judged]] + 1
    repeated_lines = int(np.count_nonzero(repeats & in_scored))
    batch = RankedBatch(ids, block_query, block_size, block_of[judged], rank, grade[judged], repeated_lines)
    if forms is None:
        return batch
    query_of, pick = forms
    at = np.flatnonzero(pick)
    return replace(batch, form_query=query_of[at[:FORM_ROWS]], form_docs=as_bytes(docs[at[:FORM_ROWS]]),
                   form_capped=at.size > FORM_ROWS)  # fmt: skip
