"""The fifth red team of ``audit-tenants`` (security/leaky_round5.py), through a real server on 127.0.0.1
with the CLI: each leaky service fails, its honest twin is clean.

- missed before round 5, found by a new mutation: a one-word query path ("keyword lookup") and a
  string ``top_k`` path (``"10"``);
- caught already: a filter applied only to queries of more than 3 words, a ``more`` array of ranks beyond
  ``top_k`` served from every tenant, the shared index in a gzip-compressed body
  (docs/security.md, "Red team, round 5")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import KB
from ragaudit.cli.main import main
from ragaudit.corpus.model import Chunk
from ragaudit.security.leaky import ROUND5_LEAKS
from ragaudit.security.leaky_round5 import ROUND5_STYLES, make_round5_service
from servers import LocalServer
from test_red_team_round4 import SMALL_CLI, _assert_clean, _wire

CORPUS = str(KB / "corpus.jsonl")
FOUND_BY = {"one-word": "one word", "string-top-k": "top_k as a JSON string"}
"""The new mutation that alone found the leak (the others leak on plain or older mutated requests)."""


def _audit(service: Any, out: Path) -> tuple[int, dict[str, Any]]:
    with LocalServer(_wire(service)) as server:
        code = main(
            [
                *("audit-tenants", "--corpus", CORPUS, "--endpoint", server.url),
                *("--out", str(out), "--no-progress", *SMALL_CLI),
            ]
        )
    return code, json.loads(out.read_text(encoding="utf-8"))


def test_every_round5_style_is_registered_with_its_twin() -> None:
    assert ROUND5_LEAKS == ROUND5_STYLES and len(ROUND5_STYLES) == 5


@pytest.mark.parametrize("style", ROUND5_STYLES)
def test_each_round5_leak_fails_over_http_and_its_twin_does_not(
    style: str, chunks: list[Chunk], tmp_path: Path
) -> None:
    code, report = _audit(make_round5_service(style, chunks), tmp_path / "leaky.json")
    assert code == 1 and report["verdict"] == "leak", (style, report["isolation"])
    found = {r["asked"].get("mutation", "") for r in report["leaks"]["records"]}
    if style in FOUND_BY:
        assert found == {FOUND_BY[style]}, found
    code, report = _audit(make_round5_service(style, chunks, honest=True), tmp_path / "honest.json")
    _assert_clean(code, report)
    rows = {r["mutation"]: r for r in report["asking"]["mutations"]}
    assert rows["one word"]["answered"] == rows["one word"]["requests"] == 3
    assert rows["top_k as a JSON string"]["answered"] == rows["top_k as a JSON string"]["requests"] == 3


def test_a_service_that_answers_500_to_a_string_top_k_is_not_accused(
    chunks: list[Chunk], tmp_path: Path
) -> None:
    """An honest service whose handler breaks on ``"10" > 20`` (a framework's 500): recorded, clean."""
    service = make_round5_service("one-word", chunks, honest=True)
    respond = service.respond

    def strict(body: Any, headers: Any, params: Any, path: str = "/search", method: str = "POST") -> Any:
        if isinstance((body or {}).get("top_k"), str):
            return 500, {"detail": "Internal Server Error"}, {}
        return respond(body, headers, params, path, method)

    service.respond = strict  # type: ignore[method-assign]
    code, report = _audit(service, tmp_path / "strict.json")
    _assert_clean(code, report)
    row = next(r for r in report["asking"]["mutations"] if r["mutation"] == "top_k as a JSON string")
    assert row["errored"] == row["requests"] == 3 and row["leaks"] == 0
