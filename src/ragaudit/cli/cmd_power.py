"""``ragaudit power``: how many cases a golden set needs to detect a given difference, and the smallest
difference the current set can detect (paired t-test power on per-case differences; see
:mod:`ragaudit.stats.power`)."""

from __future__ import annotations

import argparse
import math

from ragaudit.cli.console import shown

HELP = "cases needed to detect a metric difference, and the smallest difference the set can detect"


EXAMPLES = """\
ragaudit power hybrid.json --baseline bm25.json --delta 0.02
ragaudit power hybrid.json --metric R@5 --alpha 0.01 --power 0.9
ragaudit power hybrid.json --baseline bm25.json --metric Hit@5,R@10
"""
JSON_OUT = True
"""``--out -`` writes the JSON report to standard output."""


FEW_FOR_SPREAD = 10
"""Fewer cases than this: the spread the power figures rest on is too uncertain to plan with (a
standard deviation estimated from 2 values can be off by a large factor)."""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("report", help="an eval report (JSON written by 'ragaudit eval --out')")
    parser.add_argument(
        "--baseline", help="the baseline's eval report: differences are report - baseline per case"
    )
    parser.add_argument(
        "--metric",
        action="append",
        default=[],
        help="metric(s), comma-separated or repeated (default nDCG@10, else every one)",
    )
    parser.add_argument("--delta", type=float, default=0.02, help="the difference to detect (default 0.02)")
    parser.add_argument(
        "--alpha", type=float, default=0.05, help="significance level, two-sided (default 0.05)"
    )
    parser.add_argument("--power", type=float, default=0.8, help="wanted detection probability (default 0.8)")
    parser.add_argument("--out", help="write the figures as JSON here (- for standard output)")


def run(args: argparse.Namespace) -> int:
    from ragaudit.artifacts.envelope import write_artifact
    from ragaudit.artifacts.in_sample import first_in_sample
    from ragaudit.artifacts.tables import fmt_number, render_table
    from ragaudit.cli.common import check_share
    from ragaudit.errors import InputError
    from ragaudit.evaluation.compare import check_comparable, load_report
    from ragaudit.evaluation.in_sample_integrity import with_own_in_sample
    from ragaudit.stats.power import estimate_power

    check_share("--alpha", args.alpha)
    check_share("--power", args.power)
    if not 0 < args.alpha < 1 or not 0 < args.power < 1:
        raise InputError(
            "--alpha/--power", None, "must be strictly between 0 and 1", "e.g. --alpha 0.05 --power 0.8"
        )
    if args.delta == 0 or not math.isfinite(args.delta):
        raise InputError(
            "--delta", None, f"must be a non-zero number (got {args.delta})", "e.g. --delta 0.02"
        )
    report = load_report(args.report)
    baseline = load_report(args.baseline) if args.baseline else None
    if baseline is not None:
        check_comparable([baseline, report])
    available = report.metric_names()
    asked = [_canonical(m) for text in args.metric for m in text.split(",") if m.strip()]
    metrics = asked or (["nDCG@10"] if "nDCG@10" in available else available)
    unknown = [m for m in metrics if m not in available]
    if unknown:
        raise InputError(
            args.report,
            None,
            f"no per-case {unknown[0]} in the report",
            f"use one of: {', '.join(available)}",
        )
    in_sample = first_in_sample(
        (r.label, with_own_in_sample(r.data)) for r in (report, baseline) if r is not None
    )
    if in_sample:  # the spread of a fitted stage's in-sample scores is not that of new queries
        print(in_sample["in_sample"]["text"])
    rows, out, unestimable = [], [], []
    few: list[str] = []  # figures that rest on too few cases to plan with
    for metric in metrics:
        scores = report.per_case(metric)
        if baseline is not None:
            base = baseline.per_case(metric)
            ids = sorted(set(scores) & set(base))
            diffs = [scores[i] - base[i] for i in ids]
        else:
            diffs = list(scores.values())  # the spread of the scores stands in for that of differences
        est = estimate_power(diffs, args.delta, args.alpha, args.power)
        rows.append(
            [
                metric,
                str(est.cases),
                fmt_number(est.mean_difference) if baseline is not None else "-",
                fmt_number(est.sd),
                str(est.cases_needed) if est.cases_needed is not None else "n/a",
                fmt_number(est.detectable) if est.estimable else "n/a",
            ]
        )
        if est.reason:
            unestimable.append(f"{metric}: power cannot be estimated: {est.reason}")
        elif est.cases < FEW_FOR_SPREAD:
            few.append(
                f"note: {metric}: the spread rests on {est.cases} case(s), fewer than {FEW_FOR_SPREAD}: a standard "
                "deviation estimated from so few values can be several times too small, so these case counts "
                "are a rough guide, not a plan; score more cases first"
            )
        out.append({"metric": metric, **est.to_json()})
    sd_label = "sd of differences" if baseline is not None else "sd of scores"
    print(
        render_table(
            [
                "metric",
                "cases",
                "mean diff",
                sd_label,
                f"cases for delta {args.delta}",
                "smallest detectable",
            ],
            rows,
        )
    )
    for line in [*unestimable, *few]:
        print(line)
    print(
        f"paired two-sided t-test at alpha {args.alpha} with power {args.power}; figures rest on the spread seen in "
        f"these cases"
    )
    if baseline is None:
        print(
            "note: no --baseline, so the spread of per-case scores stands in for the spread of per-case differences "
            "(larger, so more cases, when the two systems' scores correlate above 0.5, as they usually do); "
            "pass --baseline for the real figure"
        )
    if args.out:
        write_artifact(
            {
                "report": args.report,
                "baseline": args.baseline,
                "delta": args.delta,
                "alpha": args.alpha,
                "power": args.power,
                "metrics": out,
                **in_sample,
            },
            args.out,
        )
        print(f"power figures written to {shown(args.out)}")
    return 0


def _canonical(name: str) -> str:
    """A metric name as reports spell it (``hit@5`` → ``Hit@5``); as given when it is not one."""
    from ragaudit.errors import MetricNameError
    from ragaudit.metrics.names import parse_metric

    try:
        return parse_metric(name.strip()).name
    except MetricNameError:
        return name.strip()
