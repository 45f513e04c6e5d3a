"""Argument types checked when the command line is parsed (``type=`` functions for argparse).

A value outside its range is a usage error (exit 2) that names the flag, the accepted range and the
value given, before anything runs: ``--top-k 0``, ``--concurrency 0``, ``--timeout -1`` or
``--alpha 5`` never reach the code that would fail on them (or, worse, accept them).

============================  =======================================================
type                          accepts
============================  =======================================================
:func:`positive_int`          integers >= 1 (k, top-k, concurrency, resamples, depth)
:func:`non_negative_int`      integers >= 0 (counts where 0 means "none")
:func:`positive_float`        finite numbers > 0 (timeouts, temperatures > 0)
:func:`non_negative_float`    finite numbers >= 0 (a temperature of 0)
:func:`share`                 numbers in [0, 1] (error rates, stale shares, thresholds)
:func:`probability`           numbers in (0, 1), both ends excluded (alpha, weights)
:func:`above_zero_share`      numbers in (0, 1] (similarity thresholds)
:func:`input_file`            a path that is not a directory (read later; a missing file is
                              reported by the loader with its own fix)
:func:`output_file`           a path that is not an existing directory
============================  =======================================================
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path


def _number(text: str, kind: type[int] | type[float]) -> float:
    try:
        value = kind(text)
    except ValueError:
        noun = "an integer" if kind is int else "a number"
        raise argparse.ArgumentTypeError(f"expected {noun}, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def _ranged(text: str, ok: bool, accepted: str) -> None:
    if not ok:
        raise argparse.ArgumentTypeError(f"must be {accepted} (got {text})")


def positive_int(text: str) -> int:
    """An integer >= 1."""
    value = int(_number(text, int))
    _ranged(text, value >= 1, "an integer >= 1")
    return value


def non_negative_int(text: str) -> int:
    """An integer >= 0."""
    value = int(_number(text, int))
    _ranged(text, value >= 0, "an integer >= 0")
    return value


def positive_float(text: str) -> float:
    """A finite number > 0."""
    value = _number(text, float)
    _ranged(text, value > 0, "a number > 0")
    return value


def non_negative_float(text: str) -> float:
    """A finite number >= 0."""
    value = _number(text, float)
    _ranged(text, value >= 0, "a number >= 0")
    return value


def share(text: str) -> float:
    """A share within [0, 1]."""
    value = _number(text, float)
    _ranged(text, 0.0 <= value <= 1.0, "a share within [0, 1], e.g. 0.05")
    return value


def probability(text: str) -> float:
    """A number strictly between 0 and 1 (a significance level, a mixing weight)."""
    value = _number(text, float)
    _ranged(text, 0.0 < value < 1.0, "strictly between 0 and 1, e.g. 0.05")
    return value


def above_zero_share(text: str) -> float:
    """A number in (0, 1]."""
    value = _number(text, float)
    _ranged(text, 0.0 < value <= 1.0, "within (0, 1], e.g. 0.8")
    return value


def input_file(text: str) -> str:
    """A path to read a file from: a directory is refused here (a missing file is the loader's to report)."""
    if Path(text).is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a directory, expected a file (name the file inside it)")
    return text


def output_file(text: str) -> str:
    """A path to write a file to: an existing directory is refused."""
    if Path(text).is_dir():
        raise argparse.ArgumentTypeError(
            f"{text} is a directory, expected a file to write (e.g. {Path(text) / 'report.json'})"
        )
    return text
