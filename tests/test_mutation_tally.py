"""The mutation table tells a refusal from an answer that could not be checked (a 5xx is not a refusal)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from ragaudit.report.document import Items
from ragaudit.report.kinds.tenant_asking import mutation_blocks
from ragaudit.security.mutation_tally import _Row
from ragaudit.security.request_loop import Answer


def _answer(error: str | None, items: list[Any] | None = None) -> Answer:
    return cast(Answer, SimpleNamespace(items=items, error=error))


def test_server_errors_rate_limits_and_garbage_are_not_counted_as_refusals() -> None:
    row = _Row("query-shape", "field:value", "a query parser that reads a tenant field")
    for error in (
        "HTTP 500 Internal Server Error",
        "HTTP 503",
        "HTTP 429 Too Many Requests",
        "response is not valid JSON",
        "HTTP 403 Forbidden",
        "HTTP 400 bad query",
        "ValueError: tenant mismatch",
        "connection refused",
    ):
        row.add(_answer(error), 0)
    row.add(_answer(None, []), 0)
    counted = row.to_json()
    assert (counted["errored"], counted["rejected"], counted["failed"], counted["answered"]) == (4, 3, 1, 1)
    assert counted["requests"] == 9


def test_the_page_says_errored_mutations_were_not_checked() -> None:
    row = {"axis": "query-shape", "mutation": "field:value", "applicable": True, "requests": 6}
    blocks = mutation_blocks([{**row, "errored": 6, "rejected": 0}])
    listed = [b for b in blocks if isinstance(b, Items)]
    assert listed and listed[0].intro.startswith("NOT CHECKED")
    assert listed[0].items == (("field:value", "6 of 6 requests"),)
    assert not any("rejected mutations" in b.intro for b in listed)
    refused = mutation_blocks([{**row, "errored": 0, "rejected": 6}])
    assert not any(isinstance(b, Items) and b.intro.startswith("NOT CHECKED") for b in refused)


def test_the_page_says_how_many_applied_and_whether_any_was_sent() -> None:
    """ "43 of 46 sent (0 requests)" read as if 43 went out when the service could not be reached."""
    from ragaudit.report.document import Paragraph

    rows: list[dict[str, Any]] = [
        {"axis": "query-shape", "mutation": "field:value", "applicable": True, "requests": 6},
        {"axis": "query-shape", "mutation": "OR", "applicable": True, "requests": 4},
        {"axis": "pagination", "mutation": "offset=10", "applicable": False, "reason": "x: no channel"},
    ]
    sent = mutation_blocks(rows)[0]
    assert isinstance(sent, Paragraph) and sent.text.startswith(
        "request mutations: 2 of 3 applicable, 10 requests sent, 0 rejected by the service every time, "
        "1 not applicable (pagination: no channel)"
    )
    unsent = [{**row, "requests": 0} for row in rows]
    down = mutation_blocks(unsent, stopped=True)[0]
    assert isinstance(down, Paragraph) and down.text.startswith(
        "request mutations: 2 of 3 applicable, none sent: the service could not be reached (the audit "
        "stopped early), 1 not applicable"
    )
    quiet = mutation_blocks(unsent)[0]
    assert isinstance(quiet, Paragraph) and "2 of 3 applicable, none sent, 1 not applicable" in quiet.text
