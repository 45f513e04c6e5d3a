"""``ragaudit check-answers``: are generated answers grounded in their retrieved context, and when they
fail, is it the retriever's fault or the generator's?"""

from __future__ import annotations

import argparse
from typing import Any

from ragaudit.cli.argtypes import input_file, non_negative_float, output_file, positive_int, share
from ragaudit.cli.cmd_context import (
    add_context_options,
    add_source_options,
    context_options,
    load_source,
    retrieval_outcome,
)
from ragaudit.cli.console import shown, step

HELP = "groundedness of answers, retrieval-vs-generation attribution and abstention"


EXAMPLES = """\
ragaudit check-answers --dataset golden.jsonl --corpus corpus.jsonl --pipeline hybrid --answers answers.jsonl
ragaudit check-answers --dataset golden.jsonl --corpus corpus.jsonl --report hybrid.json \\
    --endpoint http://localhost:8000/v1 --model my-model --api-key-env OPENAI_API_KEY
"""
JSON_OUT = True
"""``--out -`` writes the JSON report to standard output."""


def configure(parser: argparse.ArgumentParser) -> None:
    add_source_options(parser)
    add_context_options(parser)
    given = parser.add_mutually_exclusive_group(required=True)
    given.add_argument(
        "--answers", type=input_file, help="answers JSONL: {id, answer, context_chunk_ids?} per line"
    )
    given.add_argument(
        "--endpoint", help="OpenAI-compatible API root (e.g. http://127.0.0.1:8000/v1) to answer"
    )
    chat = parser.add_argument_group("chat endpoint (answering and judging)")
    chat.add_argument("--model", help="model name for --endpoint")
    chat.add_argument(
        "--api-key-env", help="name of the env var holding the API key (never written anywhere)"
    )
    chat.add_argument("--answer-prompt", type=input_file, help="a prompt file with {context} and {question}")
    chat.add_argument(
        "--max-tokens", type=positive_int, default=300, help="answer length limit (default 300)"
    )
    chat.add_argument(
        "--answer-concurrency", type=positive_int, default=4, help="parallel chat requests (default 4)"
    )
    chat.add_argument("--no-cache", action="store_true", help="do not cache chat replies")
    chat.add_argument("--judge", action="store_true", help="also ask an LLM judge (advisory only)")
    chat.add_argument("--judge-endpoint", help="the judge's API root (default: --endpoint)")
    chat.add_argument("--judge-model", help="the judge's model (default: --model)")
    chat.add_argument("--judge-repeats", type=positive_int, default=3, help="verdicts per answer (default 3)")
    chat.add_argument(
        "--judge-temperature", type=non_negative_float, default=0.7, help="judge temperature (default 0.7)"
    )
    check = parser.add_argument_group("checks")
    check.add_argument("--plans", help="comma-separated plan names (default: harvested from the corpus)")
    check.add_argument("--no-embeddings", action="store_true", help="lexical sentence support only")
    check.add_argument(
        "--lexical-min", type=share, default=0.5, help="sentence support threshold (default 0.5)"
    )
    check.add_argument(
        "--embedding-min", type=share, default=0.7, help="embedding support threshold (default 0.7)"
    )
    parser.add_argument("--out", type=output_file, help="write the JSON report here (- for standard output)")


def _chat_client(
    args: argparse.Namespace, url: str | None, model: str | None, temperature: float = 0.0
) -> Any:
    from ragaudit.errors import InputError
    from ragaudit.llm.chat import ChatClient

    if not url:
        raise InputError(
            "--judge", None, "the judge needs an endpoint", "add --endpoint or --judge-endpoint URL"
        )
    if not model:
        raise InputError("--model", None, "a chat endpoint needs a model name", "add --model NAME")
    return ChatClient(
        url, model, args.api_key_env, timeout_s=args.timeout, temperature=temperature, cache=not args.no_cache
    )


def _encoder(args: argparse.Namespace, notes: list[str]) -> Any:
    if args.no_embeddings:
        return None
    from ragaudit.errors import InputError, MissingDependencyError

    try:
        from ragaudit.retrieval.embedder import Embedder
        from ragaudit.retrieval.embedding_cache import EmbeddingCache

        return EmbeddingCache(Embedder(), progress=False)
    except (MissingDependencyError, ImportError, InputError) as exc:
        notes.append(f"embedding support skipped: {exc}")
        return None


