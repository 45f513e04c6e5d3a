"""TREC qrels as arrays: per-query relevance counts, ideal gains and a sorted join table.

Same semantics as :func:`ragaudit.data.trec.read_qrels` (4 columns ``qid iter doc grade`` or the
3-column BEIR TSV, an optional header on line 1, the last grade wins when a pair is judged twice),
read with array passes. Input the fast reader cannot decide exactly (``#`` comment lines, negative
grades, unusual numerals) is read by ``read_qrels`` itself, which also reports bad lines as file:line
errors and notes how negative grades and repeated pairs were read (:attr:`QrelsIndex.notes`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from ragaudit.artifacts.provenance import sha256_of
from ragaudit.data.fast_keys import (
    group_bits,
    grouped_keys,
    hash_rows,
    lex_argsort,
    membership_table,
    pad_words,
    rows_equal,
)
from ragaudit.data.fast_numbers import parse_grades
from ragaudit.data.fast_text import (
    IntArray,
    SlowPath,
    Table,
    TextBlock,
    WordArray,
    as_bytes,
    big_endian,
    iter_blocks,
    refuse_comments,
    token_words,
    tokenize,
)
from ragaudit.data.trec import _HEADER_WORDS, EXAMPLES, load_qrels_noted, repeated_pairs_note


@dataclass(frozen=True)
class QrelsIndex:
    """Judgments of every query, indexed by the position of its id in the sorted ``query_ids``."""

    path: str
    sha256: str
    query_ids: npt.NDArray[np.bytes_]
    """Sorted query ids (UTF-8 bytes)."""
    file_order: IntArray
    """Indices into ``query_ids`` in order of first appearance in the file (the report order)."""
    n_relevant: IntArray
    """Judged items with grade >= the relevance threshold, per query."""
    positive_offsets: IntArray
    positive_grades: npt.NDArray[np.float64]
    """Grades > 0 of each query, descending: ``positive_grades[positive_offsets[q]:positive_offsets[q+1]]``."""
    keys: WordArray
    """Sorted join keys: the query index in the high bits, the top ``hash_bits`` of the doc id's hash
    below. Different ids of one query may share a key (``longest_run`` says how many at most)."""
    hash_bits: int
    longest_run: int
    doc_words: WordArray
    """Doc id words of each key (little-endian, zero-padded), to confirm a key match."""
    grades: npt.NDArray[np.int32]
    key_filter: WordArray
    """:func:`membership_table` of ``keys``: a key whose slot is not set is not judged."""
    notes: tuple[str, ...] = ()
    """How unusual input was read (negative grades, pairs judged twice), as ``read_qrels`` says it."""

    @property
    def n_queries(self) -> int:
        return int(self.query_ids.size)

    def query_index(self, ids: npt.NDArray[np.bytes_]) -> IntArray:
        """Index of each id in ``query_ids``, or -1 when the qrels do not have it."""
        if self.query_ids.size == 0:
            return np.full(ids.size, -1, dtype=np.int64)
        at = np.minimum(np.searchsorted(self.query_ids, ids), self.query_ids.size - 1)
        return np.where(self.query_ids[at] == ids, at, -1).astype(np.int64)

    def ideal(self, queries: IntArray, width: int | None) -> npt.NDArray[np.float64]:
        """Dense ideal-grade rows for ``queries`` (descending, zero-padded), cut to ``width`` if given."""
        starts = self.positive_offsets[queries]
        counts = self.positive_offsets[queries + 1] - starts
        cols = int(counts.max(initial=0))
        if width is not None:
            cols = min(cols, width)
        out = np.zeros((queries.size, max(cols, 1)), dtype=np.float64)
        if cols:
            take = np.minimum(counts, cols)
            row = np.repeat(np.arange(queries.size), take)
            col = np.arange(int(take.sum())) - np.repeat(np.cumsum(take) - take, take)
            out[row, col] = self.positive_grades[np.repeat(starts, take) + col]
        return out


def words_of(ids: npt.NDArray[np.bytes_]) -> WordArray:
    """Little-endian token words (as :func:`token_words` makes them) of fixed-width byte strings."""
    width = max(8, -(-ids.dtype.itemsize // 8) * 8)
    return np.ascontiguousarray(ids.astype(f"S{width}")).view("<u8").reshape(ids.size, width // 8)


def _unique_ids(heads: WordArray) -> tuple[npt.NDArray[np.bytes_], IntArray, IntArray]:
    """Sorted distinct ids of the word rows ``heads``, each one's first row, and each row's id index."""
    if heads.shape[1] == 1:  # one word: sort numbers, not strings
        order_words = big_endian(heads[:, 0])
        distinct, first, inverse = np.unique(order_words, return_index=True, return_inverse=True)
        return as_bytes(distinct.byteswap()[:, None]), first, inverse.reshape(-1)
    distinct_s, first, inverse = np.unique(as_bytes(heads), return_index=True, return_inverse=True)
    return distinct_s, first, inverse.reshape(-1)


def _repeated_pairs(keys: WordArray, rows: IntArray, docs: WordArray) -> tuple[IntArray, IntArray]:
    """Entries (positions in the key order) of (query, doc) pairs judged more than once: each later
    line of a pair and the line of the same pair just before it, ordered by the later line."""
    twins = np.flatnonzero(np.r_[False, keys[1:] == keys[:-1]] | np.r_[keys[:-1] == keys[1:], False])
    if twins.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    order = twins[lex_argsort([keys[twins], *big_endian(docs[twins]).T, rows[twins]])]
    same_next = (keys[order[:-1]] == keys[order[1:]]) & rows_equal(docs[order[:-1]], docs[order[1:]])
    earlier, later = order[:-1][same_next], order[1:][same_next]
    by_line = np.argsort(rows[later], kind="stable")
    return earlier[by_line], later[by_line]


def _row_lines(path: str, wanted: IntArray, block_bytes: int) -> IntArray:
    """1-based line numbers of the judgment rows ``wanted`` (sorted row indices in file order).

    A second tokenising pass over the file, made only when the qrels judge a pair twice (to name
    the lines in the note, as the validated reader does)."""
    lines = np.zeros(wanted.size, dtype=np.int64)
    row_base, line_base = 0, 0
    for index, block in enumerate(iter_blocks(path, block_bytes)):
        table = _block_table(block, index == 0)
        lo, hi = np.searchsorted(wanted, [row_base, row_base + table.rows])
        lines[lo:hi] = line_base + table.line_index[wanted[lo:hi] - row_base] + 1
        row_base += table.rows
        line_base += int(np.count_nonzero(block.data[: block.size] == 0x0A))
    return lines


def _repeats_note(
    path: str,
    query_ids: npt.NDArray[np.bytes_],
    pairs: tuple[IntArray, IntArray],
    found: tuple[IntArray, WordArray, npt.NDArray[np.int32], IntArray],
    block_bytes: int,
    first_line: int | None = None,
) -> str:
    """The validated reader's note on pairs judged twice (:func:`ragaudit.data.trec.repeated_pairs_note`),
    from the array reader's entries: ``found`` is each entry's query index, doc words, grade and row;
    ``first_line`` (rows on consecutive lines from there) spares the second pass that finds the lines."""
    earlier, later = pairs
    qidx, docs, grades, rows = found
    shown = later[:EXAMPLES]
    wanted = rows[later]
    lines = wanted + first_line if first_line is not None else _row_lines(path, wanted, block_bytes)
    repeats = [
        (int(line), q.decode("utf-8"), d.decode("utf-8"), int(old), int(new))
        for line, q, d, old, new in zip(
            lines.tolist(),
            query_ids[qidx[shown]].tolist(),
            as_bytes(docs[shown]).tolist(),
            grades[earlier[:EXAMPLES]].tolist(),
            grades[shown].tolist(),
            strict=False,
        )
    ]
    repeats += [(int(line), "", "", 0, 0) for line in lines[EXAMPLES:].tolist()]
    return str(repeated_pairs_note(path, repeats))


def _longest_run(keys: WordArray) -> int:
    """Length of the longest run of equal keys (hash prefixes shared by different ids of a query)."""
    if keys.size == 0:
        return 1
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    return int(np.diff(np.r_[starts, keys.size]).max())


@dataclass(frozen=True)
class _Judgments:
    """Judgment rows in file order: each new query's id words, and per row its doc id and grade."""

    heads: WordArray
    """Id words of each run of rows with one query id."""
    new_query: npt.NDArray[np.bool_]
    """Whether each row starts such a run."""
    docs: WordArray
    grades: npt.NDArray[np.int32]
    hashes: WordArray
    notes: tuple[str, ...] = ()
    first_line: int | None = None
    """The file line of the first row when every row is the next line (no blank line anywhere: row
    ``r`` is then on line ``first_line + r``); ``None`` otherwise."""


