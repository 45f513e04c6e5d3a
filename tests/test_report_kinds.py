"""Report kinds: one ``ReportKind`` per kind, registered once; a missing required field fails loudly
(naming the kind and the field) instead of rendering "–"; a third party adds a kind through the
``ragaudit.report_kinds`` entry point group, loaded by the same function as the built-ins."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragaudit.artifacts.envelope import REPORT_KINDS
from ragaudit.cli.main import main
from ragaudit.errors import InputError
from ragaudit.report.html import render_html
from ragaudit.report.kinds import ReportFieldError, load_kind, registered_kinds, registry, report_kind
from ragaudit.report.kinds.base import ReportKind
from ragaudit.report.kinds.benchmark import BenchmarkReport
from ragaudit.report.kinds.compare import CompareReport
from ragaudit.report.kinds.eval import EvalReport
from ragaudit.report.markdown import render_markdown
from ragaudit.report.terminal import render_terminal
from ragaudit.report.view import build_view
from report_fixtures import build_reports, load

ENVELOPE = {"schema_version": 1, "ragaudit_version": "0.1.0", "created_at": "2026-01-31T12:00:00+00:00"}
PLUGIN = """
from ragaudit.report.document import Document, Paragraph, Section
from ragaudit.report.kinds import ReportKind


class TinyKind(ReportKind):
    name = "{name}"
    required = ("answer",)

    def title(self, report):
        return "tiny " + str(report["answer"])

    def document(self, report):
        return Document((Section("tiny", "Tiny", (Paragraph(f"answer {{report.data['answer']}}"),)),))


KIND = TinyKind()
"""


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return build_reports(tmp_path_factory.mktemp("kinds"))


@pytest.fixture
def clean_registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh registry and an import folder for plugin modules; both restored afterwards."""
    saved = dict(registry._KINDS)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    registry._KINDS.clear()
    registry._KINDS.update(saved)
    registry._loaded = True
    for name in [m for m in sys.modules if m.startswith("tiny_kind")]:
        del sys.modules[name]


def test_every_report_kind_is_registered_once_with_its_own_module() -> None:
    kinds = registered_kinds()
    assert list(kinds)[: len(REPORT_KINDS)] == list(REPORT_KINDS)
    for name, kind in kinds.items():
        assert kind.name == name
    assert len(registry.BUILTIN_KINDS) == len(set(registry.BUILTIN_KINDS)) == len(REPORT_KINDS)


def test_a_renamed_required_field_fails_loudly_naming_it(reports: dict[str, Path]) -> None:
    report = load(reports["base"])
    report["tallies"] = report.pop("counts")
    with pytest.raises(ReportFieldError, match=r"eval report: required field 'counts' is missing"):
        build_view(report, resamples=100)
    case = load(reports["base"])
    case["per_case"][2]["case_id"] = case["per_case"][2].pop("id")
    with pytest.raises(ReportFieldError, match=r"required field 'per_case\[2\]\.id' is missing"):
        build_view(case, resamples=100)
    sweep = {**ENVELOPE, "kind": "k-sweep", "families": ["R"], "rows": [{"cutoff": 1, "R": 0.2}]}
    with pytest.raises(ReportFieldError, match=r"k-sweep report: required field 'rows\[0\]\.k'"):
        render_markdown(build_view(sweep))
    rewrite = {"kind": "rewrite-eval", "rewrite_model": "r", "constraints": {}, "metrics": {}}
    with pytest.raises(ReportFieldError, match=r"rewrite-eval report: required field 'rewriter'"):
        build_view(rewrite)


def test_the_cli_exits_2_naming_the_missing_field(
    reports: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = load(reports["base"])
    report["scores"] = report.pop("metrics")
    path = tmp_path / "renamed.json"
    path.write_text(json.dumps(report), encoding="utf-8")
    assert main(["report", str(path)]) == 2
    err = capsys.readouterr().err
    assert "eval report: required field 'metrics' is missing" in err and str(path) in err
    assert "Traceback" not in err


def test_a_kind_registered_at_runtime_renders_through_the_registry(clean_registry: Path) -> None:
    (clean_registry / "tiny_kind_rt.py").write_text(PLUGIN.format(name="tiny"), encoding="utf-8")
    kind = load_kind("tiny_kind_rt:KIND")  # the function the entry-point loader calls
    assert report_kind("tiny") is kind
    report = {**ENVELOPE, "kind": "tiny", "answer": 42}
    text = render_markdown(build_view(report))
    assert text.startswith("### ragaudit tiny: tiny 42") and "#### Tiny\n\nanswer 42\n" in text
    html = render_html(build_view(report))
    assert '<section id="tiny"><h2>Tiny</h2><p>answer 42</p></section>' in html
    assert render_terminal(report) == "answer 42"
    with pytest.raises(ReportFieldError, match="tiny report: required field 'answer' is missing"):
        build_view({**ENVELOPE, "kind": "tiny", "reply": 42})


def test_a_kind_registered_through_a_real_entry_point(clean_registry: Path) -> None:
    (clean_registry / "tiny_kind_ep.py").write_text(PLUGIN.format(name="tiny-ep"), encoding="utf-8")
    dist = clean_registry / "tiny_kind_ep-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: tiny-kind-ep\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[{registry.GROUP}]\ntiny-ep = tiny_kind_ep:KIND\n")
    registry._KINDS.clear()
    registry._loaded = False
    kinds = registered_kinds()
    assert list(kinds)[: len(REPORT_KINDS)] == list(REPORT_KINDS) and "tiny-ep" in kinds
    text = render_markdown(build_view({**ENVELOPE, "kind": "tiny-ep", "answer": "yes"}))
    assert "answer yes" in text
    assert render_terminal({**ENVELOPE, "kind": "tiny-ep", "answer": "yes"}) == "answer yes"
    assert "<p>answer yes</p>" in render_html(build_view({**ENVELOPE, "kind": "tiny-ep", "answer": "yes"}))
    path, out = clean_registry / "tiny.json", clean_registry / "tiny.html"
    path.write_text(json.dumps({**ENVELOPE, "kind": "tiny-ep", "answer": "cli"}), encoding="utf-8")
    assert main(["report", str(path), "--format", "html", "--out", str(out)]) == 0
    assert "<p>answer cli</p>" in out.read_text(encoding="utf-8")


