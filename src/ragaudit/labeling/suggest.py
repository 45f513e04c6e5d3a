"""Grade suggestions from an OpenAI-compatible model, shown in the workbench as suggestions only.

Each candidate still to judge is sent once with the lesson's scale, the question and the candidate's
title and text; the first digit 0-3 of the answer is the suggestion (an answer without one leaves
none). Suggestions never become labels: the annotator's keystroke does. ``ragaudit agreement --pool``
reports how far the model agrees with each annotator (weighted kappa on the candidates both graded).
"""

from __future__ import annotations

import asyncio
import re

from ragaudit.errors import ChatError
from ragaudit.labeling.judgments import SCALE
from ragaudit.labeling.pool import Candidate, Pool, PoolCase
from ragaudit.llm.chat import SupportsChat, fill_prompt

PROMPT = """You judge search results for a question-answering system.
Grade how well the document answers the question, on this scale:
{scale}
A superseded (older) version of a document is graded 0.

Question: {query}

Document title: {title}
Document text:
{text}

Answer with the grade only: one digit, 0, 1, 2 or 3."""
MAX_TEXT_CHARS = 6000
_DIGIT = re.compile(r"\b([0-3])\b")


def parse_grade(answer: str) -> int | None:
    """The first standalone digit 0-3 of the model's answer, else ``None``."""
    match = _DIGIT.search(answer)
    return int(match.group(1)) if match else None


def grade_prompt(case: PoolCase, candidate: Candidate) -> str:
    scale = "\n".join(f"{g} = {text}" for g, text in sorted(SCALE.items(), reverse=True))
    status = candidate.text.metadata.get("status")
    title = candidate.text.title + (f" (status: {status})" if isinstance(status, str) else "")
    return fill_prompt(
        PROMPT,
        {"scale": scale, "query": case.query, "title": title, "text": candidate.text.text[:MAX_TEXT_CHARS]},
    )


async def suggest_grades(pool: Pool, client: SupportsChat, concurrency: int = 4) -> tuple[int, list[str]]:
    """Fill ``suggested_grade`` of every candidate still to judge; return how many got one, and errors."""
    gate = asyncio.Semaphore(concurrency)
    errors: list[str] = []

    async def one(case: PoolCase, candidate: Candidate) -> None:
        async with gate:
            try:
                answer = await client.complete(grade_prompt(case, candidate), max_tokens=5)
            except ChatError as exc:
                errors.append(f"{case.case_id}/{candidate.chunk_id}: {exc}")
                return
        candidate.suggested_grade = parse_grade(answer)

    jobs = [one(c, cand) for c in pool.cases for cand in c.candidates if cand.prior_grade is None]
    await asyncio.gather(*jobs)
    done = sum(1 for c in pool.cases for cand in c.candidates if cand.suggested_grade is not None)
    return done, errors
