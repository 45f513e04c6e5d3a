"""An optional LLM judge of groundedness, over the same OpenAI-compatible endpoint. Advisory only.

The deterministic checks decide ``grounded`` and the attribution; the judge never changes them. It
is asked ``repeats`` times per answer and its verdicts are reported with their spread, because one
LLM verdict is a sample, not a measurement::

    supported_share = (votes saying "supported") / (valid votes)
    variance        = supported_share · (1 − supported_share)   (of the 0/1 votes)

A vote that is not a readable verdict counts as invalid. Each request differs only by its trial
number (``trial i of n`` in the system message), so every trial is a distinct request, and the chat
client's cache (keyed by the SHA-256 of the endpoint URL and the request body, i.e. the content)
answers a repeated run without sending anything. Use a temperature above 0 for the spread to mean
anything.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ragaudit.errors import ChatError
from ragaudit.llm.chat import SupportsChat, fill_prompt, strip_markup

JUDGE_SYSTEM = (
    "You are a strict fact checker for a retrieval-augmented assistant (trial {trial} of {repeats})."
)
JUDGE_PROMPT = """Decide whether every claim in the answer is supported by the context passages.
Numbers, units, durations, dates and plan names must match the passages exactly.

Context:
{context}

Question: {question}
Answer: {answer}

Reply with JSON only: {"supported": true or false, "unsupported_claims": ["..."]}"""

_VERDICT = re.compile(r"\"?supported\"?\s*[:=]\s*(true|false)", re.IGNORECASE)


def parse_judgement(reply: str) -> bool | None:
    """``True``/``False`` from the judge's reply (JSON, or a ``supported: true`` line); ``None`` if unreadable."""
    text = strip_markup(reply)
    start, end = text.find("{"), text.rfind("}")
    if start != -1 and end > start:
        try:
            body = json.loads(text[start : end + 1])
        except ValueError:
            body = None
        if isinstance(body, dict) and isinstance(body.get("supported"), bool):
            return bool(body["supported"])
    match = _VERDICT.search(text)
    if match:
        return match.group(1).lower() == "true"
    word = text.strip().strip(".").lower()
    return {"yes": True, "supported": True, "no": False, "unsupported": False}.get(word)


@dataclass(frozen=True)
class JudgeVerdict:
    """The judge's votes on one answer (``None`` marks an unreadable reply or a failed request)."""

    votes: tuple[bool | None, ...]
    model: str
    errors: tuple[str, ...] = ()

    @property
    def valid(self) -> list[bool]:
        return [v for v in self.votes if v is not None]

    @property
    def supported_share(self) -> float | None:
        valid = self.valid
        return sum(valid) / len(valid) if valid else None

    @property
    def variance(self) -> float | None:
        share = self.supported_share
        return None if share is None else share * (1 - share)

    def to_json(self) -> dict[str, Any]:
        return {
            "advisory": True,
            "model": self.model,
            "repeats": len(self.votes),
            "votes": list(self.votes),
            "supported_share": self.supported_share,
            "variance": self.variance,
            "invalid": sum(1 for v in self.votes if v is None),
            **({"errors": list(self.errors)} if self.errors else {}),
        }


async def judge_answer(
    client: SupportsChat, *, question: str, context: str, answer: str, repeats: int = 3
) -> JudgeVerdict:
    """Ask the judge ``repeats`` times (sequentially: the trials of one answer share a rate limit)."""
    if repeats <= 0:
        raise ValueError(f"repeats must be a positive integer (got {repeats})")
    prompt = fill_prompt(
        JUDGE_PROMPT, {"context": context or "(no passages)", "question": question, "answer": answer}
    )
    votes: list[bool | None] = []
    errors: list[str] = []
    for trial in range(1, repeats + 1):
        system = JUDGE_SYSTEM.format(trial=trial, repeats=repeats)
        try:
            reply = await client.complete(
                [{"role": "system", "content": system}, {"role": "user", "content": prompt}]
            )
        except ChatError as exc:
            votes.append(None)
            errors.append(str(exc))
            continue
        votes.append(parse_judgement(reply))
    return JudgeVerdict(tuple(votes), client.model, tuple(errors))


def summarize_judge(verdicts: Sequence[JudgeVerdict]) -> dict[str, Any]:
    """Mean supported share and mean variance over judged answers (advisory)."""
    shares = [v.supported_share for v in verdicts if v.supported_share is not None]
    variances = [v.variance for v in verdicts if v.variance is not None]
    return {
        "advisory": True,
        "judged": len(verdicts),
        "mean_supported_share": sum(shares) / len(shares) if shares else None,
        "mean_variance": sum(variances) / len(variances) if variances else None,
        "unanimous": sum(1 for v in verdicts if len(set(v.valid)) == 1 and len(v.valid) == len(v.votes)),
    }
