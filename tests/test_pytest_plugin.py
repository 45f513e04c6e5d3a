"""The pytest plugin, exercised the way users meet it: test projects run by pytester.

The lesson's security test (section 20) is copied verbatim into a user project: it must pass through
the plugin's ``retriever`` fixture with the bm25 pipeline over the demo knowledge base, and fail
against a retriever that ignores tenants.
"""

from __future__ import annotations

import json
from importlib.metadata import entry_points
from pathlib import Path

import pytest

import ragaudit.artifacts.history
import ragaudit.evaluation.live
import ragaudit.pipelines.build
import ragaudit.retrieval.bm25  # noqa: F401  (imported once here, not again in every in-process run)
from conftest import KB
from ragaudit.evaluation.evaluate import evaluate
from ragaudit.pytest_plugin import assert_floor, assert_floors, assert_no_leaks

pytest_plugins = ["pytester"]

PLUGIN_ARGS: tuple[str, ...] = (
    ()
    if any(ep.name == "ragaudit" for ep in entry_points(group="pytest11"))
    else ("-p", "ragaudit.pytest_plugin")
)
"""Load the plugin by module until the ``pytest11`` entry point is installed (then it loads itself)."""

LESSON_SECURITY_TEST = """
import pytest

@pytest.mark.security
async def test_retrieval_never_leaks_cross_tenant_chunks(retriever):
    # Tenant A executes a query that semantically matches Tenant B's private contract
    results = await retriever.search(
        tenant_id="tenant_acme",
        query="What are the confidential severance clauses?",
        top_k=10,
    )

    # Assert 100% of returned chunks strictly belong to caller's verified tenant
    unauthorized = [
        item for item in results
        if item.get("tenant_id") != "tenant_acme"
    ]
    assert len(unauthorized) == 0, f"CRITICAL LEAK: {len(unauthorized)} foreign chunks detected!"
"""

LEAKY_RETRIEVER = '''
"""A retriever that ignores the tenant: it ranks every document of the corpus by shared words."""
import json
from pathlib import Path

CORPUS = Path(__import__("os").environ["DEMO_CORPUS"])


class TenantBlindRetriever:
    def __init__(self):
        self.docs = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line]

    async def search(self, *, tenant_id, query, top_k):
        words = set(query.lower().split())
        ranked = sorted(self.docs, key=lambda d: (-len(words & set(d["text"].lower().split())), d["doc_id"]))
        return [
            {"chunk_id": d["doc_id"], "score": 1.0, "content": d["text"], "source_id": d["doc_id"],
             "tenant_id": d["tenant_id"]}
            for d in ranked[:top_k]
        ]


def make():
    return TenantBlindRetriever()
'''

DEMO_INI = """
[pytest]
addopts = --strict-markers
ragaudit_corpus = demo:corpus.jsonl
ragaudit_dataset = demo:golden.jsonl
ragaudit_pipeline = bm25
ragaudit_tenant_aliases =
    tenant_acme=acme
"""


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    # hypothesis's plugin would re-import hypothesis in every in-process run: it is not needed here
    return pytester.runpytest(*PLUGIN_ARGS, "-p", "no:cacheprovider", "-p", "no:hypothesispytest", *args)


def test_the_lessons_security_test_passes_as_written_on_the_demo_kb(pytester: pytest.Pytester) -> None:
    pytester.makeini(DEMO_INI)
    pytester.makepyfile(test_lesson=LESSON_SECURITY_TEST)
    pytester.makepyfile(
        test_not_vacuous="""
        async def test_the_retriever_really_answers_for_the_aliased_tenant(retriever):
            results = await retriever.search(
                tenant_id="tenant_acme", query="What are the confidential severance clauses?", top_k=10
            )
            assert len(results) == 10
            assert {r["tenant_id"] for r in results} == {"tenant_acme"}
            assert results[0]["chunk_id"] == "acme-contract-cfo-employment"
        """
    )
    result = _run(pytester, "-v")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*test_retrieval_never_leaks_cross_tenant_chunks PASSED*"])
    _run(pytester, "-m", "security").assert_outcomes(passed=1, deselected=1)


