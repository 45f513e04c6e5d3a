"""``ragaudit fit-fusion``: fit learned fusion (and a convex weight) on a golden set; report k-fold
cross-validated estimates only; write the model as JSON for ``[rerank] type = "learned"``.

Exit codes: 0 the model was fitted and written (whatever the estimates say: read them); 2 bad usage or
input (an unreadable dataset or corpus, a first stage that is not a bm25 + dense hybrid, too few
answerable cases for the folds, no relevant candidate to learn from, scikit-learn missing).
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from ragaudit.cli.argtypes import output_file, positive_float, positive_int, probability
from ragaudit.cli.common import add_dataset_options, add_policy_options, policy_from
from ragaudit.cli.console import step

HELP = "fit learned fusion on a golden set; k-fold cross-validated estimates vs RRF; write fusion.json"

EXAMPLES = """\
ragaudit fit-fusion --dataset golden.jsonl --corpus corpus.jsonl --out fusion.json
ragaudit fit-fusion --dataset golden.jsonl --corpus corpus.jsonl --out fusion.json --folds 10
ragaudit fit-fusion --dataset golden.jsonl --corpus corpus.jsonl --out fusion.json --holdout 0.3
  (then score it on the cases it never saw: ragaudit eval --dataset fusion.holdout.jsonl ...)
