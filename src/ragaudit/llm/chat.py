"""A client for OpenAI-compatible chat endpoints: ``POST {base_url}/chat/completions``.

Anything that speaks the chat-completions API works (OpenAI, vLLM, llama.cpp's server, Ollama's
``/v1``, gateways). :meth:`ChatClient.complete` sends the messages and returns the first choice's
message content as a string.

**The API key.** The client never holds the key: it stores only the *name* of the environment
variable (``api_key_env``), reads the value when a request is sent, and passes it as
``Authorization: Bearer …``. The value appears in no ``repr``, error message, cache entry or log: every
form of it (raw, JSON-escaped, URL-encoded, base64, hex, pieces of 8+ characters; see
:mod:`ragaudit.redaction`) is masked in every answer the client returns or caches and in every error
it raises (some servers echo request headers back).

**Failures.** Timeouts, connection errors and HTTP 408/425/429/5xx are retried up to ``max_retries``
times, waiting as :class:`~ragaudit.retry.RetryPolicy` prescribes (exponential backoff from
``backoff_s`` with seeded jitter, at least the server's ``Retry-After``). Other 4xx replies fail at once
with the server's message; a success whose body is not a chat completion fails at once as malformed.

Hierarchy (the runner retries transient errors once more at the case level and records the rest)::

    RetrievalError
    └── ChatError                                  the chat endpoint did not give an answer
        ├── ChatUnavailableError (transient)       timeout / connection / 408, 425, 429, 5xx after retries
        └── ChatRequestError (permanent)           other 4xx, malformed reply, API key variable unset

**Cache (optional).** With ``cache=True`` (``$RAGAUDIT_CACHE_DIR`` or ``./.ragaudit/cache``) or a path,
answers are kept in SQLite (``chat.sqlite``) keyed by a sha256 of the endpoint URL and the request body
(model, messages, temperature, max_tokens), so a repeated run sends nothing it has sent before. The key
is not part of the request body and never reaches the cache.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import sqlite3
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeAlias, runtime_checkable

from ragaudit.cache import CACHE_ENV, default_cache_dir
from ragaudit.errors import (
    ChatError,
    ChatRequestError,
    ChatUnavailableError,
    InputError,
    MissingDependencyError,
)
from ragaudit.redaction import redact
from ragaudit.retry import RetryPolicy
from ragaudit.sqlite_files import connect_shared

TRANSIENT_STATUS = frozenset({408, 425, 429})
CHAT_CACHE_FILE = "chat.sqlite"
_SNIPPET = 300

Messages: TypeAlias = str | Sequence[Mapping[str, str]]
"""A single user message as a string, or a list of ``{"role": ..., "content": ...}`` messages."""


@runtime_checkable
class SupportsChat(Protocol):
    """What the LLM reranker and rewriter need: :class:`ChatClient` or anything shaped like it."""

    @property
    def model(self) -> str:
        """The default model name."""
        ...

    async def complete(
        self, messages: Messages, *, model: str | None = None, max_tokens: int | None = None
    ) -> str:
        """The assistant's answer to ``messages``."""
        ...


def require_placeholders(template: str, names: Sequence[str], what: str) -> str:
    """Return ``template`` when it holds every ``{name}``; otherwise an :class:`InputError` with the fix."""
    missing = [n for n in names if "{" + n + "}" not in template]
    if missing:
        raise InputError(
            what,
            None,
            f"the prompt lacks the placeholder(s) {', '.join('{' + n + '}' for n in missing)}",
            f"write a prompt that contains {', '.join('{' + n + '}' for n in names)}",
        )
    return template


def fill_prompt(template: str, values: Mapping[str, str]) -> str:
    """Replace each ``{name}`` of ``values`` in ``template``; other braces (JSON examples) stay as written."""
    return re.sub(
        r"\{(\w+)\}", lambda m: values[m.group(1)] if m.group(1) in values else m.group(0), template
    )


def strip_markup(answer: str) -> str:
    """An answer without code fences, Markdown emphasis and surrounding whitespace."""
    text = re.sub(r"^```[\w-]*\s*|\s*```$", "", answer.strip())
    return re.sub(r"[*`]+", "", text).strip()


def _import_httpx() -> Any:
    try:
        import httpx
    except ImportError:
        raise MissingDependencyError("httpx", "http") from None
    return httpx


def _retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header given in seconds (an HTTP date is ignored)."""
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return seconds if seconds >= 0 else None


def _text_of(content: Any) -> str | None:
    """Message content as text: a string, or the text parts of a list of content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict) and p.get("type") == "text"]
        texts = [p for p in parts if isinstance(p, str)]
        if texts and len(texts) == len(parts):
            return "".join(texts)
    return None


