"""Send the tenant audit's requests: in plan order, a fixed number in flight, rejected probes asked again
in a plain form.

- Requests leave in the order of the plan (:mod:`ragaudit.security.request_plan`); ``concurrency``
  workers share one iterator, so at most that many are in flight and at concurrency 1 the order is exact.
- A request of a tenant (owner, cross-tenant, generic) is retried on transient failures under the
  retry policy; when it still fails (an HTTP 4xx, an exception, garbage), it is asked **once more with
  the probe's plain form** (:func:`~ragaudit.security.request_plan.plain_form`) when that differs from
  the text. A request that fails both ways is **unverified**: the audit lists it and counts it against
  the verdict (it is never dropped).
- A request with a hostile tenant id is asked once: a refusal is the right answer to it. A mutated
  request (:mod:`ragaudit.security.request_mutations`) is retried on transient failures only, never in
  plain form (a query shape is the point; a mutation that keeps the probe's text, such as a pagination parameter,
  gets the plain-form retry), and carries its extra headers, parameters and body fields
  (``search(..., extras=...)``, which only retrievers with ``request_channels`` are sent).
- :func:`discover_max_top_k` finds the largest ``top_k`` the service accepts (halving, then bisecting
  between the largest accepted and the smallest rejected value), so an honest service with a lower
  limit than the audit's ``max_top_k`` is not reported as failing, and is asked up to its limit.
- A failed request's answer is read too: the body of a refusal or of a response that is no ranking
  (``RetrievalError.response``, kept by the HTTP adapter) is attributed like the rest of a response
  (paths ``$error...``): a 403 that previews another tenant's documents is a leak, not a fine refusal.
- The ``next page`` mutation (:attr:`~ragaudit.security.request_mutations.Mutation.follow`) is asked
  twice: plainly, then with the next-page token its answer offers (:mod:`ragaudit.security.pagination_tokens`).
- **The audit stops when the service cannot be reached** (:class:`Stopper`): when the first
  :data:`UNREACHABLE_AFTER` requests all fail to connect or time out (after their retries), or, once
  the service has answered, :data:`DOWN_AFTER` requests in a row do. The requests not yet sent are not
  sent (the audit would spend minutes retrying a dead address); they are counted as *not sent*, and
  the audit is incomplete (:mod:`~ragaudit.security.audit_verdict`), never clean.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragaudit.data.run import RankedItem, to_ranked_items
from ragaudit.retrieval.protocol import Retriever
from ragaudit.retrieval.request_extras import RequestExtras
from ragaudit.retry import NO_RETRY, Attempted, RetryPolicy, call_with_retries
from ragaudit.security.error_rate import classify_error
from ragaudit.security.pagination_tokens import next_page_extras
from ragaudit.security.request_plan import AuditRequest, plain_form
from ragaudit.security.response_fields import ResponseEnvelope, envelope_of, error_envelope

UNREACHABLE_AFTER = 3
"""The audit stops when this many requests, the first it sent, all failed to connect or timed out."""
DOWN_AFTER = 20
"""... or, after the service answered, when this many requests in a row did."""
UNREACHABLE_KINDS = frozenset({"connection", "timeout"})


@dataclass
class Stopper:
    """Decides when the service is unreachable, from each request's outcome (see the module docstring).

    Any answer, a refusal (an HTTP 4xx, a raised error) included, proves the service is up and resets
    the count; only failures to connect and timeouts count.
    """

    reason: str | None = None
    """Why the audit stopped (``None``: it did not)."""
    not_sent: int = 0
    """Planned requests that were not sent because the audit had stopped."""
    reached: bool = False
    """The service answered at least once (a refusal counts)."""
    in_a_row: int = 0

    def record(self, error: str | None) -> None:
        """Count one request's final outcome (its error after retries, or ``None``)."""
        if self.reason is not None:
            return
        if error is None or classify_error(error) not in UNREACHABLE_KINDS:
            self.reached = True
            self.in_a_row = 0
            return
        self.in_a_row += 1
        limit = DOWN_AFTER if self.reached else UNREACHABLE_AFTER
        if self.in_a_row >= limit:
            when = "stopped answering" if self.reached else "could not be reached"
            self.reason = (
                f"the service {when}: {self.in_a_row} requests in a row failed to connect or timed out "
                f"(last: {error})"
            )


@dataclass(frozen=True)
class Answer:
    """What one planned request got."""

    request: AuditRequest
    items: list[RankedItem] | None
    """The ranking; ``None`` when the request failed."""
    error: str | None
    attempts: int
    asked_text: str
    """The text that got ``items`` (the probe's text, or its plain form after a rejection)."""
    plain_retry: bool
    """The request was rejected and asked again in its plain form."""
    concurrency: int
    sequence: int
    """1-based position of the request among every request the audit sent."""
    response: ResponseEnvelope | None = None
    """The whole response beside the ranking (:mod:`~ragaudit.security.response_fields`), when there is
    one; for a failed request, the body it was answered with (``$error``), when the retriever kept it."""