def test_a_kind_without_a_name_or_not_a_kind_is_refused(clean_registry: Path) -> None:
    (clean_registry / "tiny_kind_bad.py").write_text("KIND = object()\n", encoding="utf-8")
    with pytest.raises(TypeError, match="is not a ReportKind"):
        load_kind("tiny_kind_bad:KIND")
    from ragaudit.report.kinds import ReportKind, register_kind

    with pytest.raises(ValueError, match="has no name"):
        register_kind(ReportKind())


def test_optional_fields_stay_optional(reports: dict[str, Path]) -> None:
    bench: dict[str, Any] = {
        "kind": "benchmark",
        "pipelines": [{"name": "svc", "metrics": {}}],
        "comparisons": [],
    }
    assert "| svc |" in render_markdown(build_view(bench))
    assert report_kind("no-such-kind") is None


def test_each_kind_s_schema_fragment_is_the_one_the_shipped_schema_applies_to_it() -> None:
    from ragaudit.artifacts.envelope import report_schema

    schema = report_schema()
    builtin = [registered_kinds()[name] for name in REPORT_KINDS]
    assert schema["properties"]["kind"]["enum"] == [k.name for k in builtin]
    applied = {rule["if"]["properties"]["kind"]["const"]: rule["then"] for rule in schema["allOf"]}
    for kind in builtin:
        assert applied.get(kind.name, {"type": "object"}) == dict(kind.schema), kind.name
        ref = kind.schema.get("$ref")
        if ref:
            assert ref.removeprefix("#/$defs/") in schema["$defs"]


def test_every_built_in_kind_owns_its_terminal_section() -> None:
    """What a command prints is its kind's document (or, not yet migrated, its terminal section): no
    built-in kind leaves it to the command."""
    for name in REPORT_KINDS:
        kind = type(registered_kinds()[name])
        assert kind.document is not ReportKind.document or kind.terminal is not ReportKind.terminal, name
    with pytest.raises(InputError, match="no report kind 'nope' is registered"):
        render_terminal({"kind": "nope"})


def test_from_json_returns_typed_views_that_fail_loudly(reports: dict[str, Path]) -> None:
    report = load(reports["base"])
    typed = report_kind("eval").from_json(report)  # type: ignore[union-attr]
    assert isinstance(typed, EvalReport) and typed.counts.cases == report["counts"]["cases"]
    assert typed.case_ids == [c["id"] for c in report["per_case"]]
    del report["counts"]["answerable"]
    with pytest.raises(
        ReportFieldError, match=r"eval report: required field 'counts\.answerable' is missing"
    ):
        render_terminal(report)
    row = {"metric": "R@5", "system": "b", "delta": 0.1, "ci": [0.0, 0.2], "significant": True}
    compare = report_kind("compare").from_json({"kind": "compare", "baseline": "a", "comparisons": [row]})  # type: ignore[union-attr]
    assert isinstance(compare, CompareReport) and compare.comparisons[0].ci == (0.0, 0.2)
    with pytest.raises(ReportFieldError, match=r"compare report: required field 'comparisons\[0\]\.system'"):
        build_view({"kind": "compare", "comparisons": [{"metric": "R@5"}]})
    bench = {"kind": "benchmark", "pipelines": [{"name": "a", "metrics": {"R@5": 0.5}}], "comparisons": []}
    assert isinstance(report_kind("benchmark").from_json(bench), BenchmarkReport)  # type: ignore[union-attr]
    with pytest.raises(ReportFieldError, match=r"benchmark report: required field 'pipelines\[1\]\.name'"):
        build_view({**bench, "pipelines": [*bench["pipelines"], {"metrics": {}}]})
    with pytest.raises(ReportFieldError, match=r"tenant-audit report: required field 'asking' is missing"):
        render_terminal(
            {
                "kind": "tenant-audit",
                "verdict": "clean",
                "tenants": [],
                "probes": {},
                "errors": {},
                "leaks": {},
                "hostile_tenants": {},
            }
        )