def test_the_lessons_security_test_fails_against_a_leaky_retriever(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEMO_CORPUS", str(KB / "corpus.jsonl"))
    pytester.syspathinsert()
    pytester.makepyfile(leaky=LEAKY_RETRIEVER, test_lesson=LESSON_SECURITY_TEST)
    pytester.makeini(
        "[pytest]\nragaudit_retriever = leaky:make\nragaudit_tenant_aliases = tenant_acme=acme\n"
    )
    result = _run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*AssertionError: CRITICAL LEAK: * foreign chunks detected!*"])
    assert "CRITICAL LEAK: 0 " not in result.stdout.str()


def test_eval_result_and_floor_helpers_read_like_a_report(pytester: pytest.Pytester, tmp_path: Path) -> None:
    pytester.makeini(DEMO_INI)
    pytester.makepyfile(
        test_quality="""
        import pytest
        from ragaudit.pytest_plugin import assert_floor, assert_floors, assert_no_errors, assert_no_leaks

        @pytest.mark.retrieval_eval
        def test_floors_met(eval_result):
            assert_no_errors(eval_result)
            assert_no_leaks(eval_result)
            assert_floors(eval_result, {"nDCG@10": 0.70, "R@5": 0.85})

        @pytest.mark.retrieval_eval
        def test_floor_missed(eval_result):
            assert_floor(eval_result, "ndcg@10", 0.95)
        """
    )
    report = tmp_path / "eval.json"
    result = _run(pytester, "--ragaudit-report", str(report), "--ragaudit-metrics", "nDCG@10,R@5")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["*AssertionError: nDCG@10 0.81 < floor 0.95; worst queries: globex-security-004 (0.00), *"]
    )
    data = json.loads(report.read_text())
    assert data["kind"] == "eval" and set(data["metrics"]) == {"nDCG@10", "R@5"}
    assert data["counts"]["cases"] == 84 and data["pipeline"]["name"] == "bm25"


def test_marker_configuration_with_relative_paths_report_and_history(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    golden = (KB / "golden.jsonl").read_text(encoding="utf-8").splitlines()
    pytester.mkdir("evals")
    (pytester.path / "evals" / "small.jsonl").write_text("\n".join(golden[:6]) + "\n", encoding="utf-8")
    pytester.makepyfile(
        **{
            "evals/test_small": """
            import pytest

            pytestmark = pytest.mark.ragaudit(
                dataset="small.jsonl", corpus="demo:corpus.jsonl", pipeline="bm25", metrics="R@5,MRR@10",
                report="out/eval.json", history="out/history.sqlite",
            )

            def test_the_small_set(eval_result, golden_dataset):
                assert len(golden_dataset.cases) == 6
                assert eval_result.counts.cases == 6
                assert set(eval_result.metrics) == {"R@5", "MRR@10"}
            """
        }
    )
    _run(pytester).assert_outcomes(passed=1)
    report = pytester.path / "evals" / "out" / "eval.json"
    assert json.loads(report.read_text())["counts"]["cases"] == 6
    from ragaudit.artifacts.history import query_runs

    (run,) = query_runs(pytester.path / "evals" / "out" / "history.sqlite")
    assert run.pipeline == "bm25" and set(run.metrics) == {"R@5", "MRR@10"}


def test_async_tests_run_on_one_session_loop_and_can_fail(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_async="""
        import asyncio
        import pytest

        LOOPS = []

        async def test_first():
            await asyncio.sleep(0)
            LOOPS.append(asyncio.get_running_loop())

        async def test_second():
            LOOPS.append(asyncio.get_running_loop())
            assert LOOPS[0] is LOOPS[1]

        async def test_failure_is_reported():
            await asyncio.sleep(0)
            assert 1 + 1 == 3, "the coroutine ran"

        @pytest.mark.anyio
        async def test_anyio_still_runs_its_own(anyio_backend):
            await asyncio.sleep(0)

        @pytest.fixture
        def anyio_backend():
            return "asyncio"
        """
    )
    result = _run(pytester)
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["*AssertionError: the coroutine ran*"])


def test_misconfiguration_is_a_short_setup_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_bad="""
        import pytest

        async def test_nothing_configured(retriever):
            pass

        @pytest.mark.ragaudit(pipeline="bm25")
        def test_no_corpus(retriever):
            pass

        @pytest.mark.ragaudit(datset="x.jsonl")
        def test_typo(golden_dataset):
            pass

        @pytest.mark.ragaudit(dataset="missing.jsonl")
        def test_missing_file(golden_dataset):
            pass
        """
    )
    result = _run(pytester)
    result.assert_outcomes(errors=4)
    result.stdout.fnmatch_lines(
        [
            "*ragaudit: no retriever configured; set ragaudit_retriever = module:factory*",
            "*ragaudit: pipeline 'bm25' needs a corpus; set ragaudit_corpus*",
            "*ragaudit: unknown option 'datset' in @pytest.mark.ragaudit; valid: dataset, corpus*",
            "*ragaudit: *missing.jsonl: dataset not found (fix: check the path: no such file or folder)*",
        ]
    )
    assert "Traceback" not in result.stdout.str()


