"""Where answers come from: the user's generator (an answers JSONL file) or an OpenAI-compatible chat
endpoint that ragaudit asks to answer from the assembled context.

Answers file, one JSON object per line::

    {"id": "acme-warranty-001", "answer": "24 months from delivery.",
     "context_chunk_ids": ["acme-warranty-policy-v2", "acme-faq-hardware"]}

``id`` is a golden case id; ``answer`` a string (empty means the generator declined);
``context_chunk_ids`` (optional) the chunks the generator actually had in its prompt, which then replace
the retrieved top-k as the context the answer is checked against. Other fields are ignored. Every
problem is reported with its file:line and a fix, all at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragaudit.context.assemble import AssembledContext
from ragaudit.data.lines import iter_json_records
from ragaudit.data.schema import GoldenCase
from ragaudit.errors import ChatError, InputError, Problem, ValidationError
from ragaudit.llm.chat import SupportsChat, fill_prompt, require_placeholders

ANSWER_PROMPT = """Answer the question using only the numbered context passages below.
If the passages do not contain the answer, reply exactly: I don't know based on the provided context.
Be brief, and state figures (prices, limits, durations, dates) exactly as the passages write them.

Context:
{context}

Question: {question}
Answer:"""
"""The default prompt of :class:`EndpointAnswerer`; ``{context}`` and ``{question}`` are filled in."""


@dataclass(frozen=True)
class Answer:
    """One generated answer; ``text`` is ``None`` when none could be obtained (``error`` says why)."""

    id: str
    text: str | None
    context_chunk_ids: tuple[str, ...] | None = None
    line: int | None = None
    error: str | None = None


def _parse(path: str, number: int, obj: Any, problems: list[Problem]) -> Answer | None:
    def fail(message: str, fix: str) -> None:
        problems.append(Problem(path, number, message, fix))

    if not isinstance(obj, dict):
        fail("expected a JSON object", 'write {"id": "...", "answer": "..."}')
        return None
    case_id, text, ids = obj.get("id"), obj.get("answer"), obj.get("context_chunk_ids")
    ok = True
    if not isinstance(case_id, str) or not case_id.strip():
        fail("missing or empty 'id'", 'add "id": "<golden case id>"')
        ok = False
    if not isinstance(text, str):
        got = "missing" if text is None else f"a {type(text).__name__}"
        fail(f"'answer' must be a string ({got})", 'write "answer": "..." (an empty string for a decline)')
        ok = False
    if ids is not None and (
        not isinstance(ids, list) or not all(isinstance(i, str) and i.strip() for i in ids)
    ):
        fail(
            "'context_chunk_ids' must be a list of chunk id strings",
            'write "context_chunk_ids": ["id1", "id2"]',
        )
        ok = False
    if not ok:
        return None
    assert isinstance(case_id, str) and isinstance(text, str)
    return Answer(case_id, text, tuple(ids) if ids is not None else None, number)


def load_answers(path: str | Path) -> dict[str, Answer]:
    """Read an answers JSONL file: ``{case id: Answer}``; every problem raised together with file:line."""
    name = str(path)
    problems: list[Problem] = []
    answers: dict[str, Answer] = {}
    for number, obj in iter_json_records(path, problems):
        answer = _parse(name, number, obj, problems)
        if answer is None:
            continue
        first = answers.get(answer.id)
        if first is not None:
            problems.append(
                Problem(
                    name,
                    number,
                    f"duplicate id {answer.id!r} (first on line {first.line})",
                    "keep one answer per case",
                )
            )
            continue
        answers[answer.id] = answer
    if problems:
        raise ValidationError(problems)
    if not answers:
        raise InputError(
            name, None, "no answers in the file", 'write one {"id": ..., "answer": ...} per line'
        )
    return answers


class EndpointAnswerer:
    """Asks a chat endpoint (:class:`~ragaudit.llm.chat.ChatClient` or alike) to answer from a context."""

    def __init__(
        self, client: SupportsChat, prompt: str = ANSWER_PROMPT, *, max_tokens: int | None = 300
    ) -> None:
        self.client = client
        self.prompt = require_placeholders(prompt, ("context", "question"), "answer prompt")
        self.max_tokens = max_tokens

    def prompt_for(self, question: str, context: AssembledContext) -> str:
        return fill_prompt(
            self.prompt, {"context": context.prompt_text() or "(no passages)", "question": question}
        )

    async def answer(self, question: str, context: AssembledContext) -> str:
        reply = await self.client.complete(self.prompt_for(question, context), max_tokens=self.max_tokens)
        return reply.strip()


async def answer_cases(
    answerer: EndpointAnswerer,
    jobs: Sequence[tuple[GoldenCase, AssembledContext]],
    *,
    concurrency: int = 4,
) -> dict[str, Answer]:
    """Answer every case from its context, at most ``concurrency`` requests at a time.

    A case whose request fails (after the client's retries) gets an :class:`Answer` with ``error``.
    """
    if concurrency <= 0:
        raise ValueError(f"concurrency must be a positive integer (got {concurrency})")
    gate = asyncio.Semaphore(concurrency)

    async def one(case: GoldenCase, context: AssembledContext) -> Answer:
        async with gate:
            try:
                text = await answerer.answer(case.query, context)
            except ChatError as exc:
                return Answer(case.id, None, tuple(context.chunk_ids), error=str(exc))
        return Answer(case.id, text, tuple(context.chunk_ids))

    results = await asyncio.gather(*(one(case, context) for case, context in jobs))
    return {a.id: a for a in results}


def answers_info(answers: Mapping[str, Answer], source: Mapping[str, Any]) -> dict[str, Any]:
    """Provenance of the answers for the report."""
    return {
        **dict(source),
        "answers": len(answers),
        "errors": sum(1 for a in answers.values() if a.error is not None),
        "with_context_chunk_ids": sum(1 for a in answers.values() if a.context_chunk_ids is not None),
    }
