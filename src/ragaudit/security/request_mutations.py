"""The tenant audit's request mutations: request shapes the plain probe matrix never sends.

Many isolation bugs sit on a code path only an unusual request takes: a "browse" path for an empty or
one-letter query, an "advanced search" path for boolean or ``field:value`` syntax, a page-2 path, a
header that names the tenant a second time. Each :class:`Mutation` is one such request shape, on one
axis:

- ``query-shape``: the query replaced by an empty one, 1 or 2 characters, a long one (more than 20
  words), a quoted phrase, `` OR `` / `` AND `` / ``NOT``, ``title:word``, ``tenant_id:<owner>``, a
  prefix wildcard ``wor*``, a bare ``*``, the probe with accented vowels (a non-ASCII query) and the
  probe with a word of four non-Latin scripts added;
- ``page-size``: the probe at ``top_k`` 20 and 50, page sizes the rounds do not ask;
- ``pagination``: the next page the service's own answer offers (its cursor, page token or ``next``
  link sent back: :mod:`ragaudit.security.pagination_tokens`), and a page beyond the first, as a body
  field and as a query-string parameter, one per name (``offset``, ``page``, ``from``, ``cursor`` by
  default; a name holding ``page`` asks page 2, any other asks from the audit's ``top_k``);
- ``tenant-channel``: the probe's owner named a second time, disagreeing with the body's
  ``tenant_id`` (the caller), in a header (``X-Tenant``, ``X-Tenant-Id``, ...), a query-string
  parameter, a body field (``tenant``, ``tenant_id``, ...), a filter object in the body
  (``{"filter": {"tenant_id": <owner>}}``, also ``filters``, ``where``, ``metadata_filter``) and a
  list of tenants in the body (``{"tenant_ids": [<caller>, <owner>]}``, also ``tenants``); and the
  tenant field itself as a JSON value (``[<caller>, <owner>]``, ``{"$in": [...]}``, ``{"$ne": null}``:
  operator injection into a document store's query);
- ``credential-conflict``: the caller's own credential (its key from ``--endpoint-keys``) while the
  request's tenant field names the probe's owner, alone, with the first tenant header, and with the
  first tenant query-string parameter naming the owner too; the tenant field sent twice in one JSON
  object (caller then owner, owner then caller); and, when the keys are JWTs whose claims
  name their tenant, the caller's JWT forged for the owner (the claim swapped, signature kept; and
  ``alg: none``: the ``forged-token`` channel). A service that takes the tenant from the
  request instead of the key serves the owner's chunks to the caller's key: a leak. It needs the
  ``credential`` channel (a retriever holding one key per tenant); elsewhere it is not applicable.
  (A tenant header or parameter alone naming the owner, body and key naming the caller, is the
  ``tenant-channel`` axis, sent with the caller's own key when the keys are known.)

(The other axes, ``top_k`` depth, hostile tenant ids, repetition and concurrency, are the rounds of
:mod:`ragaudit.security.request_plan`; the report lists them in the same table.)

:func:`plan_mutations` applies every mutation to a sample: the first ``per_tenant`` probes of each
tenant, each asked by another tenant (rotating), at the audit's ``top_k``; a mutation whose text does
not depend on the probe (empty, ``*``) is asked once per tenant. A mutation that needs a channel the
retriever lacks (headers, query string and extra body fields exist only for ``--endpoint``,
:mod:`ragaudit.retrieval.request_extras`) is not sent and reported as *not applicable*.

A mutated request is asked once (transient failures retried); a query shape is never asked in plain
form, a mutation that keeps the probe's text is, like the probes of the rounds (a service that refuses
punctuation still gets its ``offset``). A refusal (HTTP
4xx, a raised error) is the mutation **rejected**, which is a fine answer and never makes the audit
incomplete; a foreign chunk in an answer is a leak like any other.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import cycle, islice
from typing import Any, Literal

from ragaudit.retrieval.request_extras import Channel, RequestExtras
from ragaudit.security.probes import Probe

Axis = Literal["query-shape", "page-size", "pagination", "tenant-channel", "credential-conflict"]
DEFAULT_TENANT_HEADERS = (
    "X-Tenant",
    "X-Tenant-Id",
    "X-Org-Id",
    "X-Organization-Id",
    "X-Account-Id",
    "X-Customer-Id",
)
DEFAULT_TENANT_PARAMS = ("tenant", "tenant_id", "tenantId", "org_id", "account_id", "customer_id")
DEFAULT_PAGE_PARAMS = ("offset", "page", "from", "cursor")
DEFAULT_FILTER_FIELDS = ("filter", "filters", "where", "metadata_filter")
"""Body fields a search API takes a filter object in: ``{"filter": {"tenant_id": <owner>}}`` must not
replace the service's own tenant filter."""
DEFAULT_TENANT_LIST_FIELDS = ("tenant_ids", "tenants")
"""Body fields a search API takes a list of tenants in: ``{"tenant_ids": [<caller>, <owner>]}`` must not
widen the search beyond the caller."""
DEFAULT_MUTATION_PROBES = 2
LONG_QUERY_WORDS = 24
OWNER = "<owner>"
"""In a mutation's extras: replaced by the tenant that owns the probe."""
CALLER = "<caller>"
"""In a mutation's ``credential_of``: replaced by the tenant that asks (whose key is sent)."""
_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class Mutation:
    """One request shape: its axis, its name in the report, the leak it looks for, and how it changes a
    probe's request (the query text, extra headers / parameters / body fields)."""

    axis: Axis
    name: str
    catches: str
    text: Callable[[Probe], str] | None = None
    """The query sent instead of the probe's text (``None``: the probe's text)."""
    extras: RequestExtras | None = None
    """Headers, parameters and body fields sent too (a value :data:`OWNER` is the probe's tenant)."""
    per_caller: bool = False
    """The request does not depend on the probe: asked once per calling tenant."""
    owner_in_tenant_field: bool = False
    """The request's tenant field names the probe's owner instead of the caller (who stays the viewer:
    the extras send the caller's credential)."""
    follow: bool = False
    """Asked twice: plainly, then again with the next-page token the first answer holds
    (:mod:`ragaudit.security.pagination_tokens`); the second answer is the one checked."""
    top_k: int | None = None
    """The ``top_k`` asked (capped at the largest the service accepts; ``None``: the audit's ``top_k``)."""

    def channels(self) -> frozenset[Channel]:
        if self.follow:  # the token goes back as a body field and a query-string parameter
            return frozenset({"body", "param"})
        return self.extras.channels() if self.extras is not None else frozenset()