"""


def _floats(text: str) -> tuple[float, ...]:
    """A comma-separated list of numbers > 0."""
    values = tuple(positive_float(part.strip()) for part in text.split(",") if part.strip())
    if not values:
        raise argparse.ArgumentTypeError("expected one or more numbers > 0, comma-separated")
    return values


def _objectives(text: str) -> tuple[str, ...]:
    """A comma-separated list of pair weightings."""
    from ragaudit.experiments.fusion_fit import OBJECTIVES

    values = tuple(part.strip() for part in text.split(",") if part.strip())
    bad = [v for v in values if v not in OBJECTIVES]
    if bad or not values:
        raise argparse.ArgumentTypeError(
            f"expected {' and/or '.join(OBJECTIVES)}, comma-separated (got {text!r})"
        )
    return values


def configure(parser: argparse.ArgumentParser) -> None:
    add_dataset_options(parser)
    parser.add_argument("--corpus", required=True, help="corpus JSONL or BEIR folder")
    parser.add_argument("--out", type=output_file, required=True, help="write the fitted model (JSON) here")
    parser.add_argument(
        "--pipeline",
        default="hybrid",
        help="the first stage: hybrid (default) or a TOML with a bm25 + dense hybrid",
    )
    parser.add_argument("--folds", type=positive_int, default=5, help="cross-validation folds (default 5)")
    parser.add_argument(
        "--candidates",
        type=positive_int,
        default=100,
        help="first-stage candidates the model reorders (default 100)",
    )
    parser.add_argument(
        "--metrics",
        default="nDCG@10,MRR@10,R@10",
        help="metrics to estimate; the first picks the convex weight",
    )
    parser.add_argument("--tenant", help="tenant for cases that name none")
    parser.add_argument(
        "--c",
        type=_floats,
        default=(0.1, 1.0),
        dest="c_values",
        help="inverse L2 strengths to choose from by inner cross-validation, comma-separated (default 0.1,1)",
    )
    parser.add_argument(
        "--objective",
        type=_objectives,
        default=("uniform", "lambda"),
        dest="objectives",
        help="pair weightings to choose from by inner cross-validation: uniform, lambda (default both)",
    )
    parser.add_argument(
        "--resamples", type=positive_int, default=10_000, help="randomization test resamples (default 10000)"
    )
    parser.add_argument("--seed", type=int, default=0, help="fold shuffle and test seed (default 0)")
    parser.add_argument(
        "--holdout",
        type=probability,
        metavar="FRACTION",
        help="set this share of the questions aside (whole questions, per tenant, by --seed): the model "
        "never sees them and they are written to --holdout-out, to score it on (without it, scoring "
        "the model on this dataset is IN-SAMPLE)",
    )
    parser.add_argument(
        "--holdout-out",
        type=output_file,
        metavar="FILE",
        help="where the held-out cases go, as golden JSONL (default: --out with .holdout.jsonl)",
    )
    add_policy_options(parser)


def run(args: argparse.Namespace) -> int:
    from ragaudit.artifacts.tables import fmt_number, fmt_p, render_table
    from ragaudit.corpus.loading import load_corpus
    from ragaudit.data.loading import load_dataset
    from ragaudit.experiments.fusion_fit import METHODS, fit_fusion
    from ragaudit.metrics.names import parse_metrics
    from ragaudit.pipelines.config import resolve_pipeline

    policy = policy_from(args)
    specs = parse_metrics(args.metrics)
    config = resolve_pipeline(args.pipeline)
    dataset = load_dataset(args.dataset, args.dataset_format, args.split, policy.relevance_threshold)
    holdout: dict[str, object] | None = None
    if args.holdout is not None:
        dataset, held_out, holdout = _hold_out(args, dataset)
    announce = (
        f"fit-fusion: building {config.name} over {args.corpus}, retrieving the candidates and fitting "
        f"{args.folds} folds"
    )
    with step(announce):
        result = asyncio.run(
            fit_fusion(
                dataset,
                load_corpus(args.corpus),
                config,
                specs,
                policy,
                folds=args.folds,
                candidates=args.candidates,
                objectives=args.objectives,
                c_values=args.c_values,
                seed=args.seed,
                resamples=args.resamples,
                default_tenant=args.tenant,
                holdout=holdout,
            )
        )
    means = result.means()
    print(
        f"{args.folds}-fold cross-validated estimates over {len(result.case_ids)} answerable cases "
        f"(each case scored by models fitted without it):\n"
    )
    print(
        render_table(
            ["method", *result.metrics],
            [[m, *(fmt_number(means[m][k]) for k in result.metrics)] for m in METHODS],
        )
    )
    print("\nagainst rrf (paired randomization test, Holm over the rows):\n")
    rows = [
        [
            f"{c['method']} {c['metric']}",
            f"{c['delta']:+.4f}",
            f"{c['wins']}/{c['losses']}",
            fmt_p(c["p_value"], prefix=False),
            fmt_p(c["p_value_holm"], prefix=False),
        ]
        for c in result.comparisons
    ]
    print(render_table(["method / metric", "delta", "wins/losses", "p", "p (Holm)"], rows))
    weights = result.model.info["convex"]["weights"]
    print(
        f"\nconvex weight per fold (dense): {', '.join(str(f['convex_dense_weight']) for f in result.folds)}; "
        f"on all cases: {result.convex_weight} (bm25 {round(1.0 - result.convex_weight, 2)})"
    )
    chosen = ", ".join(f"{f['learned']['objective']} C={f['learned']['C']:g}" for f in result.folds)
    how = (
        "inner cross-validation on its training cases"
        if len(args.objectives) * len(args.c_values) > 1
        else "fixed by --objective and --c"
    )
    print(
        f"learned objective and C per fold ({how}): {chosen}; "
        f"on all cases: {result.setting.objective} C={result.setting.c:g}"
    )
    result.model.write(args.out)
    if holdout is None:
        scored = f"scoring it on {args.dataset} is IN-SAMPLE (reports say so); --holdout 0.3 sets cases aside"
    else:
        _write_cases(held_out, str(holdout["path"]))
        scored = (
            f"{holdout['cases']} held-out case(s) it never saw written to {holdout['path']}: score it there "
            f"(ragaudit eval --dataset {holdout['path']} --corpus {args.corpus} --pipeline hybrid-rerank:{args.out})"
        )
    fitted = "all " if holdout is None else ""
    print(
        f"\nmodel fitted on {fitted}{len(result.case_ids)} answerable cases written to {args.out}; {scored}; use it with\n"
        f'  [rerank] type = "learned", model = "{args.out}", top_n = {result.candidates}\n'
        f"  or --pipeline hybrid-rerank:{args.out}\n"
        f'convex fusion with the cross-validated weight: [retriever] type = "hybrid", method = "weighted", '
        f'normalize = "minmax", weights = {weights} (one per component, in the pipeline\'s order)'
    )
    return 0


def _hold_out(args: argparse.Namespace, dataset: Any) -> tuple[Any, Any, dict[str, object]]:
    """The fit part, the held-out part and what ``fitted_on.holdout`` records about it."""
    from pathlib import Path

    from ragaudit.experiments.fusion_fit import split_holdout

    fit, held_out = split_holdout(dataset, args.holdout, args.seed, args.tenant)
    path = args.holdout_out or str(Path(args.out).with_suffix("")) + ".holdout.jsonl"
    print(
        f"holdout: {len(held_out.cases)} of {len(dataset.cases)} cases set aside ({args.holdout:g} of the "
        f"questions per tenant, seed {args.seed}); fitting on the other {len(fit.cases)}"
    )
    return (
        fit,
        held_out,
        {"fraction": args.holdout, "seed": args.seed, "cases": len(held_out.cases), "path": path},
    )


def _write_cases(dataset: Any, path: str) -> None:
    """The held-out cases as golden JSONL (one case per line, as ``ragaudit eval --dataset`` reads it)."""
    import json
    from pathlib import Path

    lines = [json.dumps(case.to_json(), ensure_ascii=False) for case in dataset.cases]
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")