def _as_messages(messages: Messages) -> list[dict[str, str]]:
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    out: list[dict[str, str]] = []
    for position, message in enumerate(messages, start=1):
        role, content = message.get("role"), message.get("content")
        if not isinstance(role, str) or not isinstance(content, str):
            raise TypeError(f"message #{position} needs string 'role' and 'content' keys")
        out.append({"role": role, "content": content})
    if not out:
        raise ValueError("a chat request needs at least one message")
    return out


class ChatCache:
    """Answers of earlier requests in one SQLite file (see the module docstring)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        self._lock = threading.Lock()
        try:

            def initialise(conn: sqlite3.Connection) -> None:
                with conn:
                    conn.execute(
                        "CREATE TABLE IF NOT EXISTS answers ("
                        "key TEXT PRIMARY KEY, content TEXT NOT NULL, created REAL NOT NULL) WITHOUT ROWID"
                    )

            self._conn = connect_shared(self.path, initialise)
        except (OSError, sqlite3.Error) as exc:
            raise InputError(
                str(self.path),
                None,
                f"cannot open the chat cache: {exc}",
                f"set {CACHE_ENV} to a writable folder, or pass another cache path",
            ) from None

    def get(self, key: str) -> str | None:
        with self._lock:
            row = self._conn.execute("SELECT content FROM answers WHERE key = ?", (key,)).fetchone()
        return str(row[0]) if row is not None else None

    def put(self, key: str, content: str) -> None:
        with self._lock, self._conn:
            self._conn.execute(
                "INSERT OR REPLACE INTO answers(key, content, created) VALUES (?, ?, ?)",
                (key, content, time.time()),
            )

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def _cache_for(cache: bool | str | Path | None) -> ChatCache | None:
    if cache is None or cache is False:
        return None
    if cache is True:
        return ChatCache(default_cache_dir() / CHAT_CACHE_FILE)
    path = Path(cache).expanduser()
    return ChatCache(path / CHAT_CACHE_FILE if path.is_dir() or not path.suffix else path)


class ChatClient:
    """Send chat requests to an OpenAI-compatible endpoint (see the module docstring).

    ``base_url`` is the API root, e.g. ``https://api.openai.com/v1`` or ``http://127.0.0.1:8000/v1``
    (a URL ending in ``/chat/completions`` is accepted too). ``api_key_env`` names the environment
    variable holding the key; ``None`` sends no ``Authorization`` header (local servers).
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key_env: str | None = None,
        *,
        timeout_s: float = 60.0,
        max_retries: int = 3,
        backoff_s: float = 0.5,
        max_backoff_s: float = 20.0,
        temperature: float = 0.0,
        cache: bool | str | Path | None = None,
    ) -> None:
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise InputError(
                "chat base_url",
                None,
                f"{base_url!r} is not an http(s) URL",
                "give the API root, e.g. http://127.0.0.1:8000/v1",
            )
        if not isinstance(model, str) or not model.strip():
            raise InputError(
                "chat model", None, "the model name is empty", "name the model, e.g. 'gpt-4o-mini'"
            )
        if api_key_env is not None and (not isinstance(api_key_env, str) or not api_key_env.strip()):
            raise InputError(
                "chat api_key_env",
                None,
                "must name an environment variable",
                "e.g. api_key_env = 'OPENAI_API_KEY', or leave it out for a server without keys",
            )
        if timeout_s <= 0:
            raise ValueError(f"timeout_s must be positive (got {timeout_s})")
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0 (got {max_retries})")
        root = base_url.rstrip("/")
        root = root.removesuffix("/chat/completions")
        self.base_url = root
        self.url = f"{root}/chat/completions"
        self.model = model
        self.api_key_env = api_key_env
        self.timeout_s = float(timeout_s)
        self.max_retries = max_retries
        self.temperature = temperature
        self.retry_policy = RetryPolicy(
            max_attempts=max_retries + 1, base_delay_s=backoff_s, max_delay_s=max_backoff_s
        )
        self._cache = _cache_for(cache)
        self.requests_sent = 0
        """HTTP requests sent (retries included), for latency and cost reporting."""
        self.cache_hits = 0

    def __repr__(self) -> str:
        return (
            f"ChatClient(base_url={self.base_url!r}, model={self.model!r}, api_key_env={self.api_key_env!r})"
        )

    def info(self) -> dict[str, Any]:
        """What a report records about the endpoint (never the key)."""
        return {
            "base_url": self.base_url,
            "model": self.model,
            "api_key_env": self.api_key_env,
            "temperature": self.temperature,
            "cache": str(self._cache.path) if self._cache is not None else None,
        }

    def _api_key(self) -> str | None:
        if self.api_key_env is None:
            return None
        value = os.environ.get(self.api_key_env, "").strip()
        if not value:
            raise ChatRequestError(
                f"the environment variable {self.api_key_env} is not set; export it with the API key for "
                f"{self.base_url} (or configure api_key_env = none for a server without keys)"
            )
        return value

    async def complete(
        self, messages: Messages, *, model: str | None = None, max_tokens: int | None = None
    ) -> str:
        """The content of the first choice for ``messages`` (a string is one user message)."""
        payload: dict[str, Any] = {
            "model": model or self.model,
            "messages": _as_messages(messages),
            "temperature": self.temperature,
        }
        if max_tokens is not None:
            payload["max_tokens"] = max_tokens
        body = json.dumps(payload, sort_keys=True, ensure_ascii=False)
        key = hashlib.sha256(f"{self.url}\n{body}".encode()).hexdigest()
        if self._cache is not None:
            cached = await asyncio.to_thread(self._cache.get, key)
            if cached is not None:
                self.cache_hits += 1
                return redact(cached, os.environ.get(self.api_key_env or "", "").strip() or None)
        content = await self._post(payload, key)
        if self._cache is not None:
            await asyncio.to_thread(self._cache.put, key, content)
        return content

    async def _post(self, payload: dict[str, Any], key: str) -> str:
        httpx = _import_httpx()
        secret = self._api_key()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if secret is not None:
            headers["Authorization"] = f"Bearer {secret}"
        attempt = 0
        async with httpx.AsyncClient(timeout=httpx.Timeout(self.timeout_s)) as client:
            while True:
                attempt += 1
                self.requests_sent += 1
                failure: ChatError
                try:
                    response = await client.post(self.url, json=payload, headers=headers)
                except httpx.TimeoutException:
                    failure = ChatUnavailableError(f"{self.url} did not answer within {self.timeout_s:g}s")
                except httpx.TransportError as exc:
                    detail = redact(str(exc), secret) or type(exc).__name__
                    failure = ChatUnavailableError(f"cannot reach {self.url}: {detail}")
                else:
                    if 200 <= response.status_code < 300:
                        return self._content(response, secret)
                    failure = self._http_failure(response, secret)
                if not isinstance(failure, ChatUnavailableError) or attempt > self.max_retries:
                    if attempt > 1:
                        failure.args = (f"{failure.args[0]} ({attempt} attempts)",)
                    raise failure
                await asyncio.sleep(self.retry_policy.delay_s(key, attempt, failure.retry_after_s))

    def _http_failure(self, response: Any, secret: str | None) -> ChatError:
        status = int(response.status_code)
        message = f"{self.url} answered HTTP {status}: {_error_detail(response, secret)}"
        if status in TRANSIENT_STATUS or status >= 500:
            return ChatUnavailableError(
                message, retry_after_s=_retry_after(response.headers.get("retry-after"))
            )
        hint = {
            401: " (check the API key in the environment variable named by api_key_env)",
            403: " (the key may lack access to this model)",
            404: " (check base_url: it should end at the API root, e.g. /v1, and the model name)",
        }.get(status, "")
        return ChatRequestError(message + hint)

    def _content(self, response: Any, secret: str | None) -> str:
        try:
            body = response.json()
        except ValueError:
            raise ChatRequestError(
                f"malformed reply from {self.url}: not JSON: {_snippet(response.text, secret)}"
            ) from None
        choices = body.get("choices") if isinstance(body, dict) else None
        first = choices[0] if isinstance(choices, list) and choices else None
        message = first.get("message") if isinstance(first, dict) else None
        content = _text_of(message.get("content")) if isinstance(message, dict) else None
        if content is None:
            raise ChatRequestError(
                f"malformed reply from {self.url}: no choices[0].message.content text in "
                f"{_snippet(json.dumps(body, ensure_ascii=False), secret)}"
            )
        return redact(content, secret)

    def close(self) -> None:
        """Close the cache file, if any (HTTP connections are closed after every request)."""
        if self._cache is not None:
            self._cache.close()


def _snippet(text: str, secret: str | None) -> str:
    text = redact(text, secret).strip().replace("\n", " ")
    return redact(text if len(text) <= _SNIPPET else text[:_SNIPPET] + "…", secret)


def _error_detail(response: Any, secret: str | None) -> str:
    """The server's error message (OpenAI's ``{"error": {"message": ...}}`` or the body text), redacted."""
    try:
        body = response.json()
    except ValueError:
        return _snippet(response.text, secret) or "(empty body)"
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return _snippet(error["message"], secret)
    if isinstance(error, str):
        return _snippet(error, secret)
    return _snippet(json.dumps(body, ensure_ascii=False), secret)