def _words(text: str) -> list[str]:
    """The probe's three longest distinct words (3+ characters when it has any), longest first."""
    found = list(dict.fromkeys(_WORD.findall(text)))
    long = [w for w in found if len(w) >= 3] or found or ["x"]
    return sorted(long, key=len, reverse=True)[:3]


def _long(text: str) -> str:
    words = text.split() or ["x"]
    return text if len(words) >= LONG_QUERY_WORDS else " ".join(islice(cycle(words), LONG_QUERY_WORDS))


def query_mutations() -> list[Mutation]:
    """The ``query-shape`` axis."""

    def first(p: Probe) -> str:
        return _words(p.text)[0]

    shape: Axis = "query-shape"
    return [
        Mutation(shape, "empty query", "a browse path for empty queries that forgets the tenant", lambda p: "", per_caller=True),
        Mutation(shape, "1 character", "a short-query (autocomplete) path without the filter", lambda p: first(p)[:1]),
        Mutation(shape, "2 characters", "a short-query (autocomplete) path without the filter", lambda p: first(p)[:2]),
        Mutation(shape, "one word", "a one-word (keyword lookup) path without the filter", first),
        Mutation(shape, f"long query ({LONG_QUERY_WORDS} words)", "a 'more like this' path for long queries", lambda p: _long(p.text)),
        Mutation(shape, "quoted phrase", "a phrase-query path without the filter", lambda p: '"' + " ".join(p.text.split()[:8]) + '"'),
        Mutation(shape, "OR", "a boolean (query-string) parser path", lambda p: " OR ".join(_words(p.text))),
        Mutation(shape, "AND", "a boolean (query-string) parser path", lambda p: " AND ".join(_words(p.text)[:2])),
        Mutation(shape, "NOT", "a boolean (query-string) parser path", lambda p: f"{first(p)} NOT xyzzy"),
        Mutation(shape, "field:value", "a fielded (query-string) search path", lambda p: f"title:{first(p)}"),
        Mutation(shape, "tenant_id:<owner> in the query", "a query-string filter that overrides the tenant", lambda p: f"tenant_id:{p.tenant_id} {first(p)}"),
        Mutation(shape, "prefix wildcard", "a wildcard-query path without the filter", lambda p: f"{first(p)[:3]}*"),
        Mutation(shape, "match-all *", "a match-all query that skips the filter", lambda p: "*", per_caller=True),
        Mutation(shape, "non-ASCII query", "a multilingual (non-ASCII) query path without the filter", lambda p: _accented(p.text)),
        Mutation(shape, "non-Latin script query", "a query path for other scripts (language detection) without the filter", lambda p: f"{p.text} {NON_LATIN_WORDS}"),
    ]  # fmt: skip


