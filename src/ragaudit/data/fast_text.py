"""Vectorised tokenising of whitespace-separated text (TREC qrels and run files) with NumPy.

A :class:`TextBlock` is a run of whole lines held as a zero-padded ``uint8`` array. :func:`tokenize`
finds the columns of every non-blank line with a few array passes (no per-line Python loop):

* separators are the bytes ``<= 0x20``; every one of them must be a space, tab, CR or LF (any other
  control byte, a NUL, or Unicode whitespace such as U+00A0 that Python's ``str.split`` would also
  split on raises :class:`SlowPath`, so the validated line reader decides those inputs instead);
* a *canonical* block (one separator between columns, ``\\n`` line ends, no blank lines) is cut with
  a single ``flatnonzero``; anything else (runs of spaces, tabs, CRLF, blank lines) takes a general
  path over token edges;
* lines must all have the same number of columns, else :class:`SlowPath` (the validated reader then
  names the offending file:line).

Token bytes are read as 64-bit words (:func:`token_words`): word ``w`` of a token holds its bytes
``8w .. 8w+7``, zero-padded. Because UTF-8 byte order is code-point order and ids hold no NUL, the
big-endian value of those words orders ids exactly as Python orders ``str``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import numpy.typing as npt

from ragaudit.data.lines import MAX_LINE_BYTES

IntArray = npt.NDArray[np.int64]
WordArray = npt.NDArray[np.uint64]

PAD = 64
"""Zero bytes after the data, so 8-byte reads past a token's end stay inside the buffer."""
BOM = b"\xef\xbb\xbf"

_SEPARATOR = np.zeros(256, dtype=np.bool_)
_SEPARATOR[[0x09, 0x0A, 0x0D, 0x20]] = True
_LOW_MASKS = np.array([(1 << (8 * i)) - 1 for i in range(8)] + [(1 << 64) - 1], dtype=np.uint64)
# Characters (besides ASCII ones caught as control bytes) that ``str.split()`` treats as whitespace.
UNICODE_SPACES = re.compile("[\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")


class SlowPath(Exception):
    """The fast reader cannot decide this input exactly; the validated reader must look at it."""


@dataclass(frozen=True)
class TextBlock:
    """Whole lines of a file as bytes: ``data[:size]`` ends with ``\\n``; ``PAD`` zero bytes follow."""

    data: npt.NDArray[np.uint8]
    size: int
    offset: int
    """Byte offset of the block in its file."""

    @classmethod
    def of(cls, raw: bytes | bytearray | memoryview, offset: int = 0, end: int | None = None) -> TextBlock:
        """A block holding ``raw[:end]`` (copied once), ``offset`` bytes into its file."""
        view = memoryview(raw)[:end]
        size = len(view)
        needs_newline = size > 0 and view[-1] != 0x0A
        data = np.empty(size + int(needs_newline) + PAD, dtype=np.uint8)
        data[:size] = np.frombuffer(view, dtype=np.uint8)
        data[size:] = 0
        if needs_newline:
            data[size] = 0x0A
        return cls(data, size + int(needs_newline), offset)

    @classmethod
    def in_place(cls, buffer: bytearray, size: int, offset: int = 0) -> TextBlock:
        """A block holding ``buffer[:size]`` without copying it: the array is a view of ``buffer``, which
        must have ``PAD + 1`` bytes to spare after ``size`` (they are overwritten) and must not change
        afterwards."""
        if len(buffer) < size + 1 + PAD:
            raise ValueError("the buffer needs PAD + 1 spare bytes after the data")
        needs_newline = size > 0 and buffer[size - 1] != 0x0A
        end = size + int(needs_newline)
        buffer[size : end + PAD] = bytes(end + PAD - size)
        if needs_newline:
            buffer[size] = 0x0A
        return cls(np.frombuffer(buffer, dtype=np.uint8, count=end + PAD), end, offset)

    def text(self, start: int = 0, stop: int | None = None) -> bytes:
        return self.data[start : self.size if stop is None else stop].tobytes()


