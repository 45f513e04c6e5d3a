"""ragaudit.redaction: every form of a secret is masked, prose is not, and it stays fast."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from ragaudit.redaction import MARKER, Redactor, redact, redactor

sys.path.insert(0, str(Path(__file__).resolve().parent))
from secret_forms import TOKENS, echoes, leaked, needles

PROSE = (
    "The Professional plan includes 50,000 API calls per month; passwords and internal documents are "
    "confidential. Northwind Logistics renewed its contract (ref AC-7731) on 2024-03-01."
)


@pytest.mark.parametrize("token", TOKENS)
@pytest.mark.parametrize("form", sorted(echoes(TOKENS[0])))
def test_every_echoed_form_is_masked(token: str, form: str) -> None:
    echoed = echoes(token)[form]
    for text in (echoed, f"x {echoed} y", f'{{"detail": "{echoed}"}}', f"id-{echoed}#3"):
        out = redact(text, token)
        assert MARKER in out, (form, out)
        assert not leaked(token, {form: out})


@pytest.mark.parametrize("token", TOKENS)
def test_every_window_of_every_form_is_masked_alone(token: str) -> None:
    r = redactor(token)
    survivors = [n for n in needles(token) if r.text(f"<{n}>") != f"<{MARKER}>"]
    assert not survivors, survivors[:5]


def test_quick_and_decoding_paths_agree() -> None:
    token = TOKENS[0]
    text = "a " + " | ".join(echoes(token).values()) + " " + PROSE
    escaped = text + " %41"  # an escape of an alphabet character forces the decoding path
    quick, full = redact(text, token), redact(escaped, token)
    assert full.removesuffix(" %41") == quick
    assert not leaked(token, {"quick": quick, "full": full})


def test_prose_and_other_tokens_are_left_alone() -> None:
    for token in TOKENS:
        assert redact(PROSE, token) == PROSE
        assert redact(json.dumps({"content": PROSE, "score": 1.5}), token) == json.dumps(
            {"content": PROSE, "score": 1.5}
        )
    assert redact("Sk9/aB+Z", TOKENS[1]) == "Sk9/aB+Z"  # a piece of another token


def test_a_short_secret_is_masked_only_whole() -> None:
    r = redactor("k9+z")
    assert r.text("Bearer k9+z, again k9%2Bz") == f"Bearer {MARKER}, again {MARKER}"
    assert r.text("k9+zebra and ak9+z") == "k9+zebra and ak9+z"  # part of a longer word
    assert r.text("k9+") == "k9+"  # pieces of a short secret are not masked


def test_word_like_pieces_are_not_masked_but_the_whole_token_is() -> None:
    r = redactor("mypassword-2024")
    assert r.text("reset your password today") == "reset your password today"
    assert r.text("key=mypassword-2024;") == f"key={MARKER};"
    assert r.text("leaked: rd-2024") == "leaked: rd-2024"  # 7 characters: below a piece


def test_redaction_is_idempotent_and_merges_one_occurrence_into_one_marker() -> None:
    token = TOKENS[1]
    once = redact(f"a {token} b {token[:9]}", token)
    assert once == f"a {MARKER} b {MARKER}"
    assert redact(once, token) == once


def test_values_bodies_and_no_secret() -> None:
    token = TOKENS[0]
    r = redactor(token)
    value = {"id": token, token: [1, f"x{token[3:12]}", {"n": None}], "score": 1.0}
    assert r.value(value) == {"id": MARKER, MARKER: [1, f"x{MARKER}", {"n": None}], "score": 1.0}
    body = json.dumps({"content": token}).encode("utf-16")
    assert json.loads(r.body(body)) == {"content": MARKER}
    assert r.body(b"\xff\xfe not text") == b"\xff\xfe not text"
    assert redactor(None).text(token) == token and redactor("").text(token) == token
    assert redactor(token) is redactor(token)  # patterns built once per secret
    assert isinstance(Redactor(token, marker="***").text(token), str)


def test_fast_enough_for_every_response() -> None:
    """An 8 KB JSON body without the secret: redaction costs a few json.loads (figures in
    docs/benchmarks.md); the bound is loose so that only a gross regression (a per-character Python
    loop, a regular expression that backtracks) fails on a loaded machine."""
    body = json.dumps(
        [{"chunk_id": f"doc-{i}-v2", "score": 1.0 / (i + 1), "content": PROSE * 2} for i in range(16)]
    ).encode()
    r = redactor(TOKENS[0])
    r.body(body)

    def best(fn: object, repeats: int = 30) -> float:
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            fn()  # type: ignore[operator]
            times.append(time.perf_counter() - start)
        return min(times)

    assert best(lambda: r.body(body)) < 25 * best(lambda: json.loads(body))