NON_LATIN_WORDS = "поиск αναζήτηση 検索 بحث"
""""Search" in Cyrillic, Greek, Japanese and Arabic, added to the probe: a service that detects a
non-Latin script (or a language) and routes the query elsewhere takes that path, while the probe's own
words still rank its documents. Accented Latin letters alone (the non-ASCII query) do not take it."""
PAGE_SIZES = (20, 50)
"""``top_k`` values of common page sizes the rounds (``1``, ``--top-k``, the service's maximum) do not
ask: a path for one exact page size (a UI preset) is asked too."""


def page_size_mutations() -> list[Mutation]:
    """The ``page-size`` axis: the probe at each ``top_k`` of :data:`PAGE_SIZES` (capped at the largest the
    rounds ask, itself capped at what the service accepts)."""
    catches = "a path for one page size (a UI preset, a cached page) that forgets the tenant"
    sizes = [Mutation("page-size", f"top_k={k} (page size)", catches, top_k=k) for k in PAGE_SIZES]
    as_string = "a lenient path for a string top_k (a form or legacy client) that forgets the tenant"
    return [
        *sizes,
        Mutation(
            "page-size", "top_k as a JSON string", as_string, extras=RequestExtras(top_k_as_string=True)
        ),
    ]


_ACCENTS = str.maketrans("aeiouAEIOU", "áéíóúÁÉÍÓÚ")


def _accented(text: str) -> str:
    """The probe with its vowels accented (``Nórthwínd Lógístícs``): the same words to a service that
    folds accents, and a query a "multilingual" path takes."""
    return text.translate(_ACCENTS)


def page_value(name: str, top_k: int) -> str:
    """The value a pagination parameter asks the second page with: ``2`` for a name holding ``page``,
    else the audit's ``top_k`` (an offset)."""
    return "2" if "page" in name.lower() else str(top_k)


FOLLOW_NEXT_PAGE = "next page (the service's own token)"


def pagination_mutations(names: Sequence[str], top_k: int) -> list[Mutation]:
    """The ``pagination`` axis: each name as a body field and as a query-string parameter, and the next
    page the service's own answer offers (a cursor, a page token, a ``next`` link) when there are names."""
    out: list[Mutation] = []
    if names:
        follow = (
            "a later page reached through the cursor or link the service returns, that forgets the tenant"
        )
        out.append(Mutation("pagination", FOLLOW_NEXT_PAGE, follow, follow=True))
    for name in names:
        value = page_value(name, top_k)
        catches = f"a page-{value} path" if "page" in name.lower() else "a later-page path"
        catches += " that forgets the tenant"
        body = RequestExtras(body={name: int(value)})
        out.append(Mutation("pagination", f"{name}={value} (body)", catches, extras=body))
        out.append(
            Mutation("pagination", f"?{name}={value}", catches, extras=RequestExtras(params={name: value}))
        )
    return out


