"""The options of ``eval``, ``bench`` and ``compare`` about holes in the judgments and power.

``--min-judged SHARE`` (default 0.8): a system whose top k is judged less than that gets a warning (its
scores are lower bounds; :mod:`ragaudit.evaluation.holes`). It is a warning, not a failure, unless
``--require-judged`` is given: then such a system, or one whose judged share could not be measured,
makes the command exit 1 after writing its report (never a green run on a lower bound).
``--delta`` / ``--power``: the power figures each comparison carries (:mod:`ragaudit.stats.power`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Mapping
from typing import Any

from ragaudit.cli.argtypes import probability, share


def add_holes_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--min-judged",
        type=share,
        default=0.8,
        metavar="SHARE",
        help="warn when a system's top k (k: the first metric's cut-off) is judged less than this share: "
        "its scores are lower bounds (default 0.8)",
    )
    parser.add_argument(
        "--require-judged",
        action="store_true",
        help="exit 1 when a system's top k is judged less than --min-judged, or could not be measured",
    )


def add_power_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--delta",
        type=float,
        default=0.02,
        help="the difference the power figures are for: cases needed to detect it (default 0.02)",
    )
    parser.add_argument(
        "--power",
        type=probability,
        default=0.8,
        help="the detection probability of the power figures (default 0.8)",
    )


def check_delta(delta: float) -> None:
    import math

    from ragaudit.errors import InputError

    if delta == 0 or not math.isfinite(delta):
        raise InputError("--delta", None, f"must be a non-zero number (got {delta})", "e.g. --delta 0.02")


def holes_exit(args: argparse.Namespace, holes: Iterable[Mapping[str, Any]]) -> int:
    """1 (with the reason on stderr) when ``--require-judged`` is given and a system's top k is not
    judged enough (``holes`` as the reports write them), else 0."""
    if not args.require_judged:
        return 0
    short = [h for h in holes if h.get("status") != "complete"]
    for h in short:
        print(
            f"error: --require-judged: {h.get('system')}: {h.get('status', '').replace('_', ' ')} "
            f"(Judged@{h.get('k')} under --min-judged {args.min_judged})",
            file=sys.stderr,
        )
    return 1 if short else 0
