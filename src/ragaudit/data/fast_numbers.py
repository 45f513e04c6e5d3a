"""Exact vectorised parsing of the numbers in TREC files (scores and grades).

Scores must equal Python's ``float(text)`` bit for bit, since ties decide rankings. Plain decimals
``[+-]digits[.digits]`` with at most 15 digits (an integer ``m < 2**53``) and ``f`` digits after the
point are parsed as ``m / 10**f``: both operands are exact doubles and IEEE division rounds
correctly, so the result is the correctly rounded value, as ``float`` gives (Clinger's fast path).
Other numerals (exponents, 17 significant digits) go through NumPy's string cast, which is also
correctly rounded, and anything else through ``float`` itself; what ``float`` rejects, or a score
that is not finite, raises :class:`~ragaudit.data.fast_text.SlowPath` so the validated reader
reports the line.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ragaudit.data.fast_text import IntArray, SlowPath, WordArray

FloatArray = npt.NDArray[np.float64]

_POW10 = np.array([10.0**i for i in range(23)])
_MAX_PLAIN_WIDTH = 64
_POSITIONS = np.arange(_MAX_PLAIN_WIDTH, dtype=np.uint8)
_NUMERAL_BYTES = np.zeros(256, dtype=np.bool_)
_NUMERAL_BYTES[list(b"0123456789+-.eE")] = True
_NUMERAL_BYTES[0] = True


def _byte_matrix(words: WordArray, width: int) -> npt.NDArray[np.uint8]:
    rows = np.ascontiguousarray(words)
    return rows.view(np.uint8).reshape(rows.shape[0], 8 * rows.shape[1])[:, :width]


def _plain_decimals(
    chars: npt.NDArray[np.uint8], lengths: IntArray
) -> tuple[FloatArray, npt.NDArray[np.bool_]]:
    """Values of the plain decimals among ``chars`` rows, and which rows were plain enough.

    A row is plain when its characters are digits, at most one dot and a leading sign, with 1 to
    15 digits (so the digits read as an integer below 2**53, exactly). Works on the transposed
    matrix, one contiguous vector per character position.
    """
    columns = np.ascontiguousarray(chars.T)
    digit = columns - np.uint8(48)
    is_digit = digit < np.uint8(10)
    is_dot = columns == np.uint8(46)
    negative = columns[0] == np.uint8(45)
    signed = negative | (columns[0] == np.uint8(43))
    # uint8 sums: exact for the rows that pass (at most 64 characters, one dot)
    n_digits = is_digit.sum(axis=0, dtype=np.uint8).astype(np.int64)
    n_dots = is_dot.sum(axis=0, dtype=np.uint8).astype(np.int64)
    ok = (n_digits + n_dots + signed == lengths) & (n_dots <= 1) & (n_digits >= 1) & (n_digits <= 15)
    dot_at = (is_dot * _POSITIONS[: columns.shape[0], None]).sum(axis=0, dtype=np.uint8).astype(np.int64)
    fraction = np.where(n_dots == 1, lengths - 1 - dot_at, 0)
    flags = is_digit.view(np.uint8)
    step = flags * np.uint8(9) + np.uint8(1)  # 10 at a digit, 1 elsewhere
    digit *= flags
    mantissa = np.zeros(columns.shape[1], dtype=np.float64)
    for column in range(columns.shape[0]):
        mantissa *= step[column]
        mantissa += digit[column]
    result = mantissa / _POW10[np.clip(fraction, 0, _POW10.size - 1)]
    return np.where(negative, -result, result), ok


def _other_numerals(chars: npt.NDArray[np.uint8]) -> FloatArray:
    texts = chars.copy().view(f"S{chars.shape[1]}").ravel()
    if _NUMERAL_BYTES[chars].all():
        try:
            return texts.astype(np.float64)
        except ValueError:
            pass
    try:
        return np.array([float(t.decode("utf-8")) for t in texts.tolist()], dtype=np.float64)
    except (ValueError, UnicodeDecodeError):
        raise SlowPath("a score that is not a number") from None


def parse_scores(words: WordArray, lengths: IntArray) -> FloatArray:
    """``float(token)`` for every token (given as words, see :func:`fast_text.token_words`)."""
    width = int(lengths.max(initial=0))
    chars = _byte_matrix(words, max(width, 1))
    if width > _MAX_PLAIN_WIDTH:
        values, ok = np.zeros(lengths.size), np.zeros(lengths.size, dtype=np.bool_)
    else:
        values, ok = _plain_decimals(chars, lengths)
    if not ok.all():
        rest = ~ok
        values[rest] = _other_numerals(chars[rest])
    if not np.isfinite(values).all():
        raise SlowPath("a score that is not finite")
    return values + 0.0  # -0.0 becomes 0.0: equal to Python, and one sort key for both


def parse_grades(words: WordArray, lengths: IntArray) -> IntArray:
    """Integer grades written as plain digits (at most 9); other spellings raise :class:`SlowPath`."""
    width = int(lengths.max(initial=0))
    if width == 0 or width > 9:
        raise SlowPath("a grade that is not a short run of digits")
    chars = _byte_matrix(words, width)
    digit_values = chars.astype(np.int64) - 48
    is_digit = (digit_values >= 0) & (digit_values < 10)
    if not (is_digit | (chars == 0)).all() or int(lengths.min()) < 1:
        raise SlowPath("a grade that is not a plain integer")
    grades = np.zeros(chars.shape[0], dtype=np.int64)
    for column in range(width):
        present = is_digit[:, column]
        grades = np.where(present, grades * 10 + digit_values[:, column], grades)
    return grades