def channel_mutations(headers: Sequence[str], params: Sequence[str], tenant_field: str) -> list[Mutation]:
    """The ``tenant-channel`` axis: the probe's owner (:data:`OWNER`, replaced when planned) in a header,
    a query-string parameter and a body field, while the body's tenant field names the caller."""
    catches = "the tenant read from {} instead of the request body"
    out = [
        Mutation(
            "tenant-channel",
            f"header {name}: <owner>",
            catches.format(f"the {name} header"),
            extras=RequestExtras(headers={name: OWNER}),
        )
        for name in headers
    ]
    out += [
        Mutation(
            "tenant-channel",
            f"?{name}=<owner>",
            catches.format(f"?{name}="),
            extras=RequestExtras(params={name: OWNER}),
        )
        for name in params
    ]
    out += [
        Mutation(
            "tenant-channel",
            f"body {name}: <owner>",
            catches.format(f"a second body field {name!r}"),
            extras=RequestExtras(body={name: OWNER}),
        )
        for name in params
        if name != tenant_field
    ]
    out += [
        Mutation(
            "tenant-channel",
            f"body {name}: {{{tenant_field}: <owner>}}",
            f"a caller's own {name!r} object that replaces the service's tenant filter",
            extras=RequestExtras(body={name: {tenant_field: OWNER}}),
        )
        for name in (DEFAULT_FILTER_FIELDS if params else ())  # the body channel's names: --tenant-params
    ]
    out += [
        Mutation(
            "tenant-channel",
            f"body {name}: [<caller>, <owner>]",
            f"a list of tenants in {name!r} that widens the search beyond the caller",
            extras=RequestExtras(body={name: [CALLER, OWNER]}),
        )
        for name in (DEFAULT_TENANT_LIST_FIELDS if params else ())
    ]
    if params:  # the tenant field itself as a JSON value: a store that passes it into its query
        typed = "the tenant field passed into the store's query as a JSON value (NoSQL operator injection)"
        out += [
            Mutation(
                "tenant-channel",
                f"body {tenant_field}: [<caller>, <owner>] (a JSON list)",
                typed,
                extras=RequestExtras(tenant_value=[CALLER, OWNER]),
            ),
            Mutation(
                "tenant-channel",
                f'body {tenant_field}: {{"$in": [<caller>, <owner>]}}',
                typed,
                extras=RequestExtras(tenant_value={"$in": [CALLER, OWNER]}),
            ),
            Mutation(
                "tenant-channel",
                f'body {tenant_field}: {{"$ne": null}}',
                typed,
                extras=RequestExtras(tenant_value={"$ne": None}),
                per_caller=True,
            ),
        ]
    return out  # fmt: skip


DUPLICATE_CATCHES = "a JSON body whose tenant field appears twice, checked against the key in one occurrence and used in the other"
FORGED_CATCHES = "a tenant read from a bearer token's claims without checking the signature"


def credential_mutations(header: str, param: str, tenant_field: str) -> list[Mutation]:
    """The ``credential-conflict`` axis: the caller's key, the tenant field naming the probe's owner
    (alone, then with ``header`` and with ``?param=`` naming the owner as well), and the caller's JWT
    forged to name the owner (its claim swapped with the signature kept, and as ``alg: none``;
    :mod:`ragaudit.retrieval.forged_tokens`)."""
    axis: Axis = "credential-conflict"
    catches = "the tenant read from the request ({}) instead of the API key"
    key = f"{CALLER}'s key"
    field_ = f"body {tenant_field}: <owner>"
    return [
        Mutation(axis, f"{key}, {field_}", catches.format(f"body {tenant_field}"), extras=RequestExtras(credential_of=CALLER), owner_in_tenant_field=True),
        Mutation(axis, f"{key}, {field_} + header {header}", catches.format(f"body or {header} header"), extras=RequestExtras(headers={header: OWNER}, credential_of=CALLER), owner_in_tenant_field=True),
        Mutation(axis, f"{key}, {field_} + ?{param}", catches.format(f"body or ?{param}="), extras=RequestExtras(params={param: OWNER}, credential_of=CALLER), owner_in_tenant_field=True),
        Mutation(axis, f"{key}, body {tenant_field}: <caller> then {tenant_field}: <owner> (duplicate key)", DUPLICATE_CATCHES, extras=RequestExtras(credential_of=CALLER, repeat_tenant=OWNER)),
        Mutation(axis, f"{key}, body {tenant_field}: <owner> then {tenant_field}: <caller> (duplicate key)", DUPLICATE_CATCHES, extras=RequestExtras(credential_of=CALLER, repeat_tenant=CALLER), owner_in_tenant_field=True),
        Mutation(axis, f"{CALLER}'s JWT, tenant claim set to <owner> (signature kept), {field_}", FORGED_CATCHES, extras=RequestExtras(credential_of=CALLER, forge="claim-swap"), owner_in_tenant_field=True),
        Mutation(axis, f"{CALLER}'s JWT as alg none, tenant claim <owner>, {field_}", FORGED_CATCHES, extras=RequestExtras(credential_of=CALLER, forge="alg-none"), owner_in_tenant_field=True),
    ]  # fmt: skip