def refuse_comments(block: TextBlock, after_blanks: bool) -> None:
    """Raise :class:`SlowPath` if a line of the block may be a ``#`` comment (the validated readers skip them).

    A qrels comment starts its line (``after_blanks=False``); a run comment is the first non-blank
    character (``after_blanks=True``: any ``#`` that starts a token counts, a cheap superset). A ``#``
    inside an id (``D#4``) is data and keeps the fast path.
    """
    data = block.data[: block.size]
    at = np.flatnonzero(data == 0x23)
    if at.size == 0:
        return
    before = data[np.maximum(at - 1, 0)]
    starts = (at == 0) | (before == 0x0A)
    if after_blanks:
        starts |= (before == 0x20) | (before == 0x09) | (before == 0x0D)
    if starts.any():
        raise SlowPath("a comment line")


def iter_blocks(path: str | Path, block_bytes: int) -> Iterator[TextBlock]:
    """Blocks of whole lines of a file, about ``block_bytes`` each (a UTF-8 byte-order mark is dropped)."""
    with Path(path).open("rb") as handle:
        carry = handle.read(len(BOM))
        offset = 0
        if carry == BOM:
            carry, offset = b"", len(BOM)
        while True:
            data = handle.read(block_bytes)
            buffer = carry + data
            cut = len(buffer) if not data else buffer.rfind(b"\n") + 1
            if cut:
                yield TextBlock.of(buffer, offset, cut)
                offset += cut
            carry = buffer[cut:]
            if not data:
                return


def line_number(path: str | Path, offset: int) -> int:
    """1-based number of the line that starts at byte ``offset`` of a file."""
    count = 1
    with Path(path).open("rb") as handle:
        while offset > 0:
            piece = handle.read(min(offset, 1 << 20))
            if not piece:
                break
            count += piece.count(b"\n")
            offset -= len(piece)
    return count


@dataclass(frozen=True)
class Table:
    """The columns of a block's non-blank lines (one row per line)."""

    line_starts: IntArray
    """Byte offset of each row's line in the block."""
    line_index: IntArray
    """0-based index of each row's line among the block's lines (blank lines included)."""
    width: int
    separators: IntArray | None = None
    """Canonical blocks: ``(rows, width)`` offsets of the byte that ends each column."""
    token_bounds: tuple[IntArray, IntArray] | None = None
    """Other blocks: ``(rows, width)`` start and end offsets of each column."""
    non_ascii: bool = False
    """Whether the block has a byte >= 0x80 (known for free from the UTF-8 check)."""

    @property
    def rows(self) -> int:
        return int(self.line_starts.size)

    def column(self, index: int) -> tuple[IntArray, IntArray]:
        """Start offsets and byte lengths of column ``index`` (negative counts from the end)."""
        index %= self.width
        if self.token_bounds is not None:
            starts, ends = self.token_bounds[0][:, index], self.token_bounds[1][:, index]
        else:
            assert self.separators is not None
            ends = self.separators[:, index]
            starts = self.line_starts if index == 0 else self.separators[:, index - 1] + 1
        return np.ascontiguousarray(starts), ends - starts

    def drop_first(self) -> Table:
        """The table without its first row."""
        return Table(
            self.line_starts[1:],
            self.line_index[1:],
            self.width,
            None if self.separators is None else self.separators[1:],
            None if self.token_bounds is None else (self.token_bounds[0][1:], self.token_bounds[1][1:]),
            self.non_ascii,
        )


def _check_bytes(block: TextBlock, low_positions: IntArray) -> None:
    body = block.data[: block.size]
    if not _SEPARATOR[body[low_positions]].all():
        raise SlowPath("a control byte other than space, tab, CR or LF")


def _check_text(block: TextBlock) -> bool:
    """Raise :class:`SlowPath` on invalid UTF-8 or Unicode whitespace; whether the block has non-ASCII bytes."""
    body = block.data[: block.size]
    non_ascii = bool(body.size and int(body.max()) >= 0x80)
    if non_ascii:
        try:
            text = block.text().decode("utf-8")
        except UnicodeDecodeError:
            raise SlowPath("invalid UTF-8") from None
        if UNICODE_SPACES.search(text):
            raise SlowPath("Unicode whitespace inside a line")
    return non_ascii


