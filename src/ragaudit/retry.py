"""Per-attempt timeouts and retries with exponential backoff and seeded jitter.

The wait before attempt ``n + 1`` (after ``n`` failed attempts) is::

    cap   = min(max_delay_s, base_delay_s * 2 ** (n - 1))
    delay = cap * (1 - jitter * u),   u ~ Uniform[0, 1)

with ``u`` drawn from ``random.Random(f"{seed}:{key}:{n}")`` — a private generator per case and
attempt, so the schedule is reproducible whatever order concurrent cases finish in, and the global
RNG is never touched. A server's ``Retry-After`` hint raises the wait to at least that many seconds
(still capped by ``max_delay_s``). Only transient failures are retried (see
:func:`is_transient` below).
"""

from __future__ import annotations

import asyncio
import random
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from ragaudit.errors import RetrievalError, TransientRetrievalError

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently to retry a transient failure. ``max_attempts=1`` never retries."""

    max_attempts: int = 3
    base_delay_s: float = 0.25
    max_delay_s: float = 8.0
    jitter: float = 0.5
    """Fraction of the wait that is randomised: 0 = fixed exponential waits, 1 = "full jitter"."""
    seed: int = 0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1 (got {self.max_attempts})")
        if self.base_delay_s < 0 or self.max_delay_s < 0:
            raise ValueError("retry delays must be non-negative")
        if not 0.0 <= self.jitter <= 1.0:
            raise ValueError(f"jitter must be within [0, 1] (got {self.jitter})")

    def delay_s(self, key: str, failed_attempts: int, retry_after_s: float | None = None) -> float:
        """Seconds to wait after ``failed_attempts`` failures of the call identified by ``key``."""
        cap = min(self.max_delay_s, self.base_delay_s * 2.0 ** (failed_attempts - 1))
        u = random.Random(f"{self.seed}:{key}:{failed_attempts}").random()
        delay = cap * (1.0 - self.jitter * u)
        if retry_after_s is not None and retry_after_s > delay:
            delay = min(retry_after_s, self.max_delay_s)
        return delay


NO_RETRY = RetryPolicy(max_attempts=1)


@dataclass(slots=True)
class Attempted(Generic[T]):
    """The result of a call with retries: a value or an error message, and the attempts it took.

    ``latency_ms`` is the duration of the last attempt alone (backoff waits and failed attempts are
    not counted in it; ``attempts`` tells how many there were).
    """

    value: T | None
    error: str | None
    attempts: int
    latency_ms: float


def describe(exc: BaseException) -> str:
    """A one-line reason for a failed case. Typed retrieval errors are already worded for the report."""
    text = str(exc).strip()
    if isinstance(exc, RetrievalError) and text:
        return text
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class _DeadlineExceeded(asyncio.TimeoutError):
    """The runner's per-attempt deadline passed (as opposed to a timeout the retriever raised)."""


if sys.version_info >= (3, 11):

    async def _with_deadline(call: Callable[[], Awaitable[T]], timeout_s: float | None) -> T:
        scope = asyncio.timeout(timeout_s)
        try:
            async with scope:
                return await call()
        except TimeoutError:
            if scope.expired():
                raise _DeadlineExceeded() from None
            raise

else:  # pragma: no cover - exercised on Python 3.10 only

    async def _with_deadline(call: Callable[[], Awaitable[T]], timeout_s: float | None) -> T:
        if timeout_s is None:
            return await call()
        try:
            return await asyncio.wait_for(call(), timeout_s)
        except asyncio.TimeoutError:
            raise _DeadlineExceeded() from None


async def call_with_retries(
    call: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    key: str,
    timeout_s: float | None,
) -> Attempted[T]:
    """Await ``call()`` with a per-attempt deadline, retrying transient failures under ``policy``.

    Never raises for a failure of ``call`` (cancellation still propagates): the error comes back as
    a message, with ``(n attempts)`` appended when it was tried more than once.
    """
    attempt = 0
    while True:
        attempt += 1
        started = time.perf_counter()
        try:
            value = await _with_deadline(call, timeout_s)
            return Attempted(value, None, attempt, (time.perf_counter() - started) * 1000.0)
        except Exception as exc:  # a failing case is recorded, never lost
            latency_ms = (time.perf_counter() - started) * 1000.0
            if attempt < policy.max_attempts and is_transient(exc):
                await asyncio.sleep(policy.delay_s(key, attempt, retry_after_hint(exc)))
                continue
            reason = f"timeout after {timeout_s:g}s" if isinstance(exc, _DeadlineExceeded) else describe(exc)
            if attempt > 1:
                reason += f" ({attempt} attempts)"
            return Attempted(None, reason, attempt, latency_ms)


def is_transient(exc: BaseException) -> bool:
    """True for failures worth retrying: typed transient errors, timeouts and connection errors.

    Anything else (typed permanent errors, ``TypeError`` from a malformed result, a plugin's own
    ``ValueError``, ...) fails the case at the first attempt.
    """
    if isinstance(exc, TransientRetrievalError):
        return True
    if isinstance(exc, RetrievalError):
        return False
    return isinstance(exc, (asyncio.TimeoutError, TimeoutError, ConnectionError))


def retry_after_hint(exc: BaseException) -> float | None:
    """The server's requested wait before the next attempt, when the failure carried one."""
    return exc.retry_after_s if isinstance(exc, TransientRetrievalError) else None
