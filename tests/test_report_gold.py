"""Gold files: every kind that builds a document, rendered in all three formats from a fixed report.

The fixed reports are ``tests/gold/inputs/<kind>.json`` (real reports of the demo knowledge base,
trimmed, with hostile ids); what each format draws is stored beside them as ``tests/gold/<kind>.txt``
(the terminal), ``.md`` and ``.html`` (the page's ``<main>``: the CSS and script are the page's, not the
kind's). A change in what a kind shows fails here with a diff; after checking the diff, regenerate with

    RAGAUDIT_REGEN_GOLD=1 pytest tests/test_report_gold.py

A kind joins by building a document (``ReportKind.document``) and adding its fixed report: the test
below fails for a built-in kind that builds a document without one, and ``LEGACY`` (the kinds that
still draw themselves) can only shrink.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from ragaudit.artifacts.envelope import REPORT_KINDS
from ragaudit.report.html import render_html
from ragaudit.report.kinds import ReportKind, registered_kinds
from ragaudit.report.markdown import render_markdown
from ragaudit.report.terminal import render_terminal
from ragaudit.report.view import build_view

GOLD = Path(__file__).parent / "gold"
REGEN = os.environ.get("RAGAUDIT_REGEN_GOLD") == "1"
LEGACY: set[str] = set()
"""Built-in kinds that still draw themselves (their own terminal / markdown / html hooks)."""


def _migrated() -> list[str]:
    kinds = registered_kinds()
    return [name for name in REPORT_KINDS if type(kinds[name]).document is not ReportKind.document]


MIGRATED = _migrated()


def _report(kind: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((GOLD / "inputs" / f"{kind}.json").read_text(encoding="utf-8"))
    return data


def _main(page: str) -> str:
    found = re.search(r"<main>.*</main>", page, re.S)
    assert found is not None
    return found.group(0).replace("><", ">\n<") + "\n"  # a line per tag, so a diff is readable


def rendered(kind: str, fmt: str) -> str:
    report = _report(kind)
    if fmt == "txt":
        return render_terminal(report, f"{kind}.json") + "\n"
    view = build_view(report, report_path=f"{kind}.json")
    return render_markdown(view) if fmt == "md" else _main(render_html(view))


def test_every_built_in_kind_is_migrated_or_listed_as_legacy() -> None:
    assert set(MIGRATED) | LEGACY == set(REPORT_KINDS)
    assert not set(MIGRATED) & LEGACY, "a migrated kind: take it off LEGACY"
    for kind in MIGRATED:
        assert (GOLD / "inputs" / f"{kind}.json").exists(), f"add tests/gold/inputs/{kind}.json"


@pytest.mark.parametrize("fmt", ["txt", "md", "html"])
@pytest.mark.parametrize("kind", MIGRATED)
def test_a_kind_draws_as_its_gold_file(kind: str, fmt: str) -> None:
    text = rendered(kind, fmt)
    gold = GOLD / f"{kind}.{fmt}"
    if REGEN:
        gold.write_text(text, encoding="utf-8")
    assert gold.exists(), f"no {gold.name}: RAGAUDIT_REGEN_GOLD=1 pytest {Path(__file__).name}"
    assert text == gold.read_text(encoding="utf-8"), (
        f"{kind} {fmt} differs from {gold}; if the change is right: "
        f"RAGAUDIT_REGEN_GOLD=1 pytest {Path(__file__).name}"
    )


@pytest.mark.parametrize("kind", MIGRATED)
def test_no_kind_renders_only_its_provenance(kind: str) -> None:
    """Markdown has a section of the kind's own besides the provenance, and so has the page."""
    markdown = rendered(kind, "md")
    body = markdown.split("<details><summary>Provenance</summary>")[0]
    assert body.count("\n#### ") >= 1 and len(body.splitlines()) > 6, markdown[:400]
    page = render_html(build_view(_report(kind)))
    own = [
        s
        for s in re.findall(r'<section id="([^"]+)"', page)
        if s not in {"summary", "provenance", "problems"}
    ]
    assert own, f"{kind}: the page has no section of its own"


@pytest.mark.parametrize("kind", MIGRATED)
def test_hostile_ids_stay_text_in_every_format(kind: str) -> None:
    for fmt in ("md", "html"):
        text = rendered(kind, fmt)
        assert "<script>document" not in text and "<img src=x" not in text, (kind, fmt)


PYTHON_WORDS = re.compile(r"\b(None|nan|NaN|inf)\b")
"""What a missing value reads as when it is formatted by Python instead of the cell formatter."""


@pytest.mark.parametrize("fmt", ["txt", "md", "html"])
@pytest.mark.parametrize("kind", MIGRATED)
def test_no_missing_value_reads_as_python_text(kind: str, fmt: str) -> None:
    text = rendered(kind, fmt)
    if fmt == "html":
        text = re.sub(r"<svg.*?</svg>", "", text, flags=re.S)
    assert not PYTHON_WORDS.search(text), PYTHON_WORDS.search(text)


def test_a_minimal_eval_draws_missing_values_as_missing() -> None:
    """Undefined means, a policy, percentiles and a k the report does not have read ``–`` (or ``k``)."""
    report = {
        "kind": "eval",
        "metrics": {"nDCG@10": None, "R@5": float("nan")},
        "counts": {"cases": 1, "answerable": 1, "unanswerable": 0, "missing": 0, "errors": 0},
        "per_case": [{"id": "q", "metrics": {}}],
        "latency_ms": {"p95": 3.0},
        "security": {},
        "holes": {"status": "not_measured"},
    }
    for text in (
        render_terminal(report),
        render_markdown(build_view(report)),
        render_html(build_view(report)),
    ):
        assert not PYTHON_WORDS.search(text.split("<script")[0]), PYTHON_WORDS.search(text)
    terminal = render_terminal(report)
    assert "latency ms: p50 –  p95 3.0  p99 –" in terminal and "policy: nDCG gain –" in terminal
    assert "Judged@k: not measured" in terminal and "NOT VERIFIED" in terminal


def test_a_minimal_rewrite_eval_draws_missing_values_as_missing() -> None:
    """Counts, latencies and a rewrite the report does not have read ``–`` (or say so), never None / nan / 0."""
    report = {
        "kind": "rewrite-eval",
        "rewriter": "r",
        "constraints": {"cases": 10, "checked": 6, "flagged": 0},
        "metrics": {},
        "comparisons": [],
        "latency_ms": {"added": {"mean": 1.0}},
        "per_case": [
            {
                "id": "q",
                "flagged": True,
                "query": "a",
                "constraints": {"lost": [{"kind": "entity", "text": "p"}]},
            }
        ],
    }
    for text in (
        render_terminal(report),
        render_markdown(build_view(report)),
        render_html(build_view(report)),
    ):
        assert not PYTHON_WORDS.search(text.split("<script")[0]), PYTHON_WORDS.search(text)
        assert "(no rewrite recorded)" in text and "+1.00" in text
    terminal = render_terminal(report)
    assert "per query              –                 –       +1.00          –          –" in terminal
