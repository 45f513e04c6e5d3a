"""k-sweep: R@k, P@k and context tokens for k = 1..K from one run or report, never re-querying."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from conftest import KB, write_lines
from ragaudit.cli.main import main
from ragaudit.corpus.loading import load_corpus
from ragaudit.data.loading import load_dataset
from ragaudit.data.run import CaseRun, RankedItem, Run
from ragaudit.errors import InputError, MetricNameError
from ragaudit.evaluation.evaluate import evaluate
from ragaudit.experiments.benchmark import context_tokens
from ragaudit.experiments.k_sweep import parse_chunking, sweep, sweep_report, sweep_run
from ragaudit.metrics.policy import Policy
from ragaudit.metrics.pure import precision_at_k, recall_at_k
from ragaudit.pipelines.config import load_pipeline_file, preset
from ragaudit.pipelines.prepare import prepare_pipeline
from ragaudit.runner.execute import run_cases
from ragaudit.runner.executor import LocalExecutor

CHUNKED = """\
name = "bm25-chunks"
[chunking]
strategy = "recursive"
size = 48
overlap = 8
[retriever]
type = "bm25"
"""


def schema_errors(report: dict[str, Any]) -> list[str]:
    """The report schema's complaints about ``report`` (the shared envelope every kind carries)."""
    pytest.importorskip("jsonschema")
    artifact = pytest.importorskip("ragaudit.artifacts.envelope")
    errors: list[str] = artifact.schema_errors(report)
    return errors


@pytest.fixture
def tiny(tmp_path: Path) -> tuple[Path, Run]:
    golden = write_lines(
        tmp_path / "g.jsonl",
        [
            json.dumps({"id": "a", "query": "qa", "tenant_id": "t", "relevant_chunk_ids": ["d1", "d3"]}),
            json.dumps({"id": "b", "query": "qb", "tenant_id": "t", "relevant_chunk_ids": ["d2"]}),
            json.dumps({"id": "c", "query": "qc", "tenant_id": "t", "relevant_chunk_ids": ["d9"]}),
            json.dumps({"id": "u", "query": "qu", "tenant_id": "t", "relevant_chunk_ids": []}),
        ],
    )

    def items(*pairs: tuple[str, str]) -> list[RankedItem]:
        return [RankedItem(cid, 1.0 / (i + 1), "t", text) for i, (cid, text) in enumerate(pairs)]

    run = Run(
        {
            "a": CaseRun(items(("d1", "one two"), ("d2", "three"), ("d3", "four five six"))),
            "b": CaseRun(
                items(("d4", "w"), ("d2", "x y"), ("d2", "x y"))
            ),  # a repeated id costs tokens again
            "c": CaseRun([], error="timeout"),  # answerable, not answered: scores 0, no tokens
            "u": CaseRun(items(("d5", "p q r s"))),  # unanswerable: out of the averages, its context counts
        },
        name="tiny",
    )
    return golden, run


def test_rows_equal_the_pure_metrics_and_the_benchmark_token_count(tiny: tuple[Path, Run]) -> None:
    golden, run = tiny
    dataset = load_dataset(golden)
    result = sweep(dataset, run, 4, Policy())
    rankings = {"a": ["d1", "d2", "d3"], "b": ["d4", "d2", "d2"], "c": []}
    rel = {"a": {"d1", "d3"}, "b": {"d2"}, "c": {"d9"}}
    for row in result.rows:
        k = row["k"]
        assert row["R"] == pytest.approx(sum(recall_at_k(rankings[q], rel[q], k) for q in rel) / 3)
        assert row["P"] == pytest.approx(sum(precision_at_k(rankings[q], rel[q], k) for q in rel) / 3)
        assert row["context_tokens"] == pytest.approx(context_tokens(run, k))
    assert [r["context_tokens"] for r in result.rows] == pytest.approx([7 / 3, 10 / 3, 15 / 3, 15 / 3])
    assert result.cases == {"cases": 4, "answerable": 3, "answered": 3, "missing": 0, "errors": 1}
    assert any("no case returned more than 3" in n for n in result.notes)
    out = result.to_dict()
    assert out["kind"] == "k-sweep" and out["schema_version"] == 1 and out["max_k"] == 4
    assert out["dataset"]["sha256"] == dataset.sha256 and out["policy"]["gain"] == "exponential"
    assert out["source"] == {} and out["families"] == ["R", "P"]
    assert schema_errors(json.loads(json.dumps(out))) == []


