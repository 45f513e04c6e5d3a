"""The chat client of an LLM pipeline stage (reranker or rewriter), from the stage's parameters."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ragaudit.errors import InputError
from ragaudit.llm.chat import ChatClient


def stage_chat_client(
    where: str, base_url: str | None, model: str | None, api_key_env: str | None
) -> ChatClient:
    """A :class:`ChatClient` for ``base_url`` and ``model`` (both required); the key stays in ``api_key_env``."""
    if not base_url or not model:
        raise InputError(
            where,
            None,
            "an LLM stage needs base_url and model",
            'e.g. base_url = "http://localhost:8000/v1", model = "gpt-4o-mini", api_key_env = "OPENAI_API_KEY"',
        )
    return ChatClient(str(base_url), str(model), api_key_env)


Made = TypeVar("Made")


def chat_stage(make: Callable[..., Made]) -> Callable[..., Made]:
    """A stage factory taking ``model``, ``base_url``, ``api_key_env`` and ``prompt`` (the TOML keys of an
    ``llm`` stage) that builds ``make(chat_client[, prompt=prompt])``."""

    def build(
        *,
        model: str | None = None,
        base_url: str | None = None,
        api_key_env: str | None = None,
        prompt: str | None = None,
    ) -> Made:
        client = stage_chat_client("[llm]", base_url, model, api_key_env)
        extra: dict[str, Any] = {"prompt": prompt} if prompt else {}
        return make(client, **extra)

    return build
