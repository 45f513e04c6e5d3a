"""Plugin loading (``module:factory``) and run-file replay through the runner."""

from __future__ import annotations

import asyncio
import textwrap
from importlib.resources import files
from pathlib import Path

import pytest

from ragaudit.data.loading import load_dataset, load_run
from ragaudit.data.run import CaseRun, RankedItem, Run
from ragaudit.data.schema import GoldenCase
from ragaudit.errors import InputError, PermanentRetrievalError
from ragaudit.evaluation.evaluate import evaluate
from ragaudit.retrieval.plugin import load_plugin
from ragaudit.retrieval.replay import RunReplayRetriever
from ragaudit.runner.execute import run_cases

PLUGIN = textwrap.dedent(
    """
    class Fixed:
        def __init__(self, ids=("a", "b"), tenant=None):
            self.ids = list(ids)
            self.tenant = tenant

        async def search(self, *, tenant_id, query, top_k):
            owner = self.tenant or tenant_id
            return [{"chunk_id": i, "score": 1.0, "content": "", "source_id": i, "tenant_id": owner}
                    for i in self.ids][:top_k]

    def make(**kwargs):
        return Fixed(**kwargs)

    async def make_async():
        return Fixed()

    class Sync:
        def search(self, *, tenant_id, query, top_k):
            return []

    def make_sync():
        return Sync()

    def make_nothing():
        return 42

    def explode():
        raise RuntimeError("config file missing")

    ready = Fixed(["z"])
    NUMBER = 3

    class Holder:
        factory = staticmethod(make)
    """
)


@pytest.fixture
def plugin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "my_search_plugin.py").write_text(PLUGIN, encoding="utf-8")
    (tmp_path / "broken_plugin.py").write_text("import not_a_real_dependency_xyz\n", encoding="utf-8")
    (tmp_path / "crashing_plugin.py").write_text("raise RuntimeError('bad module')\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def first_ids(retriever: object) -> list[str]:
    case = GoldenCase("q", "question", ("a",), tenant_id="acme")
    run = asyncio.run(run_cases(retriever, [case], 5, progress=False))  # type: ignore[arg-type]
    assert run.cases["q"].error is None
    return run.cases["q"].ranking


def test_module_factory_with_kwargs(plugin_dir: Path) -> None:
    assert first_ids(load_plugin("my_search_plugin:make")) == ["a", "b"]
    assert first_ids(load_plugin("my_search_plugin:make", ids=["x", "y", "z"])) == ["x", "y", "z"]
    assert first_ids(load_plugin("my_search_plugin:Fixed", ids=["c"])) == ["c"]
    assert first_ids(load_plugin("my_search_plugin:Holder.factory")) == ["a", "b"]
    assert first_ids(load_plugin("my_search_plugin:ready")) == ["z"]  # a ready object


def test_file_path_form(plugin_dir: Path) -> None:
    assert first_ids(load_plugin(f"{plugin_dir / 'my_search_plugin.py'}:make", ids=["f"])) == ["f"]


def test_plugin_leak_is_seen_by_the_runner(plugin_dir: Path) -> None:
    retriever = load_plugin("my_search_plugin:make", tenant="globex")
    case = GoldenCase("q", "question", ("a",), tenant_id="acme")
    run = asyncio.run(run_cases(retriever, [case], 5, progress=False))
    assert [leak.chunk_id for leak in run.cases["q"].leaks] == ["a", "b"]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no_colon_here", "expected module:factory"),
        ("my_search_plugin:", "expected module:factory"),
        ("surely_missing_module_q1:make", "module 'surely_missing_module_q1' not found"),
        ("my_search_plugin:missing", "has no attribute 'missing'"),
        ("my_search_plugin:NUMBER", "not a factory or retriever"),
        ("my_search_plugin:make_async", "is async"),
        ("my_search_plugin:make_sync", "Sync.search is not async"),
        ("my_search_plugin:make_nothing", "without a search method"),
        ("my_search_plugin:explode", "RuntimeError: config file missing"),
        ("broken_plugin:make", "importing 'broken_plugin' failed"),
        ("crashing_plugin:make", "RuntimeError: bad module"),
        ("./does/not/exist.py:make", "not found"),
    ],
)
def test_plugin_errors_say_what_to_fix(plugin_dir: Path, spec: str, message: str) -> None:
    with pytest.raises(InputError) as info:
        load_plugin(spec)
    assert message in str(info.value)
    assert info.value.problem.fix