def test_families_are_checked_and_canonical(tiny: tuple[Path, Run]) -> None:
    golden, run = tiny
    result = sweep(load_dataset(golden), run, 2, Policy(), families=["recall", "ndcg", "R"])
    assert result.families == ("R", "nDCG") and set(result.rows[0]) == {"k", "R", "nDCG", "context_tokens"}
    with pytest.raises(MetricNameError, match="without a cut-off"):
        sweep(load_dataset(golden), run, 2, Policy(), families=["R@5"])
    with pytest.raises(MetricNameError):
        sweep(load_dataset(golden), run, 2, Policy(), families=["RPrec"])
    with pytest.raises(InputError, match="positive"):
        sweep(load_dataset(golden), run, 0, Policy())


def test_contents_come_from_the_corpus_when_the_run_has_none(tiny: tuple[Path, Run]) -> None:
    golden, run = tiny
    bare = Run(
        {cid: CaseRun([RankedItem(i.chunk_id) for i in c.items], c.error) for cid, c in run.cases.items()}
    )
    without = sweep(load_dataset(golden), bare, 2, Policy())
    assert all(r["context_tokens"] is None for r in without.rows)
    assert any("--corpus" in n for n in without.notes)
    partial = sweep(load_dataset(golden), bare, 2, Policy(), contents={"d1": "one two", "d4": "w"})
    assert partial.rows[0]["context_tokens"] == pytest.approx((2 + 1 + 0) / 3)
    assert partial.contents["items_without_content"] == 3
    assert any("3 of 5 retrieved items" in n and "lower bounds" in n for n in partial.notes)


@pytest.fixture(scope="module")
def bm25_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Run]:
    """A real report of the bm25 pipeline on the demo KB, and the run behind it."""
    dataset = load_dataset(KB / "golden.jsonl")
    prepared = prepare_pipeline(dataset, KB / "corpus.jsonl", preset("bm25"))
    run = asyncio.run(run_cases(prepared.pipeline.retriever, prepared.dataset.cases, 10, progress=False))
    result = evaluate(
        prepared.dataset, run, "R@5,P@5,R@10", context={"retrieval": {"top_k": 10}, **prepared.context()}
    )
    path = tmp_path_factory.mktemp("ks") / "bm25.json"
    result.write_json(path)
    return path, run


def test_a_report_sweep_reproduces_the_report_and_the_token_count(bm25_report: tuple[Path, Run]) -> None:
    path, run = bm25_report
    report = json.loads(path.read_text())
    result = sweep_report(path)  # dataset and corpus found through the report
    assert result.max_k == 10
    row5, row10 = result.rows[4], result.rows[9]
    assert row5["R"] == pytest.approx(report["metrics"]["R@5"], abs=1e-12)
    assert row5["P"] == pytest.approx(report["metrics"]["P@5"], abs=1e-12)
    assert row10["R"] == pytest.approx(report["metrics"]["R@10"], abs=1e-12)
    for k in (1, 5, 10):
        assert result.rows[k - 1]["context_tokens"] == pytest.approx(context_tokens(run, k))
    assert result.source["kind"] == "report" and result.source["pipeline"]["name"] == "bm25"
    assert result.contents["items_without_content"] == 0
    with pytest.raises(InputError, match="top 10 results per case"):
        sweep_report(path, max_k=11)