def _for_probe(extras: RequestExtras, probe: Probe, caller: str) -> RequestExtras:
    """``extras`` with :data:`OWNER` replaced by the probe's tenant, :data:`CALLER` by ``caller``."""

    def one(value: Any) -> Any:
        if value == OWNER:
            return str(probe.tenant_id)
        if value == CALLER:
            return caller
        if isinstance(value, Mapping):
            return fill(value)
        return [one(v) for v in value] if isinstance(value, list) else value

    def fill(values: Mapping[str, Any]) -> dict[str, Any]:
        return {k: one(v) for k, v in values.items()}

    credential = caller if extras.credential_of == CALLER else extras.credential_of
    repeat = one(extras.repeat_tenant) if extras.repeat_tenant is not None else None
    value = one(extras.tenant_value)
    return RequestExtras(
        fill(extras.headers),
        fill(extras.params),
        fill(extras.body),
        credential,
        value,
        repeat,
        extras.forge,
        extras.top_k_as_string,
    )


@dataclass(frozen=True)
class MutationOptions:
    """Which mutations the audit sends, and to how many probes."""

    per_tenant: int = DEFAULT_MUTATION_PROBES
    """Probes per tenant each mutation is applied to (0: no mutations)."""
    tenant_headers: tuple[str, ...] = DEFAULT_TENANT_HEADERS
    tenant_params: tuple[str, ...] = DEFAULT_TENANT_PARAMS
    page_params: tuple[str, ...] = DEFAULT_PAGE_PARAMS
    tenant_field: str = "tenant_id"
    """The body field the request already names the tenant in (left out of the body-field channel)."""

    def catalogue(self, top_k: int) -> list[Mutation]:
        """Every mutation, in the order they are sent."""
        if self.per_tenant <= 0:
            return []
        return [
            *query_mutations(),
            *page_size_mutations(),
            *pagination_mutations(self.page_params, top_k),
            *channel_mutations(self.tenant_headers, self.tenant_params, self.tenant_field),
            *credential_mutations(
                (self.tenant_headers or DEFAULT_TENANT_HEADERS)[0],
                (self.tenant_params or DEFAULT_TENANT_PARAMS)[0],
                self.tenant_field,
            ),
        ]


@dataclass(frozen=True)
class MutatedRequest:
    """One mutated request: who asks which probe, and what is sent."""

    mutation: Mutation
    probe: Probe
    caller: str
    text: str
    extras: RequestExtras | None

    @property
    def tenant_id(self) -> str:
        """The tenant the request's tenant field names: the probe's owner for a credential conflict,
        else the caller."""
        return str(self.probe.tenant_id) if self.mutation.owner_in_tenant_field else self.caller


def sample(probes: Sequence[Probe], tenants: Sequence[str], per_tenant: int) -> list[tuple[Probe, str]]:
    """The first ``per_tenant`` probes of each tenant, each with the tenant that asks it: another tenant,
    rotating (the owner itself when it is the only tenant)."""
    out: list[tuple[Probe, str]] = []
    ordered = sorted(tenants)
    for position, tenant in enumerate(ordered):
        own = [p for p in probes if p.tenant_id == tenant][:per_tenant]
        others = ordered[position + 1 :] + ordered[:position] or [tenant]
        out += [(probe, others[j % len(others)]) for j, probe in enumerate(own)]
    return out


def plan_mutations(
    probes: Sequence[Probe],
    tenants: Sequence[str],
    mutations: Sequence[Mutation],
    per_tenant: int,
    channels: frozenset[Channel],
) -> tuple[list[MutatedRequest], list[Mutation]]:
    """The mutated requests to send, and the mutations left out because the retriever lacks their channel."""
    picked = sample(probes, tenants, per_tenant)
    requests: list[MutatedRequest] = []
    not_applicable: list[Mutation] = []
    for mutation in mutations:
        if not mutation.channels() <= channels:
            not_applicable.append(mutation)
            continue
        asked_by: set[str] = set()
        for probe, caller in picked:
            if mutation.per_caller:
                if caller in asked_by:
                    continue
                asked_by.add(caller)
            text = mutation.text(probe) if mutation.text is not None else probe.text
            extras = _for_probe(mutation.extras, probe, caller) if mutation.extras is not None else None
            requests.append(MutatedRequest(mutation, probe, caller, text, extras))
    return requests, not_applicable