def _answers(args: argparse.Namespace, source: Any, counter: Any, options: Any) -> tuple[Any, dict[str, Any]]:
    import asyncio
    from pathlib import Path

    from ragaudit.artifacts.provenance import sha256_of
    from ragaudit.context.answers import (
        ANSWER_PROMPT,
        EndpointAnswerer,
        answer_cases,
        answers_info,
        load_answers,
    )
    from ragaudit.context.audit import build_contexts

    if args.answers:
        answers = load_answers(args.answers)
        unknown = sorted(set(answers) - {c.id for c in source.dataset.cases})
        if unknown:
            source.notes.append(
                f"{len(unknown)} answer(s) for ids not in the dataset were ignored: {', '.join(unknown[:5])}"
            )
        return answers, answers_info(answers, {"file": str(args.answers), "sha256": sha256_of(args.answers)})
    client = _chat_client(args, args.endpoint, args.model)
    prompt = Path(args.answer_prompt).read_text(encoding="utf-8") if args.answer_prompt else ANSWER_PROMPT
    answerer = EndpointAnswerer(client, prompt, max_tokens=args.max_tokens)
    contexts = build_contexts(source, counter, options)
    jobs = [(case, contexts[case.id]) for case in source.dataset.cases]
    with step(f"check-answers: asking {client.info().get('model', args.model)} to answer {len(jobs)} cases"):
        answers = asyncio.run(answer_cases(answerer, jobs, concurrency=args.answer_concurrency))
    client.close()
    return answers, answers_info(
        answers, {"endpoint": client.info(), "prompt": "custom" if args.answer_prompt else "default"}
    )


def _judge(args: argparse.Namespace, source: Any, contexts: Any, answers: Any) -> Any:
    import asyncio

    from ragaudit.context.audit import judge_jobs
    from ragaudit.context.judge import judge_answer

    client = _chat_client(
        args, args.judge_endpoint or args.endpoint, args.judge_model or args.model, args.judge_temperature
    )
    gate = asyncio.Semaphore(args.answer_concurrency)

    async def one(job: tuple[str, str, str, str]) -> tuple[str, Any]:
        case_id, question, context, answer = job
        async with gate:
            verdict = await judge_answer(
                client, question=question, context=context, answer=answer, repeats=args.judge_repeats
            )
        return case_id, verdict

    async def every() -> list[tuple[str, Any]]:
        return list(await asyncio.gather(*(one(job) for job in judge_jobs(source, contexts, answers))))

    verdicts = dict(asyncio.run(every()))
    client.close()
    return verdicts


def run(args: argparse.Namespace) -> int:
    from ragaudit.artifacts.envelope import write_artifact
    from ragaudit.context.audit import (
        add_answer_checks,
        add_context_quality,
        build_contexts,
    )
    from ragaudit.context.claims import harvest_plan_names
    from ragaudit.context.groundedness import GroundednessChecker
    from ragaudit.context.tokens import token_counter

    counter = token_counter(args.tokenizer)
    options = context_options(args)
    source = load_source(args, "check-answers")
    answers, answers_source = _answers(args, source, counter, options)
    with step(f"check-answers: assembling and scoring {len(source.dataset.cases)} contexts"):
        contexts = build_contexts(source, counter, options, answers)
        metrics = add_context_quality(source, contexts, counter, options)
    plans = (
        [p.strip() for p in args.plans.split(",") if p.strip()]
        if args.plans
        else harvest_plan_names((d.title, d.text) for d in source.corpus.documents)
    )
    notes: list[str] = []
    with step(
        "check-answers: loading the embedding model (sentence support)"
        if not args.no_embeddings
        else "check-answers: lexical sentence support only"
    ):
        checker = GroundednessChecker(
            plans,
            encoder=_encoder(args, notes),
            lexical_min=args.lexical_min,
            embedding_min=args.embedding_min,
        )
    judge = None
    if args.judge:
        with step(
            f"check-answers: asking the judge about {len(answers)} answers ({args.judge_repeats} verdicts each)"
        ):
            judge = _judge(args, source, contexts, answers)
    with step(
        f"check-answers: checking {len(answers)} answers (values, plans, names, sentence support, attribution)"
    ):
        add_answer_checks(
            source,
            contexts,
            metrics,
            answers,
            checker,
            answers_source=answers_source,
            threshold=args.relevance_threshold,
            judge=judge,
        )
    if notes:
        source.report["notes"] = [*source.report.get("notes", []), *notes]
    from ragaudit.report.terminal import render_terminal

    print(render_terminal(source.report))
    if args.out:
        write_artifact(source.report, args.out)
        print(f"report written to {shown(args.out)}")
    return _exit_code(args, source, answers, judge)


def _exit_code(args: argparse.Namespace, source: Any, answers: Any, judge: Any) -> int:
    """The exit rule over the rankings, the answers (of --answers: a case without one failed; or asked of
    --endpoint) and the judge's verdicts."""
    from ragaudit.cli.outcome import NO_ANSWER, exit_code, failures_outcome

    checks = [retrieval_outcome(args, source)]
    if args.answers:  # a case without an answer was not checked: it fails like a missing case
        missing = f"{NO_ANSWER} {args.answers}"
        given = {c.id: None if c.id in answers else missing for c in source.dataset.cases}
        checks.append(failures_outcome(given, f"answers (--answers {args.answers})", "answers"))
    if args.endpoint:
        errors = {cid: answer.error for cid, answer in answers.items()}
        checks.append(failures_outcome(errors, "answers (--endpoint)", "chat"))
    if judge is not None:
        judged = {cid: (v.errors[0] if v.errors else None) for cid, v in judge.items()}
        checks.append(failures_outcome(judged, "judge", "judge"))
    return exit_code(checks, args.max_error_rate)