def _from_arrays(path: str, judgments: list[_Judgments], threshold: int, block_bytes: int) -> QrelsIndex:
    """Index judgment rows (``judgments`` holds one item, taken out so its arrays can be freed early).

    Join entries are sorted with one ``np.sort`` of packed ``(query, hash prefix, row)`` words; the
    row bits give the permutation back, so no argsort over all judgments is needed.
    """
    rows_in = judgments.pop()
    notes, first_line = rows_in.notes, rows_in.first_line
    query_ids, first, inverse = _unique_ids(rows_in.heads)
    qidx = np.cumsum(rows_in.new_query, dtype=np.int64)
    qidx -= 1
    np.take(inverse, qidx, out=qidx)
    n_queries, n_rows = int(query_ids.size), int(qidx.size)
    row_bits = max(1, (n_rows - 1).bit_length())
    hash_bits = 64 - group_bits(n_queries) - row_bits
    if hash_bits < 8:
        raise SlowPath("qrels too large for the fast reader")
    packed = grouped_keys(qidx, n_queries, rows_in.hashes, hash_bits)
    docs_in, grades_in = rows_in.docs, rows_in.grades
    del rows_in
    packed <<= np.uint64(row_bits)
    packed |= np.arange(n_rows, dtype=np.uint64)
    packed.sort()
    rows = (packed & np.uint64((1 << row_bits) - 1)).astype(np.int64)
    keys = packed
    keys >>= np.uint64(row_bits)
    docs = docs_in[rows]
    del docs_in
    grades = grades_in[rows]
    del grades_in
    qidx = qidx[rows]
    earlier, later = _repeated_pairs(keys, rows, docs)
    if earlier.size:  # the last line of a pair wins; the note names the lines, as read_qrels does
        notes = (
            *notes,
            _repeats_note(
                path, query_ids, (earlier, later), (qidx, docs, grades, rows), block_bytes, first_line
            ),
        )
        keep = np.ones(keys.size, dtype=np.bool_)
        keep[earlier] = False
        keys, docs, grades, qidx = keys[keep], docs[keep], grades[keep], qidx[keep]
    del rows
    n_relevant = np.bincount(qidx[grades >= threshold], minlength=n_queries).astype(np.int64)
    positive = grades > 0
    top = np.uint64(2**32 - 1)
    by_grade = qidx[positive].astype(np.uint64) << np.uint64(32)
    by_grade |= top - grades[positive].astype(np.uint64)
    del qidx, positive
    by_grade.sort()
    offsets = np.zeros(n_queries + 1, dtype=np.int64)
    np.cumsum(np.bincount((by_grade >> np.uint64(32)).astype(np.int64), minlength=n_queries), out=offsets[1:])
    positive_grades = (top - (by_grade & top)).astype(np.float64)
    return QrelsIndex(
        path=path,
        sha256=sha256_of(path),
        query_ids=query_ids,
        file_order=np.argsort(first, kind="stable").astype(np.int64),
        n_relevant=n_relevant,
        positive_offsets=offsets,
        positive_grades=positive_grades,
        keys=keys,
        hash_bits=hash_bits,
        longest_run=_longest_run(keys),
        doc_words=docs,
        grades=grades,
        key_filter=membership_table(keys),
        notes=notes,
    )


