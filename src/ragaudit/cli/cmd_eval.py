"""``ragaudit eval``: score a run file, a built pipeline, an HTTP service or a Python retriever on a
golden dataset; print a table, write a JSON report."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragaudit.cli.announce import pipeline_text, plan, source_text
from ragaudit.cli.argtypes import output_file, positive_int
from ragaudit.cli.common import (
    RUN_FORMAT_HELP,
    add_dataset_options,
    add_policy_options,
    add_source_options,
    policy_from,
    source_spec_from,
)
from ragaudit.cli.console import note, shown, step
from ragaudit.cli.judged_options import add_holes_options
from ragaudit.cli.outcome import add_outcome_options
from ragaudit.cli.security_options import (
    add_attribute_options,
    add_shared_tenant_option,
    semantic_attributor,
    shared_tenants,
)

if TYPE_CHECKING:
    from ragaudit.cli.outcome import Via

FAST_PATH_BYTES = 100 * 2**20
HELP = "evaluate a run file, a pipeline over a corpus, an HTTP endpoint or a Python retriever"


EXAMPLES = """\
ragaudit eval --dataset golden.jsonl --run run.trec --metrics nDCG@10,R@5,MRR --out report.json
ragaudit eval --dataset golden.jsonl --corpus corpus.jsonl --pipeline hybrid --out hybrid.json
ragaudit eval --dataset golden.jsonl --endpoint http://localhost:8000/search --auth-env SEARCH_TOKEN \\
    --results run.jsonl --resume
