"""``ragaudit gate``: release gates on an eval report (exit 0 pass, 1 fail, 2 usage error)."""

from __future__ import annotations

import argparse
import sys

from ragaudit.cli.argtypes import input_file, output_file, positive_int
from ragaudit.cli.common import SEED_HELP
from ragaudit.cli.console import shown

HELP = "enforce release gates (metric self-test, quality, security, operations) on an eval report"


EXAMPLES = """\
ragaudit gate hybrid.json --policy gates.toml --baseline bm25.json --audit tenants.json   # exit 0 pass
ragaudit gate hybrid.json --policy gates.toml --out verdict.json   # no --audit: NOT VERIFIED, exit 1
# exit 0: every gate passed; 1: a gate failed or could not verify what it guards; 2: bad input
"""
JSON_OUT = True
"""``--out -`` writes the JSON report to standard output."""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "report", type=input_file, help="the eval report (JSON written by 'ragaudit eval --out')"
    )
    parser.add_argument(
        "--policy",
        required=True,
        type=input_file,
        help="the gate policy, e.g. gates.toml (see docs/gates.md)",
    )
    parser.add_argument(
        "--baseline", type=input_file, help="an eval report of the released system, for the regression check"
    )
    parser.add_argument(
        "--audit",
        type=input_file,
        action="append",
        default=[],
        metavar="FILE",
        help=(
            "a tenant-audit report (from 'ragaudit audit-tenants'): the only verification of tenant "
            "isolation (without a clean one the security gate is NOT VERIFIED, exit 1); its leaks "
            "count too (repeatable)"
        ),
    )
    parser.add_argument(
        "--out", type=output_file, help="write the verdict JSON (kind 'gate') here (- for standard output)"
    )
    parser.add_argument("--resamples", type=positive_int, default=10_000, help="randomization-test resamples")
    parser.add_argument("--seed", type=int, default=0, help=SEED_HELP)


def run(args: argparse.Namespace) -> int:
    from ragaudit.errors import InputError, ValidationError
    from ragaudit.gates.policy import load_policy
    from ragaudit.gates.verdict import run_gates

    if args.resamples < 100:
        raise InputError("--resamples", None, f"too few resamples ({args.resamples})", "use at least 1000")
    try:
        policy = load_policy(args.policy)
    except ValidationError as exc:
        for problem in exc.problems:
            print(f"error: {problem}", file=sys.stderr)
        print(f"invalid gate policy ({len(exc.problems)} problem(s)); see docs/gates.md", file=sys.stderr)
        return 2
    verdict = run_gates(
        args.report,
        policy,
        baseline_path=args.baseline,
        audit_paths=args.audit,
        resamples=args.resamples,
        seed=args.seed,
    )
    from ragaudit.report.terminal import render_terminal

    print(render_terminal(verdict.to_dict()))
    if args.out:
        verdict.write_json(args.out)
        print(f"verdict written to {shown(args.out)}")
    return verdict.exit_code