def _canonical(block: TextBlock, low: IntArray, adjacent: bool, columns: int) -> Table | None:
    """Cut a block whose lines are ``col SP col SP ... col LF``; ``None`` when it is not that simple.

    ``adjacent`` says whether two separator bytes follow each other somewhere (an empty column).
    """
    if low.size == 0 or low.size % columns or low[0] == 0 or adjacent:
        return None
    seps = low.reshape(-1, columns)
    kinds = block.data[low]
    rows = seps.shape[0]
    newlines = np.count_nonzero(kinds == np.uint8(0x0A))
    blanks = np.count_nonzero((kinds == np.uint8(0x20)) | (kinds == np.uint8(0x09)))
    line_ends = kinds[columns - 1 :: columns] == np.uint8(0x0A)
    if newlines != rows or blanks != low.size - rows or not line_ends.all():
        return None
    line_starts = np.empty(seps.shape[0], dtype=np.int64)
    line_starts[0] = 0
    line_starts[1:] = seps[:-1, -1] + 1
    if int(np.diff(line_starts, append=block.size).max(initial=0)) > MAX_LINE_BYTES:
        raise SlowPath("a line over the length limit")
    return Table(line_starts, np.arange(seps.shape[0], dtype=np.int64), columns, separators=seps)


def _general(block: TextBlock, low: IntArray, columns: tuple[int, ...]) -> Table:
    _check_bytes(block, low)
    body = block.data[: block.size]
    is_low = np.zeros(block.size + 2, dtype=np.int8)
    is_low[0] = is_low[-1] = 1
    is_low[low + 1] = 1
    edges = np.flatnonzero(np.diff(is_low))
    starts, ends = edges[0::2], edges[1::2]
    newlines = low[body[low] == np.uint8(0x0A)]
    if newlines.size and int(np.diff(newlines, prepend=-1).max()) > MAX_LINE_BYTES:
        raise SlowPath("a line over the length limit")
    line_of = np.searchsorted(newlines, starts)
    counts = np.bincount(line_of, minlength=newlines.size)
    used = counts[counts > 0]
    width = int(used[0]) if used.size else columns[0]
    if width not in columns or (used != width).any():
        raise SlowPath("lines with an unexpected number of columns")
    line_index = line_of[::width]
    line_starts = np.where(line_index > 0, newlines[line_index - 1] + 1, 0)
    bounds = (starts.reshape(-1, width), ends.reshape(-1, width))
    return Table(line_starts, line_index, width, token_bounds=bounds)


def tokenize(block: TextBlock, columns: tuple[int, ...]) -> Table:
    """Columns of every non-blank line; all lines must have the same count, one of ``columns``."""
    is_low = block.data[: block.size] <= np.uint8(0x20)
    low = np.flatnonzero(is_low)
    adjacent = bool((is_low[1:] & is_low[:-1]).any())
    non_ascii = _check_text(block)
    for width in columns:
        table = _canonical(block, low, adjacent, width)
        if table is not None:
            return replace(table, non_ascii=non_ascii) if non_ascii else table
    table = _general(block, low, columns)
    return replace(table, non_ascii=non_ascii) if non_ascii else table


def token_words(
    block: TextBlock, starts: IntArray, lengths: IntArray, n_words: int | None = None
) -> WordArray:
    """Token bytes as ``(tokens, n_words)`` little-endian 64-bit words, zero-padded past each token.

    ``n_words`` defaults to enough words for the longest token.
    """
    if n_words is None:
        n_words = max(1, (int(lengths.max(initial=0)) + 7) // 8)
    view = np.ndarray((block.data.size - 7,), dtype="<u8", buffer=block.data, strides=(1,))
    last = block.data.size - 8
    out = np.empty((starts.size, n_words), dtype=np.uint64)
    np.bitwise_and(view[starts], _LOW_MASKS[np.minimum(lengths, 8)], out=out[:, 0])
    for w in range(1, n_words):
        at = np.minimum(starts + 8 * w, last)
        keep = np.minimum(np.maximum(lengths - 8 * w, 0), 8)
        np.bitwise_and(view[at], _LOW_MASKS[keep], out=out[:, w])
    return out


def big_endian(words: WordArray) -> WordArray:
    """Words whose unsigned order is the byte (and so the ``str``) order of the tokens."""
    return words.byteswap()


def as_bytes(words: WordArray) -> npt.NDArray[np.bytes_]:
    """Fixed-width ``S`` strings from token words (NumPy drops the zero padding)."""
    rows = np.ascontiguousarray(words)
    return rows.view(np.uint8).reshape(rows.shape[0], 8 * rows.shape[1]).view(f"S{8 * rows.shape[1]}").ravel()