ragaudit eval --dataset golden.jsonl --retriever mypkg.search:make_retriever   # module from this folder
ragaudit eval --dataset golden.jsonl --run run.trec --out - | jq .metrics      # JSON on stdout
"""
JSON_OUT = True
"""``--out -`` writes the JSON report to standard output."""


def configure(parser: argparse.ArgumentParser) -> None:
    add_dataset_options(parser)
    add_source_options(parser, with_run=True)
    parser.add_argument(
        "--corpus",
        help="corpus JSONL or BEIR folder (needed with --pipeline/--config); with any source, each "
        "returned chunk's tenant is verified from it by id and content (see docs/security.md)",
    )
    parser.add_argument(
        "--run-format", choices=["auto", "trec", "jsonl"], default="auto", help=RUN_FORMAT_HELP
    )
    parser.add_argument(
        "--fast",
        choices=["auto", "on", "off"],
        default="auto",
        help="the vectorised engine for a TREC qrels + TREC run pair (same numbers; no per-case retrieved "
        f"lists in the report); auto = for runs over {FAST_PATH_BYTES // 2**20} MiB",
    )
    parser.add_argument(
        "--metrics",
        default=None,
        help="comma-separated metric names (default nDCG@10,R@5,R@10,R@100,P@5,MRR@10,MAP@100,Hit@5)",
    )
    parser.add_argument(
        "--max-depth",
        type=positive_int,
        metavar="N",
        help="score only each case's top N results, in the run's order (trec_eval's -M; run files are "
        "ordered as trec_eval orders them: score descending, doc id descending)",
    )
    parser.add_argument("--out", type=output_file, help="write the JSON report here (- for standard output)")
    parser.add_argument(
        "--no-history",
        action="store_true",
        help="do not record this run in the run history ($RAGAUDIT_HISTORY, else .ragaudit/history.sqlite)",
    )
    parser.add_argument(
        "--name", help="a label for this system in reports (default: derived from the source)"
    )
    live = parser.add_argument_group("live sources (pipeline, endpoint, retriever)")
    live.add_argument(
        "--top-k", type=positive_int, help="results to request per query (default: largest metric cut-off)"
    )
    live.add_argument("--tenant", help="tenant for cases that name none")
    live.add_argument(
        "--results", type=output_file, help="append-only JSONL of finished cases (enables --resume)"
    )
    live.add_argument("--resume", action="store_true", help="continue from --results without redoing cases")
    add_shared_tenant_option(parser)
    add_attribute_options(parser)
    parser.add_argument(
        "--mlflow",
        action="store_true",
        help="also log the report to MLflow as one run (MLFLOW_TRACKING_URI, experiment ragaudit; "
        "the same run as `ragaudit export mlflow`, docs/integrations.md)",
    )
    add_policy_options(parser)
    add_holes_options(parser)
    add_outcome_options(parser)


def _ownership(args: argparse.Namespace) -> Any:
    """The index that decides who owns a returned chunk of an outside source (an endpoint, a Python
    retriever, a run file) from ``--corpus``: by id, content and every other field, and with
    ``--attribute semantic`` rewritten text by its nearest document (reported apart); and every value
    of the whole response beside the chunks (``debug``, ``facets``, ...), as the tenant audit reads it."""
    from ragaudit.cli.whole_response import WholeResponseOwnership
    from ragaudit.corpus.loading import load_corpus
    from ragaudit.security.ownership import OwnershipIndex

    loaded = load_corpus(args.corpus)
    index = OwnershipIndex.build(loaded.documents)
    semantic = semantic_attributor(args, loaded.documents)
    if semantic is None:
        return WholeResponseOwnership(index, index)
    from ragaudit.security.semantic_attribution import SemanticOwnership

    return WholeResponseOwnership(SemanticOwnership(index, semantic), index)


def _live_source(
    args: argparse.Namespace, dataset: Any, threshold: int
) -> tuple[Any, Any, str, dict[str, Any], Any]:
    """The retriever to query, the dataset it is scored on, its label, its provenance, and the corpus
    ownership index that checks tenant isolation (``None`` without ``--corpus``)."""
    from ragaudit.pipelines.sources import open_source

    source = open_source(source_spec_from(args), corpus=args.corpus, dataset=dataset)
    ownership: Any
    if source.pipeline is not None and not source.pipeline.external:  # its chunks, by id and content
        from ragaudit.runner.chunk_owners import PipelineChunkOwnership

        ownership = PipelineChunkOwnership(source.chunks)
    else:
        ownership = _ownership(args) if args.corpus else None
    return (
        source.retriever,
        source.scored_on(dataset, threshold),
        source.label,
        source.provenance(),
        ownership,
    )


def run(args: argparse.Namespace) -> int:
    from ragaudit.metrics.names import DEFAULT_METRICS, parse_metrics

    if args.resume and not args.results:
        from ragaudit.errors import InputError

        raise InputError(
            "--resume", None, "nothing to resume from", "add --results FILE (the run's results file)"
        )
    if args.attribute == "semantic" and not args.corpus:
        from ragaudit.errors import InputError

        raise InputError(
            "--attribute", None, "semantic attribution places text in a corpus", "add --corpus CORPUS"
        )
    policy = _with_max_depth(policy_from(args), args.max_depth)
    specs = parse_metrics(args.metrics) if args.metrics else DEFAULT_METRICS
    fast = _fast_path(args)
    if fast:
        from ragaudit.evaluation.fast_trec import evaluate_trec_files

        print(
            f"fast path: {args.run} is scored with the vectorised TREC engine (per-case retrieved lists "
            "are left out of the report)"
        )
        from ragaudit.evaluation.fast_report import fast_outcome, fast_report

        _provenance_meanwhile()
        with step(f"eval: scoring {args.run} against {args.dataset}"):
            fast_result = evaluate_trec_files(args.dataset, args.run, specs, policy)
        _warn(fast_result.dataset_notes)
        report = fast_report(fast_result, args.min_judged)
        return _report_and_exit(args, report, fast_outcome(fast_result, f"--run {args.run}"))
    import asyncio  # the paths below only: the fast path above starts sooner without them

    from ragaudit.data.loading import load_dataset, load_run
    from ragaudit.evaluation.evaluate import evaluate
    from ragaudit.evaluation.live import RunOptions, evaluate_live, retrieval_depth

    dataset = load_dataset(args.dataset, args.dataset_format, args.split, policy.relevance_threshold)
    _warn(dataset.notes)
    if args.corpus:
        from ragaudit.data.validate import unknown_ids_warning

        _warn(unknown_ids_warning(dataset, args.corpus))
    if args.run:
        plan(
            "eval",
            [f"run file {args.run}"],
            dataset,
            policy.relevance_threshold,
            metrics=",".join(str(s) for s in specs),
            max_depth=args.max_depth,
        )
        run_file = load_run(args.run, args.run_format, args.name)
        if args.corpus:  # check each listed chunk's owner from the corpus (by id; by content when given)
            from ragaudit.runner.tenancy import assess_run

            tenants = {c.id: c.tenant_id for c in dataset.cases}
            assess_run(run_file, tenants, _ownership(args), shared=shared_tenants(args))
        result = evaluate(dataset, run_file, specs, policy)
        return _finish(args, result, run_sample=list(run_file.cases)[:3])
    if args.pipeline or args.config:
        over = f" over {args.corpus}" if args.corpus else ""  # no corpus: the build says so next
        with step(f"eval: building pipeline {args.pipeline or args.config}{over}"):
            retriever, scored_on, label, context, ownership = _live_source(
                args, dataset, policy.relevance_threshold
            )
    elif getattr(args, "retriever", None):  # importing a framework can take seconds: say so
        with step(f"eval: loading the retriever {args.retriever}"):
            retriever, scored_on, label, context, ownership = _live_source(
                args, dataset, policy.relevance_threshold
            )
    else:
        retriever, scored_on, label, context, ownership = _live_source(
            args, dataset, policy.relevance_threshold
        )
    depth = retrieval_depth(specs, args.top_k)
    plan(
        "eval",
        [_what_runs(args, context, args.name or label)],
        scored_on,
        policy.relevance_threshold,
        top_k=depth,
        concurrency=args.concurrency,
        metrics=",".join(str(s) for s in specs),
    )
    if args.resume:
        _say_reused(args.results, scored_on, depth, args.name or label, context)
    options = RunOptions(
        depth,
        args.tenant,
        args.concurrency,
        args.timeout,
        args.results,
        args.resume,
        False if args.no_progress else None,
        shared_tenants=shared_tenants(args),
    )
    with step(f"eval: querying {len(scored_on.cases)} cases, {args.concurrency} at a time"):
        result = asyncio.run(
            evaluate_live(
                scored_on,
                retriever,
                specs,
                policy,
                options,
                name=args.name or label,
                context=context,
                ownership=ownership,
            )
        )
    return _finish(args, result)


def _provenance_meanwhile() -> None:
    """Read the report's provenance (``git`` twice, the installed versions; both cached) in a background
    thread while the run is scored, instead of after it: about 50 ms off the end of a fast eval."""
    import threading

    from ragaudit.artifacts.provenance import environment, git_state

    threading.Thread(target=lambda: (git_state(), environment()), daemon=True).start()


def _what_runs(args: argparse.Namespace, context: dict[str, Any], name: str) -> str:
    """The source about to be queried, as the plan line names it (a built pipeline with its models)."""
    pipeline = context.get("pipeline")
    if isinstance(pipeline, dict) and isinstance(pipeline.get("config"), dict):
        return "pipeline " + pipeline_text(pipeline["config"], pipeline.get("models"))
    text = source_text(args)
    if args.endpoint:
        how = "--name" if args.name else "host and path; --name to change"
        return f"{text} (named {name!r} in reports and the history: {how})"
    return text


def _say_reused(results: str, dataset: Any, top_k: int, name: str, context: dict[str, Any]) -> None:
    """``--resume``: refuse a results file another system wrote (exit 2, naming both), else say how many
    cases it already holds (reused, not queried again)."""
    from ragaudit.evaluation.live import run_identity
    from ragaudit.runner.checkpoint import check_resumable, read_results

    check_resumable(results, top_k, name, run_identity(dataset.sha256, context, name))
    path = Path(results)
    finished = read_results(path)[0] if path.is_file() else {}
    reused = sum(1 for case in dataset.cases if case.id in finished)
    total = len(dataset.cases)
    note(f"eval: --resume: {reused} of {total} cases reused from {results}, {total - reused} to run")


def _with_max_depth(policy: Any, max_depth: int | None) -> Any:
    from dataclasses import replace

    return replace(policy, max_depth=max_depth)


def _warn(notes: Any) -> None:
    """How the dataset was read, on stderr (each note once: count and first examples)."""
    import sys

    for line in notes:
        print(f"warning: {line}", file=sys.stderr)


def _fast_path(args: argparse.Namespace) -> bool:
    """Whether to score with the vectorised TREC engine: asked for, or a big TREC run against qrels."""
    from pathlib import Path

    from ragaudit.data.loading import detect_dataset_format, detect_run_format

    if not args.run or args.fast == "off":
        return False
    pair = (
        args.dataset_format if args.dataset_format != "auto" else detect_dataset_format(args.dataset)
    ) == "qrels" and (args.run_format if args.run_format != "auto" else detect_run_format(args.run)) == "trec"
    if args.fast == "on" and not pair:
        from ragaudit.errors import InputError

        raise InputError(
            "--fast",
            None,
            "the fast path reads a TREC qrels file and a TREC run file",
            "drop --fast on, or pass --dataset QRELS --run RUN.trec",
        )
    return pair and (args.fast == "on" or Path(args.run).stat().st_size > FAST_PATH_BYTES)


def _via(args: argparse.Namespace) -> Via:
    if args.run:
        return "run"
    if args.endpoint:
        return "endpoint"
    return "retriever" if args.retriever else "pipeline"


def _finish(args: argparse.Namespace, result: Any, run_sample: list[str] | None = None) -> int:
    """Print the table, write the report and the history entry, then apply the exit rule (and
    ``--require-judged``)."""
    from dataclasses import replace

    from ragaudit.cli.outcome import result_outcome

    result = replace(result, min_judged=args.min_judged)
    via = _via(args)
    label = {
        "run": f"--run {args.run}",
        "endpoint": f"--endpoint {result.run.get('name') or args.endpoint}",
        "retriever": f"--retriever {args.retriever}",
    }
    outcome = result_outcome(
        result, label.get(via, f"--pipeline {args.pipeline or args.config}"), via, run_sample or ()
    )
    check_ids = None
    if args.corpus and not (args.pipeline or args.config):
        check_ids = lambda: _warn_unknown_ids(result, args.corpus)  # noqa: E731
    return _report_and_exit(args, result.to_dict(), outcome, check_ids, _history_key(args, result))


def _report_and_exit(
    args: argparse.Namespace,
    report: dict[str, Any],
    outcome: Any,
    check_ids: Any = None,
    history_key: str | None = None,
) -> int:
    """The one report dict: its summary on the terminal, then (after ``check_ids``, when given) the
    file, the history entry and the exit rule."""
    from ragaudit.cli.judged_options import holes_exit
    from ragaudit.cli.outcome import exit_code
    from ragaudit.evaluation.outcome import with_outcome
    from ragaudit.report.terminal import render_terminal

    report = with_outcome(report, outcome.record(args.max_error_rate))
    print(render_terminal(_summary_of(report)))
    if check_ids is not None:
        check_ids()
    if args.out:
        from ragaudit.artifacts.envelope import write_artifact

        write_artifact(report, args.out)
        print(f"report written to {shown(args.out)}")
    if not args.no_history:
        from ragaudit.artifacts.history import record_run

        print(record_run(report, key=history_key, replaces=bool(getattr(args, "resume", False))))
    if getattr(args, "mlflow", False):
        from ragaudit.report.mlflow_export import export_to_mlflow, html_page

        run_ids = export_to_mlflow(report, html=html_page(report, args.out or "report"), where="--mlflow")
        print(f"MLflow run logged: {', '.join(run_ids)} (experiment ragaudit)")
    return max(exit_code([outcome], args.max_error_rate), holes_exit(args, [report["holes"]]))


def _summary_of(report: dict[str, Any]) -> dict[str, Any]:
    """What the terminal summary reads: the report without its case records (the summary shows
    counts and lists, never a case's entry), so a 100,000-case report is not read twice."""
    return {**report, "per_case": []}


def _history_key(args: argparse.Namespace, result: Any) -> str | None:
    """A live run's history key: its results file and what ran there (a resumed run replaces the entry
    of the run it continues, never another system's entry)."""
    if not getattr(args, "results", None):
        return None
    import hashlib
    import json

    from ragaudit.evaluation.live import run_identity

    identity = run_identity(
        str(result.dataset.get("sha256", "")), result.context, str(result.run.get("name", ""))
    )
    digest = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:16]
    return f"results:{Path(args.results).resolve()}:{digest}"


def _warn_unknown_ids(result: Any, corpus: str) -> None:
    """Warn (stderr) about returned ids that name nothing in ``corpus`` (a document ``D`` also names its
    chunks ``D#n``): a field mapped wrongly, or a service serving another corpus, scores zeros silently."""
    import sys

    from ragaudit.data.corpus_ids import read_corpus_index
    from ragaudit.errors import ValidationError

    index, problems = read_corpus_index(corpus)
    if problems:
        raise ValidationError(problems)
    unknown: dict[str, None] = {}
    cases = 0
    for case in result.per_case:
        found = [r.chunk_id for r in case.retrieved if not index.known(r.chunk_id)]
        cases += bool(found)
        unknown.update(dict.fromkeys(found))
    if unknown:
        listed = ", ".join(repr(i) for i in list(unknown)[:5]) + (" ..." if len(unknown) > 5 else "")
        print(
            f"warning: {len(unknown)} returned id(s) in {cases} case(s) are not in the corpus {corpus}: "
            f"{listed} (map the service's id field with --field chunk_id=THEIRS, or pass the corpus it serves)",
            file=sys.stderr,
        )