def _block_table(block: TextBlock, first: bool) -> Table:
    """The judgment rows of a block (a header line at the top of the file left out)."""
    refuse_comments(block, after_blanks=False)
    table = tokenize(block, (4, 3))
    if first and table.rows and int(table.line_index[0]) == 0:
        start, length = table.column(0)
        head = block.text(int(start[0]), int(start[0] + length[0])).decode("utf-8")
        if head.lower() in _HEADER_WORDS:
            table = table.drop_first()
    return table


def _block_rows(
    block: TextBlock, first: bool
) -> tuple[WordArray, WordArray, npt.NDArray[np.int32], int | None] | None:
    """A block's query and doc id words and grades, and the block line of its first row when its
    rows are consecutive lines (``None`` when it has blank lines)."""
    table = _block_table(block, first)
    if table.rows == 0:
        return None
    grade_start, grade_len = table.column(-1)
    consecutive = table.separators is not None  # a canonical block: no blank line
    return (
        token_words(block, *table.column(0)),
        token_words(block, *table.column(-2)),
        parse_grades(token_words(block, grade_start, grade_len, 2), grade_len).astype(np.int32),
        int(table.line_index[0]) if consecutive else None,
    )


def _fast_judgments(path: str, block_bytes: int) -> _Judgments:
    heads: list[WordArray] = []
    flags: list[npt.NDArray[np.bool_]] = []
    docs: list[WordArray] = []
    grades: list[npt.NDArray[np.int32]] = []
    hashes: list[WordArray] = []
    previous: WordArray | None = None
    first_line: int | None = 1
    for index, block in enumerate(iter_blocks(path, block_bytes)):
        rows = _block_rows(block, index == 0)
        if rows is None:
            first_line = None
            continue
        qwords, dwords, block_grades, skipped = rows
        if skipped is None or (skipped and index):
            first_line = None
        elif skipped and first_line is not None:
            first_line += skipped  # a header line
        new = np.ones(qwords.shape[0], dtype=np.bool_)
        new[1:] = (qwords[1:] != qwords[:-1]).any(axis=1)
        if previous is not None:
            width = max(previous.shape[1], qwords.shape[1])
            new[0] = not rows_equal(pad_words(previous, width), pad_words(qwords[:1], width))[0]
        previous = qwords[-1:]
        heads.append(qwords[new])
        flags.append(new)
        docs.append(dwords)
        grades.append(block_grades)
        hashes.append(hash_rows(dwords))
    if not docs:
        raise SlowPath("no judgments")
    qw = max(h.shape[1] for h in heads)
    dw = max(d.shape[1] for d in docs)
    return _Judgments(
        np.concatenate([pad_words(h, qw) for h in heads]),
        np.concatenate(flags),
        np.concatenate([pad_words(d, dw) for d in docs]),
        np.concatenate(grades),
        np.concatenate(hashes),
        first_line=first_line,
    )


