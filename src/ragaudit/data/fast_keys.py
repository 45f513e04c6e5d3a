"""Array helpers for keys made of 64-bit words: order, comparison, hashing and grouped duplicates.

Ids are rows of big-endian words (see :mod:`ragaudit.data.fast_text`), so comparing rows word
by word is comparing the ids as Python strings. Hashes only *propose* candidates (equal ids always
hash equally); every decision that matters is then made on the words themselves, so a hash
collision costs time, never correctness.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ragaudit.data.fast_text import IntArray, WordArray

BoolArray = npt.NDArray[np.bool_]

_SIGN = np.uint64(1 << 63)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = 0x9E3779B97F4A7C15


def float_order(values: npt.NDArray[np.float64]) -> WordArray:
    """Unsigned keys in the order of the (finite, non-negative-zero) floats ``values``."""
    bits = np.ascontiguousarray(values, dtype=np.float64).view(np.uint64)
    return np.where(bits & _SIGN, ~bits, bits | _SIGN)


def lex_argsort(keys: Sequence[npt.NDArray[np.uint64] | IntArray]) -> IntArray:
    """Stable argsort by several key columns, the most significant first (least significant digit)."""
    if not keys:
        raise ValueError("lex_argsort needs at least one key")
    order = np.argsort(keys[-1], kind="stable")
    for key in reversed(keys[:-1]):
        order = order[np.argsort(key[order], kind="stable")]
    return order


def rows_greater(a: WordArray, b: WordArray) -> BoolArray:
    """Row-wise ``a > b`` for rows of big-endian words (lexicographic)."""
    result = np.zeros(a.shape[0], dtype=np.bool_)
    undecided = np.ones(a.shape[0], dtype=np.bool_)
    for w in range(a.shape[1]):
        result |= undecided & (a[:, w] > b[:, w])
        undecided &= a[:, w] == b[:, w]
    return result


def rows_equal(a: WordArray, b: WordArray) -> BoolArray:
    """Row-wise equality of word rows of the same width."""
    return np.asarray((a == b).all(axis=1))


def pad_words(words: WordArray, n_words: int) -> WordArray:
    """Zero-pad word rows to ``n_words`` columns (a longer id never equals a shorter one's padding)."""
    if words.shape[1] >= n_words:
        return words
    out = np.zeros((words.shape[0], n_words), dtype=np.uint64)
    out[:, : words.shape[1]] = words
    return out


def _mix(z: WordArray) -> WordArray:
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def hash_rows(words: WordArray) -> WordArray:
    """A 64-bit hash of each word row, independent of zero padding.

    Ids hold no NUL byte, so a zero word is always padding and is skipped: the same id hashes the
    same in tables of different widths.
    """
    h = np.zeros(words.shape[0], dtype=np.uint64)
    for w in range(words.shape[1]):
        word = words[:, w]
        salt = np.uint64(_GOLDEN * (w + 1) % (1 << 64))
        h = np.where(word != 0, _mix(h ^ (word + salt)), h)
    return h


def group_bits(n_groups: int) -> int:
    return max(1, (max(n_groups, 1) - 1).bit_length())


def grouped_keys(
    group: IntArray, n_groups: int, hashes: WordArray, hash_bits: int | None = None
) -> WordArray:
    """One sortable key per row: the group in the high bits, the top ``hash_bits`` of the hash below.

    ``hash_bits`` defaults to every bit the group leaves free.
    """
    bits = group_bits(n_groups)
    free = 64 - bits if hash_bits is None else hash_bits
    if bits > 40 or free < 1 or bits + free > 64:
        raise ValueError("too many groups for a grouped key")
    return (group.astype(np.uint64) << np.uint64(free)) | (hashes >> np.uint64(64 - free))


def _slots(keys: WordArray, bits: int) -> WordArray:
    """Slots of ``keys`` in a ``2**bits``-slot table (a multiplicative hash of the whole key)."""
    return (keys * _M1) >> np.uint64(64 - bits)


def membership_table(keys: WordArray) -> WordArray:
    """A bit table (64 slots a word) set at every key's slot: a quick, exact-negative pre-check before
    a search (:func:`in_table`).

    About 32 slots per key, so about 3% of absent keys pass, and the table stays small enough for
    the processor's caches (2**25 slots, 4 MB, for a million keys; at most 2**27, 16 MB).
    """
    bits = min(27, max(12, keys.size.bit_length() + 5))
    table = np.zeros(1 << (bits - 6), dtype=np.uint64)
    slots = _slots(keys, bits)
    words = (slots >> np.uint64(6)).view(np.int64)
    bit = (slots & np.uint64(63)).astype(np.uint8)
    order = np.argsort(bit, kind="stable")  # one group per bit: repeated words in a group set one bit
    ends = np.cumsum(np.bincount(bit, minlength=64))
    for b, (start, end) in enumerate(zip([0, *ends[:-1].tolist()], ends.tolist(), strict=True)):
        if end > start:
            table[words[order[start:end]]] |= np.uint64(1 << b)
    return table


def in_table(table: WordArray, keys: WordArray) -> BoolArray:
    """Whether each key's slot is set in a :func:`membership_table` (False: the key is not in it)."""
    bits = (table.size * 64).bit_length() - 1
    slots = _slots(keys, bits)
    words = table[(slots >> np.uint64(6)).view(np.int64)]
    return ((words >> (slots & np.uint64(63))) & np.uint64(1)).astype(np.bool_)


def sorted_distinct(values: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """``np.unique(values)`` of a 1-D array, without the ``numpy.ma`` import (about 15 ms at start-up)
    that ``np.unique`` makes when it is asked for the values alone."""
    ordered = np.sort(values)
    if ordered.size < 2:
        return ordered
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]


def repeated(keys: WordArray) -> BoolArray:
    """Which entries of ``keys`` occur more than once."""
    ordered = np.sort(keys)
    twins = ordered[1:][ordered[1:] == ordered[:-1]]
    if twins.size == 0:
        return np.zeros(keys.shape[0], dtype=np.bool_)
    return np.isin(keys, sorted_distinct(twins))


_HIGH = np.uint64(0x8080808080808080)
_BYTES = np.uint64(0x0101010101010101)


def high_byte_rows(words: WordArray) -> BoolArray:
    """Which rows of token words hold a byte >= 0x80 (a non-ASCII character)."""
    found: BoolArray = ((words & _HIGH) != 0).any(axis=1)
    return found


def unusual_id_rows(words: WordArray) -> BoolArray:
    """Which rows of token words are not in one form already: a non-ASCII byte or an ASCII capital
    (an id whose NFKC case-folded form may differ from itself; :mod:`ragaudit.evaluation.id_forms`)."""
    low = (words | _HIGH) - _BYTES * np.uint64(0x41)  # high bit kept per byte where (byte & 0x7F) >= 'A'
    above = (words | _HIGH) - _BYTES * np.uint64(0x5B)  # ... where it is > 'Z'
    capital = low & ~above & ~words & _HIGH
    found: BoolArray = (((words & _HIGH) | capital) != 0).any(axis=1)
    return found