@dataclass
class Asker:
    """Sends planned requests to one retriever (see the module docstring) and numbers them."""

    retriever: Retriever
    timeout_s: float | None
    retry: RetryPolicy
    on_answer: Callable[[Answer], None] | None = None
    sent: int = 0
    stopper: Stopper = field(default_factory=Stopper)
    on_send: Callable[[str | None, str], None] | None = None
    """Told ``(caller, text)`` of every request before it is sent (the leak checker's own-echo memory)."""

    async def _call(
        self, text: str, request: AuditRequest, policy: RetryPolicy
    ) -> tuple[Attempted[tuple[list[RankedItem], ResponseEnvelope | None]], ResponseEnvelope | None]:
        """The call's outcome, and the body a failure was answered with (a refusal can carry data)."""
        extras = request.mutated.extras if request.mutated is not None else None
        follow = request.mutated is not None and request.mutated.mutation.follow
        refused: list[ResponseEnvelope | None] = [None]

        async def search(extras: RequestExtras | None) -> Any:
            tenant: Any = request.caller  # a hostile caller may deliberately be no usable tenant
            if request.mutated is not None:  # a credential conflict names the owner, with the caller's key
                tenant = request.mutated.tenant_id
            if self.on_send is not None:
                self.on_send(request.caller, text)
            if extras is not None:  # only sent to retrievers that declare the channel
                wide: Any = self.retriever
                return await wide.search(tenant_id=tenant, query=text, top_k=request.top_k, extras=extras)
            return await self.retriever.search(tenant_id=tenant, query=text, top_k=request.top_k)

        async def fetch() -> tuple[list[RankedItem], ResponseEnvelope | None]:
            try:
                returned = await search(extras)
                if follow:  # the next page the first answer offers, asked with its own token
                    envelope = envelope_of(returned)
                    token = next_page_extras(envelope.body) if envelope is not None else None
                    if token is not None:
                        self.sent += 1
                        returned = await search(token)
            except Exception as exc:
                refused[0] = error_envelope(exc)
                raise
            refused[0] = None
            return to_ranked_items(returned), envelope_of(returned)

        got = await call_with_retries(fetch, policy, f"{request.key}:{text}", self.timeout_s)
        return got, refused[0] if got.error is not None else None

    async def ask(self, request: AuditRequest, concurrency: int) -> Answer:
        self.sent += 1
        sequence = self.sent
        hostile = request.hostile is not None
        text = request.query
        got, refused = await self._call(text, request, NO_RETRY if hostile else self.retry)
        attempts = got.attempts
        retried = False
        shaped = request.mutated is not None and request.mutated.mutation.text is not None
        if got.error is not None and not hostile and not shaped:  # a query shape is never simplified
            plain = plain_form(text)
            if plain and plain != text:
                self.sent += 1
                retried, text = True, plain
                first_error = got.error
                got, refused_plain = await self._call(plain, request, self.retry)
                refused = refused_plain or refused
                attempts += got.attempts
                if got.error is not None:
                    got.error = f"{first_error}; plain form {plain!r}: {got.error}"
        self.stopper.record(got.error)
        answer = Answer(
            request,
            got.value[0] if got.error is None and got.value is not None else None,
            got.error,
            attempts,
            text,
            retried,
            concurrency,
            sequence,
            got.value[1] if got.error is None and got.value is not None else refused,
        )
        if self.on_answer is not None:
            self.on_answer(answer)
        return answer

    async def ask_all(self, requests: Sequence[AuditRequest], concurrency: int) -> list[Answer]:
        """Every request, ``concurrency`` in flight, leaving in order; answers in request order."""
        answers: list[Answer | None] = [None] * len(requests)
        queue = iter(enumerate(requests))

        async def worker() -> None:
            for position, request in queue:  # one shared iterator: each request goes to one worker
                if self.stopper.reason is not None:
                    self.stopper.not_sent += 1
                    continue
                answers[position] = await self.ask(request, concurrency)

        await asyncio.gather(*(worker() for _ in range(max(1, min(concurrency, len(requests))))))
        return [a for a in answers if a is not None]


BISECT_STEPS = 8
"""At most this many requests narrow the service's maximum ``top_k`` once a halving was rejected."""


async def discover_max_top_k(
    asker: Asker, probe_request: AuditRequest, ladder: Sequence[int]
) -> tuple[int | None, list[int], list[Answer]]:
    """Ask ``probe_request`` (in its plain form) at each ``top_k`` of ``ladder`` until one is answered,
    then bisect between it and the smallest rejected value: ``(the largest accepted top_k found or
    None, the rejected ones, every answer)``."""
    from dataclasses import replace

    plain = replace(
        probe_request.probe, text=plain_form(probe_request.probe.text) or probe_request.probe.text
    )
    rejected: list[int] = []
    answers: list[Answer] = []

    async def accepts(k: int) -> bool | None:
        if asker.stopper.reason is not None:
            return None
        answer = await asker.ask(replace(probe_request, probe=plain, top_k=k), 1)
        answers.append(answer)
        if answer.error is None:
            return True
        rejected.append(k)
        return False

    accepted: int | None = None
    for k in ladder:
        ok = await accepts(k)
        if ok is None:
            break
        if ok:
            accepted = k
            break
    if accepted is None or not rejected:
        return accepted, rejected, answers
    low, high = accepted, min(rejected)
    for _ in range(BISECT_STEPS):
        if high - low <= 1:
            break
        middle = (low + high) // 2
        ok = await accepts(middle)
        if ok is None:
            break
        low, high = (middle, high) if ok else (low, middle)
    return low, rejected, answers