def test_executor_local_is_the_plain_sweep(
    bm25_report: tuple[Path, Run], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--executor local`` (the default) sweeps in this process: the same report, no executor in its
    provenance; the inputs are checked before any executor runs, so a bad --max-k is still exit 2."""
    path, _ = bm25_report
    outs = [tmp_path / "default.json", tmp_path / "local.json"]
    assert main(["k-sweep", str(path), "--out", str(outs[0])]) == 0
    assert main(["k-sweep", str(path), "--out", str(outs[1]), "--executor", "local"]) == 0
    default, local = (json.loads(p.read_text()) for p in outs)
    assert "executor" not in local["provenance"]
    for report in (default, local):
        report.pop("created_at")
    assert local == default
    on = sweep(*_inputs(path), families=("R",), executor=LocalExecutor())
    assert [r["R"] for r in on.rows] == [r["R"] for r in sweep_report(path, families=("R",)).rows]
    capsys.readouterr()
    assert main(["k-sweep", str(path), "--max-k", "11", "--executor", "local"]) == 2
    assert "top 10 results per case" in capsys.readouterr().err
    with pytest.raises(InputError, match="--max-k"):
        sweep(*_inputs(path)[:2], 0, Policy(), executor=LocalExecutor())


def _inputs(path: Path) -> tuple[Any, Run, int, Policy]:
    from ragaudit.experiments.k_sweep import run_from_report

    report = json.loads(path.read_text())
    run, _ = run_from_report(report)
    return load_dataset(KB / "golden.jsonl"), run, 10, Policy()


def test_a_report_from_a_chunked_pipeline_is_projected_again(tmp_path: Path) -> None:
    config = load_pipeline_file(write_lines(tmp_path / "chunks.toml", CHUNKED.splitlines()))
    dataset = load_dataset(KB / "golden.jsonl")
    prepared = prepare_pipeline(dataset, KB / "corpus.jsonl", config)
    run = asyncio.run(run_cases(prepared.pipeline.retriever, prepared.dataset.cases, 8, progress=False))
    context = {"retrieval": {"top_k": 8}, **prepared.context()}
    report = evaluate(prepared.dataset, run, "R@8,P@3", context=context)
    path = tmp_path / "chunks.json"
    report.write_json(path)
    result = sweep_report(path)
    assert result.rows[7]["R"] == pytest.approx(report.metrics["R@8"], abs=1e-12)
    assert result.rows[2]["P"] == pytest.approx(report.metrics["P@3"], abs=1e-12)
    assert result.rows[7]["context_tokens"] == pytest.approx(context_tokens(run, 8))

    moved = json.loads(path.read_text())
    moved["corpus"]["path"] = str(tmp_path / "gone.jsonl")
    (tmp_path / "moved.json").write_text(json.dumps(moved))
    with pytest.raises(InputError, match="recursive chunking") as caught:
        sweep_report(tmp_path / "moved.json")
    assert "--corpus" in str(caught.value)
    again = sweep_report(tmp_path / "moved.json", corpus=str(KB / "corpus.jsonl"))
    assert again.rows == result.rows


def test_a_report_refuses_another_dataset(bm25_report: tuple[Path, Run], tmp_path: Path) -> None:
    path, _ = bm25_report
    other = write_lines(
        tmp_path / "g.jsonl", [json.dumps({"id": "x", "query": "q", "relevant_chunk_ids": ["d"]})]
    )
    with pytest.raises(InputError, match="not the dataset"):
        sweep_report(path, dataset=str(other))
    (tmp_path / "compare.json").write_text(json.dumps({"kind": "compare", "comparisons": []}))
    with pytest.raises(InputError, match="not a ragaudit eval report"):
        sweep_report(tmp_path / "compare.json")


def test_run_files_with_and_without_chunking(tmp_path: Path) -> None:
    dataset = load_dataset(KB / "golden.jsonl")
    corpus = load_corpus(KB / "corpus.jsonl")
    config = load_pipeline_file(write_lines(tmp_path / "chunks.toml", CHUNKED.splitlines()))
    prepared = prepare_pipeline(dataset, corpus, config)
    run = asyncio.run(run_cases(prepared.pipeline.retriever, prepared.dataset.cases, 5, progress=False))
    expected = evaluate(prepared.dataset, run, "R@5")
    ids_only = Run({cid: CaseRun([RankedItem(i.chunk_id) for i in c.items]) for cid, c in run.cases.items()})
    result = sweep_run(ids_only, dataset, Policy(), corpus=corpus, chunking=parse_chunking("recursive:48:8"))
    assert result.rows[4]["R"] == pytest.approx(expected.metrics["R@5"], abs=1e-12)
    assert result.rows[4]["context_tokens"] == pytest.approx(context_tokens(run, 5))
    with pytest.raises(InputError, match="needs the corpus"):
        sweep_run(ids_only, dataset, Policy(), chunking=parse_chunking("recursive:48:8"))
    for bad in ("recursive:x", "a:1:2:3", ""):
        with pytest.raises(InputError, match="cannot read"):
            parse_chunking(bad)
    with pytest.raises(Exception, match="strategy"):
        parse_chunking("paragraphs:10")


def test_cli_sweeps_a_trec_run_with_a_corpus(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    golden = write_lines(
        tmp_path / "g.jsonl",
        [json.dumps({"id": "q1", "query": "q", "tenant_id": "t", "relevant_chunk_ids": ["d2"]})],
    )
    corpus = write_lines(
        tmp_path / "c.jsonl",
        [
            json.dumps({"doc_id": "d1", "tenant_id": "t", "text": "alpha beta"}),
            json.dumps({"doc_id": "d2", "tenant_id": "t", "text": "gamma"}),
        ],
    )
    trec = write_lines(tmp_path / "run.trec", ["q1 Q0 d1 1 2.0 x", "q1 Q0 d2 2 1.0 x"])
    out = tmp_path / "sweep.json"
    code = main(
        ["k-sweep", "--run", str(trec), "--dataset", str(golden), "--corpus", str(corpus), "--out", str(out)]
    )
    assert code == 0
    rows = json.loads(out.read_text())["rows"]
    assert [(r["k"], r["R"], r["P"], r["context_tokens"]) for r in rows] == [
        (1, 0.0, 0.0, 2.0),
        (2, 1.0, 0.5, 3.0),
    ]
    assert "tokens" in capsys.readouterr().out


def test_cli_usage_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["k-sweep"]) == 2
    assert "either a report or --run" in capsys.readouterr().err
    assert main(["k-sweep", "--run", "r.trec"]) == 2
    assert "--dataset" in capsys.readouterr().err
    assert main(["k-sweep", str(tmp_path / "missing.json")]) == 2
    assert "report not found" in capsys.readouterr().err


def test_a_sweep_of_a_failed_run_fails(
    tiny: tuple[Path, Run], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Case c timed out (scored 0 at every k): the sweep is printed, but it is no passing run."""
    golden, run = tiny
    report = tmp_path / "tiny.json"
    evaluate(golden, run, "R@3").write_json(report)
    assert main(["k-sweep", str(report)]) == 1
    assert f"FAILED report {report}: 1 of 4 cases failed (25.0%" in capsys.readouterr().err
    assert main(["k-sweep", str(report), "--max-error-rate", "0.25"]) == 0
    trec = write_lines(tmp_path / "run.trec", ["a Q0 d1 1 2.0 x", "u Q0 d5 1 1.0 x"])  # b and c missing
    assert main(["k-sweep", "--run", str(trec), "--dataset", str(golden)]) == 1
    err = capsys.readouterr().err
    assert "2 of 4 cases failed" in err and "b: missing" in err