def test_bad_kwargs_are_reported(plugin_dir: Path) -> None:
    with pytest.raises(InputError, match="unexpected keyword argument 'colour'"):
        load_plugin("my_search_plugin:make", colour="red")


def test_missing_attribute_lists_what_is_there(plugin_dir: Path) -> None:
    with pytest.raises(InputError) as info:
        load_plugin("my_search_plugin:mak")
    assert "make" in info.value.problem.fix


# -- replay --------------------------------------------------------------------------------------

DEMO = files("ragaudit") / "demo_data"


def test_replaying_a_run_file_through_the_runner_scores_the_same() -> None:
    dataset = load_dataset(str(DEMO / "lesson_golden.jsonl"))
    stored = load_run(str(DEMO / "lesson_run.trec"))
    retriever = RunReplayRetriever(stored, dataset.cases)
    replayed = asyncio.run(run_cases(retriever, dataset.cases, 100, default_tenant="demo", progress=False))
    metrics = "R@3,P@3,MRR,nDCG@10"
    direct = evaluate(dataset, stored, metrics)
    through_runner = evaluate(dataset, replayed, metrics)
    assert through_runner.metrics == direct.metrics
    for case_id, case in stored.cases.items():
        if case_id in replayed.cases:
            assert replayed.cases[case_id].ranking == case.ranking


def run_of(cases: dict[str, CaseRun]) -> Run:
    return Run(cases, name="stored")


def test_replay_cuts_to_top_k_and_keeps_labels() -> None:
    items = [RankedItem(f"d{i}", 1.0 - i / 10, "acme", f"text {i}", "src") for i in range(5)]
    retriever = RunReplayRetriever(run_of({"q1": CaseRun(items)}), {"q1": "what is x"})
    chunks = asyncio.run(retriever.search(tenant_id="acme", query="what is x", top_k=2))
    assert chunks == [
        {"chunk_id": "d0", "score": 1.0, "content": "text 0", "source_id": "src", "tenant_id": "acme"},
        {"chunk_id": "d1", "score": 0.9, "content": "text 1", "source_id": "src", "tenant_id": "acme"},
    ]


def test_replay_failures_are_per_case() -> None:
    stored = run_of(
        {
            "ok": CaseRun([RankedItem("a")]),
            "failed": CaseRun([], "timeout after 10s"),
            "twin-1": CaseRun([RankedItem("b")]),
            "twin-2": CaseRun([RankedItem("c")]),
        }
    )
    cases = [
        GoldenCase("ok", "fine", ("a",), tenant_id="acme"),
        GoldenCase("failed", "slow", ("a",), tenant_id="acme"),
        GoldenCase("absent", "not stored", ("a",), tenant_id="acme"),
        GoldenCase("twin-1", "same words", ("b",)),
        GoldenCase("twin-2", "same words", ("c",)),
        GoldenCase("t-acme", "per tenant", ("b",), tenant_id="acme"),
        GoldenCase("t-globex", "per tenant", ("c",), tenant_id="globex"),
    ]
    stored.cases["t-acme"] = CaseRun([RankedItem("b")])
    stored.cases["t-globex"] = CaseRun([RankedItem("c")])
    retriever = RunReplayRetriever(stored, cases)
    run = asyncio.run(run_cases(retriever, cases, 5, default_tenant="acme", progress=False))
    assert run.cases["ok"].ranking == ["a"]
    assert run.cases["failed"].error == "timeout after 10s" and run.cases["failed"].attempts == 1
    assert run.cases["absent"].error == "case 'absent' is not in run 'stored'"
    assert "several cases (twin-1, twin-2)" in (run.cases["twin-1"].error or "")
    assert run.cases["t-acme"].ranking == ["b"] and run.cases["t-globex"].ranking == ["c"]
    with pytest.raises(PermanentRetrievalError, match="no case with this query"):
        asyncio.run(retriever.search(tenant_id="acme", query="never asked", top_k=3))
    assert "stored" in repr(retriever)