def _slow_judgments(path: str) -> _Judgments:
    noted = load_qrels_noted(path)
    # a query whose every line has a negative grade has no judgment left but is still a query: it
    # keeps one grade-0 row under the empty id, which no run line can have (run ids are tokens)
    qrels: Mapping[str, Mapping[str, int]] = {q: judged or {"": 0} for q, judged in noted[0].items()}
    encoded = [(qid.encode("utf-8"), [d.encode("utf-8") for d in judged]) for qid, judged in qrels.items()]
    if any(b"\x00" in q or any(b"\x00" in d for d in docs) for q, docs in encoded):
        raise SlowPath("a NUL byte in an id")
    all_grades = [g for judged in qrels.values() for g in judged.values()]
    if any(g >= 2**31 for g in all_grades):
        raise SlowPath("a grade too large for the fast reader")
    sizes = np.array([len(d) for _, d in encoded], dtype=np.int64)
    new = np.zeros(int(sizes.sum()), dtype=np.bool_)
    new[np.cumsum(sizes) - sizes] = True
    docs = words_of(np.array([d for _, ds in encoded for d in ds], dtype=np.bytes_))
    return _Judgments(
        words_of(np.array([q for q, _ in encoded], dtype=np.bytes_)),
        new,
        docs,
        np.array(all_grades, dtype=np.int32),
        hash_rows(docs),
        tuple(noted[1]),
    )


def read_qrels_index(path: str | Path, threshold: int = 1, block_bytes: int = 4 << 20) -> QrelsIndex:
    """Read TREC qrels into a :class:`QrelsIndex` (bad lines raise file:line errors)."""
    p = str(path)
    try:
        return _from_arrays(p, [_fast_judgments(p, block_bytes)], threshold, block_bytes)
    except (SlowPath, OSError):
        return _from_arrays(p, [_slow_judgments(p)], threshold, block_bytes)
