"""``ragaudit agreement``: how far annotators agree (Krippendorff's alpha, weighted Cohen's kappa),
overall and per tenant, and what they disagree on."""

from __future__ import annotations

import argparse
from typing import Any

from ragaudit.cli.argtypes import non_negative_int
from ragaudit.cli.console import shown

HELP = "inter-annotator agreement of judgments files: alpha, kappa, per tenant, disagreements"
SHOWN = 20


EXAMPLES = """\
ragaudit agreement judgments/ana.jsonl judgments/bob.jsonl
ragaudit agreement judgments/*.jsonl --weights linear --min-alpha 0.667 --out agreement.json
"""
JSON_OUT = True
"""``--out -`` writes the JSON report to standard output."""


MIN_PAIRABLE = 20
"""The fewest units judged by two or more annotators on which ``--min-alpha`` can pass: alpha on a
handful of items is 1.0 whenever they happen to agree (before: 2 agreeing items passed the gate)."""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "judgments", nargs="+", help="judgments files written by 'ragaudit label' (one per annotator)"
    )
    parser.add_argument(
        "--weights", choices=["quadratic", "linear"], default="quadratic", help="kappa weights"
    )
    parser.add_argument(
        "--min-alpha", type=float, help="exit 1 when the overall alpha is below this (e.g. 0.667)"
    )
    parser.add_argument(
        "--min-pairable",
        type=non_negative_int,
        default=MIN_PAIRABLE,
        help=f"with --min-alpha: fewer units judged by two or more annotators is too few to judge: "
        f"not verified, exit 1 (default {MIN_PAIRABLE})",
    )
    parser.add_argument(
        "--pool", help="the pool: also report the model's suggested grades against each annotator"
    )
    parser.add_argument(
        "--out", help="write the full report (every disagreement) as JSON here (- for standard output)"
    )


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _row(scope: str, figures: dict[str, Any]) -> list[str]:
    kappa = "; ".join(
        f"{'/'.join(k['annotators'])} {_fmt(k['kappa'])} (n={k['items']})" for k in figures["kappa"]
    )
    return [scope, str(figures["pairable_units"]), _fmt(figures["alpha_ordinal"]), kappa or "n/a"]


def run(args: argparse.Namespace) -> int:
    from ragaudit.artifacts.envelope import write_artifact
    from ragaudit.artifacts.tables import render_table
    from ragaudit.errors import InputError
    from ragaudit.labeling.agreement import agreement_report
    from ragaudit.labeling.judgments import read_labels

    labels = [read_labels(p) for p in args.judgments]
    names = [a.annotator for a in labels]
    if len(labels) < 2 or len(set(names)) != len(names):
        raise InputError(
            args.judgments[0],
            None,
            f"agreement needs two or more annotators (got: {', '.join(names)})",
            "pass one judgments file per annotator",
        )
    report = agreement_report(labels, args.weights)
    rows = [_row("overall", report["overall"])] + [
        _row(f"tenant {t}", f) for t, f in report["tenants"].items()
    ]
    print(render_table(["scope", "items", "alpha (ordinal)", f"kappa ({args.weights})"], rows))
    print("items = candidates graded by two or more annotators; alpha >= 0.8 is reliable, >= 0.667 tentative")
    dis = report["disagreements"]
    if dis:
        print(f"\n{len(dis)} disagreements to adjudicate (largest spread first):")
        rows = [
            [
                d["case_id"],
                d["chunk_id"],
                d["tenant_id"] or "-",
                ", ".join(f"{a} {g}" for a, g in d["grades"].items()),
            ]
            for d in dis[:SHOWN]
        ]
        print(render_table(["case", "candidate", "tenant", "grades"], rows))
        if len(dis) > SHOWN:
            print(f"... and {len(dis) - SHOWN} more (all in --out)")
        print(
            f"adjudicate in the workbench: ragaudit label POOL --out judgments/lead.jsonl --adjudicate {' '.join(args.judgments)}"
        )
    if args.pool:
        from ragaudit.labeling.agreement import model_agreement
        from ragaudit.labeling.pool import load_pool

        suggested = {
            (c.case_id, cand.chunk_id): cand.suggested_grade
            for c in load_pool(args.pool).cases
            for cand in c.candidates
            if cand.suggested_grade is not None
        }
        if not suggested:
            print(
                f"\nmodel vs annotators: not verified: {args.pool} holds no model suggestions (ragaudit pool --suggest-grades)"
            )
        else:
            report["model"] = model_agreement(labels, suggested, args.weights)
            rows = [
                [m["annotator"], str(m["items"]), _fmt(m["kappa"]), _fmt(m["exact"])] for m in report["model"]
            ]
            print("\nmodel suggestions vs annotators:")
            print(render_table(["annotator", "items", f"kappa ({args.weights})", "exact agreement"], rows))
    for u in report["unanswerable_disagreements"]:
        print(f"case {u['case_id']}: unanswerable marks differ: {u['marks']}")
    if args.out:
        write_artifact(report, args.out)
        print(f"agreement report written to {shown(args.out)}")
    alpha = report["overall"]["alpha_ordinal"]
    if args.min_alpha is not None:
        if alpha is None:
            print("gate: alpha is undefined (too few shared judgments): not verified, failing")
            return 1
        pairable = report["overall"]["pairable_units"]
        if pairable < args.min_pairable:
            print(
                f"gate: alpha {alpha:.3f} on {pairable} unit(s) judged by two or more annotators, fewer than "
                f"--min-pairable {args.min_pairable}: too few to judge, not verified, failing"
            )
            return 1
        if alpha < args.min_alpha:
            print(f"gate: alpha {alpha:.3f} is below {args.min_alpha}: FAILED")
            return 1
        print(f"gate: alpha {alpha:.3f} >= {args.min_alpha}: passed")
    return 0