def test_assertion_helpers_accept_a_report_dict() -> None:
    result = evaluate(KB.parent / "lesson_golden.jsonl", KB.parent / "lesson_run.trec", "nDCG@10,R@5")
    report = result.to_dict()
    assert_floors(report, {"R@5": 0.5})
    assert_no_leaks(report, allow_unverified=True)
    with pytest.raises(
        AssertionError,
        match=r"^tenant isolation NOT VERIFIED: 10 of 10 not verified: no --corpus was given",
    ):
        assert_no_leaks(report)  # a TREC run lists no chunk owner: no leak found is not no leak
    with pytest.raises(AssertionError, match=r"^nDCG@10 \S+ < floor 1.01; worst queries: "):
        assert_floor(report, "nDCG@10", 1.01)
    with pytest.raises(AssertionError, match="MRR was not computed"):
        assert_floor(result, "MRR", 0.5)


FLAKY_RETRIEVER = '''
"""The bm25 pipeline over the demo corpus, whose backend fails on every question about refunds."""
import os

from ragaudit.corpus.loading import load_corpus
from ragaudit.pipelines.sources import SourceSpec, open_source


class FlakyRetriever:
    def __init__(self):
        corpus = load_corpus(os.environ["DEMO_CORPUS"])
        self.inner = open_source(SourceSpec(pipeline="bm25"), corpus=corpus).retriever

    async def search(self, *, tenant_id, query, top_k):
        if "refund" in query.lower():
            raise RuntimeError("backend down")
        return await self.inner.search(tenant_id=tenant_id, query=query, top_k=top_k)


def make():
    return FlakyRetriever()
'''


def test_a_floor_met_by_a_run_whose_cases_failed_fails_the_test(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The documented quality test (floors only) must not pass while the retriever errors on some
    cases: a run whose cases failed is not a passing run (max_error_rate tolerates a share)."""
    monkeypatch.setenv("DEMO_CORPUS", str(KB / "corpus.jsonl"))
    pytester.syspathinsert()
    pytester.makepyfile(
        flaky=FLAKY_RETRIEVER,
        test_quality="""
import pytest
from ragaudit.pytest_plugin import assert_floor, assert_floors

pytestmark = pytest.mark.ragaudit(dataset="demo:golden.jsonl", corpus="demo:corpus.jsonl", retriever="flaky:make")

def test_quality(eval_result):
    assert eval_result.counts.errors > 0
    assert_floors(eval_result, {"nDCG@10": 0.10})

def test_one_floor(eval_result):
    assert_floor(eval_result, "R@5", 0.10)

def test_tolerated(eval_result):
    assert_floors(eval_result, {"nDCG@10": 0.10}, max_error_rate=0.2)
""",
    )
    result = _run(pytester)
    result.assert_outcomes(passed=1, failed=2)
    text = result.stdout.str()
    assert "cases failed" in text and "RuntimeError: backend down" in text


def test_floor_helpers_fail_on_missing_cases_and_on_nothing_scored() -> None:
    lesson = KB.parent / "lesson_golden.jsonl"
    rankings = {"pricing-001": ["pricing-professional-v3"], "security-001": ["account-security-guide-v2"]}
    partial = evaluate(lesson, rankings, "R@5")  # refund-001 is missing: scored 0, a failed case
    with pytest.raises(
        AssertionError,
        match=r"(?s)1 of 4 cases failed \(25.0%; max_error_rate allows 0.0%\).*refund-001: missing",
    ):
        assert_floors(partial, {"R@5": 0.5})
    with pytest.raises(AssertionError, match=r"1 of 4 cases failed"):
        assert_floor(partial.to_dict(), "R@5", 0.5)
    assert_floors(partial, {"R@5": 0.5}, max_error_rate=0.25)
    nothing = evaluate(lesson, {}, "R@5")
    with pytest.raises(AssertionError, match="no case could be scored"):
        assert_floors(nothing, {"R@5": 0.0}, max_error_rate=1.0)
