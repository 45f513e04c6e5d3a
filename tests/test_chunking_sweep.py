"""Chunking sweep: span-scored grid points on the demo knowledge base, label checks, BEIR spans, CLI."""

from __future__ import annotations

import asyncio
import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from conftest import KB, write_lines
from ragaudit.cli.main import main
from ragaudit.corpus.chunkers import chunk_corpus, make_chunker
from ragaudit.corpus.loading import Corpus, load_corpus
from ragaudit.corpus.model import Document
from ragaudit.corpus.projection import group_by_doc, span_split_count
from ragaudit.data.loading import load_dataset
from ragaudit.data.schema import Dataset, Evidence, GoldenCase
from ragaudit.errors import InputError, ValidationError
from ragaudit.evaluation.live import RunOptions
from ragaudit.experiments.chunking_sweep import (
    SweepResult,
    chunking_grid,
    load_span_dataset,
    require_span_labels,
    sweep_chunking,
    trim_evidence,
)
from ragaudit.metrics.names import parse_metrics
from ragaudit.metrics.policy import Policy
from ragaudit.pipelines.config import ChunkingConfig, preset
from ragaudit.report.terminal import render_terminal

SPECS = parse_metrics("R@5,nDCG@10")


def reject(constant: str) -> None:
    raise ValueError(f"{constant} is not JSON")


def sweep(
    dataset: Dataset, corpus: Corpus, grid: list[ChunkingConfig], pipeline: str = "bm25"
) -> SweepResult:
    return asyncio.run(
        sweep_chunking(
            dataset,
            corpus,
            preset(pipeline),
            grid,
            SPECS,
            Policy(),
            RunOptions(top_k=10, progress=False),
            context_k=5,
            resamples=1000,
        )
    )


@pytest.fixture(scope="module")
def demo() -> tuple[Dataset, Corpus]:
    return load_dataset(KB / "golden.jsonl"), load_corpus(KB / "corpus.jsonl")


@pytest.fixture(scope="module")
def demo_sweep(demo: tuple[Dataset, Corpus]) -> SweepResult:
    grid, skipped = chunking_grid(["fixed", "recursive"], [32, 128], [0])
    assert skipped == []
    return sweep(*demo, grid)


def test_grid_crosses_strategies_sizes_and_overlaps_and_skips_overlap_not_below_size() -> None:
    grid, skipped = chunking_grid(["whole", "fixed", "sentence"], [32, 64], [0, 32])
    assert [(c.strategy, c.size, c.overlap) for c in grid] == [
        ("whole", 256, 0),
        ("fixed", 32, 0),
        ("fixed", 64, 0),
        ("fixed", 64, 32),
        ("sentence", 32, 0),
        ("sentence", 64, 0),
        ("sentence", 64, 32),
    ]
    assert skipped == [
        "fixed-32-32: overlap 32 is not below size 32",
        "sentence-32-32: overlap 32 is not below size 32",
    ]
    with pytest.raises(InputError, match="unknown strategy 'semantic'"):
        chunking_grid(["semantic"], [64], [0])
    with pytest.raises(InputError, match="grid is empty"):
        chunking_grid(["fixed"], [16], [16])


def test_each_point_is_scored_on_its_own_chunks(
    demo: tuple[Dataset, Corpus], demo_sweep: SweepResult
) -> None:
    dataset, corpus = demo
    assert [p.name for p in demo_sweep.points] == [
        "fixed-32-0",
        "fixed-128-0",
        "recursive-32-0",
        "recursive-128-0",
    ]
    for point in demo_sweep.points:
        c = point.chunking
        chunks = chunk_corpus(corpus, make_chunker(c.strategy, c.size, c.overlap))
        assert point.index["chunks"] == len(chunks)
        by_doc = group_by_doc(chunks)
        assert point.spans["split"] == sum(span_split_count(case, by_doc) for case in dataset.cases)
        assert point.spans["spans"] == sum(len(case.evidence) for case in dataset.cases)
        assert point.result.counts.answerable == 75 and point.result.counts.unanswerable == 9
        assert point.index["embed_seconds"] is None  # BM25 embeds nothing
        assert 0.0 < point.tokens.precision <= point.tokens.recall <= 1.0
        assert point.tokens.iou <= min(point.tokens.precision, point.tokens.recall)
    small, large = demo_sweep.points[0], demo_sweep.points[1]
    # small windows split more evidence and hold less irrelevant text around it
    assert small.spans["split"] > large.spans["split"]
    assert small.tokens.precision > large.tokens.precision
    assert small.index["mean_chunk_tokens"] < large.index["mean_chunk_tokens"]


def test_projected_labels_give_the_span_grade_to_every_overlapping_chunk(
    demo: tuple[Dataset, Corpus], demo_sweep: SweepResult
) -> None:
    dataset, _ = demo
    case = next(c for c in dataset.cases if c.id == "acme-pricing-001")
    point = demo_sweep.points[0]
    per_case = next(r for r in point.result.per_case if r.id == case.id)
    for record in per_case.retrieved:
        if record.relevant:
            assert record.chunk_id.startswith("acme-pricing-professional-v3#")
            assert record.grade == 3


def test_artifact_and_significance_against_the_best_point(demo_sweep: SweepResult) -> None:
    report = demo_sweep.to_dict()
    assert report["kind"] == "chunking-sweep" and report["schema_version"] == 1
    for key in ("ragaudit_version", "created_at", "dataset", "policy", "corpus", "pipeline", "points"):
        assert key in report
    config = report["pipeline"]["config"]  # the pipeline without its chunking, which the grid replaces
    assert "chunking" not in config and config["retriever"]["type"] == "bm25"
    best = max(demo_sweep.points, key=lambda p: p.result.metrics["R@5"])
    assert report["best"] == best.name and report["primary_metric"] == "R@5"
    assert {c["system"] for c in report["comparisons"]} == {p.name for p in demo_sweep.points} - {best.name}
    for row in report["points"]:
        assert set(row["token_level"]) == {"k", "precision", "recall", "iou"}
        assert (row["versus_best"] is None) == (row["name"] == best.name)
    # fixed 32-token windows lose a lot of chunk-level recall: significant after Holm correction
    assert next(p for p in report["points"] if p["name"] == "fixed-32-0")["versus_best"]["significant"]
    assert "(best)" in render_terminal(demo_sweep.to_dict())


# ------------------------------------------------------------------------------------------ labels


def test_chunk_id_labels_alone_get_an_error_naming_the_span_labels_needed(tmp_path: Path) -> None:
    golden = write_lines(
        tmp_path / "golden.jsonl",
        [
            json.dumps({"id": "q0", "query": "anything", "tenant_id": "acme", "relevant_chunk_ids": []}),
            json.dumps(
                {
                    "id": "q1",
                    "query": "refund window",
                    "tenant_id": "acme",
                    "relevant_chunk_ids": ["acme-faq-api"],
                }
            ),
        ],
    )
    corpus = load_corpus(KB / "corpus.jsonl")
    with pytest.raises(InputError) as err:
        require_span_labels(load_dataset(golden), corpus)
    message = str(err.value)
    assert message.startswith(f"{golden}:2:")
    assert "no case has evidence spans" in message and '"evidence"' in message and "import beir" in message


def test_spans_outside_the_corpus_are_listed_with_their_lines(demo: tuple[Dataset, Corpus]) -> None:
    dataset, corpus = demo
    first, second = dataset.cases[0], dataset.cases[1]
    broken = replace(
        dataset,
        cases=(
            replace(first, evidence=(Evidence("no-such-doc", 0, 10, 3),)),
            replace(second, evidence=(Evidence(second.evidence[0].doc_id, 5, 10**6, 3),)),
        ),
    )
    with pytest.raises(ValidationError) as err:
        require_span_labels(broken, corpus)
    problems = [str(p) for p in err.value.problems]
    assert len(problems) == 2
    assert problems[0].startswith(f"{dataset.path}:1:") and "no-such-doc" in problems[0]
    assert problems[1].startswith(f"{dataset.path}:2:") and "outside document" in problems[1]


def test_dense_sweep_embeds_an_unchanged_chunk_text_only_once() -> None:
    text = "The refund window is 30 days. " * 3 + "Hardware carries a 24 month warranty."
    docs = tuple(Document(f"d{i}", "t", text.replace("30", str(30 + i))) for i in range(3))
    corpus = Corpus(docs, "<memory>", f"sha-{text}")
    case = GoldenCase("q", "refund window", ("d0",), tenant_id="t", evidence=(Evidence("d0", 0, 29, 3),))
    dataset = Dataset((case,), "<memory>", "sha", "jsonl")
    result = sweep(dataset, corpus, [ChunkingConfig("whole"), ChunkingConfig("fixed", 512, 0)], "dense")
    whole, fixed = (p.index for p in result.points)
    assert whole["embedded_texts"] + whole["cached_texts"] == 3
    assert fixed["embedded_texts"] == 0 and fixed["cached_texts"] == 3  # same texts: read from the cache
    assert whole["vector_bytes"] == 3 * 384 * 4
    assert result.points[0].result.metrics["R@5"] == 1.0


# ------------------------------------------------------------------------------------------ BEIR and CLI


def test_beir_folder_gets_whole_document_spans_and_sweeps(beir_root: Path) -> None:
    folder = beir_root / "business-reports"
    corpus = load_corpus(folder)
    dataset = load_span_dataset(folder, "auto", "test", 1, corpus)
    answerable = [c for c in dataset.cases if c.is_answerable()]
    assert answerable and all(c.evidence for c in answerable)
    span = answerable[0].evidence[0]
    assert (span.start, span.end) == (0, len(corpus.by_id[span.doc_id].text))
    result = sweep(dataset, corpus, [ChunkingConfig("whole"), ChunkingConfig("fixed", 64, 0)])
    whole, fixed = result.points
    assert whole.spans["split"] == 0 and fixed.spans["split"] > 0
    assert not math.isnan(fixed.tokens.iou)


def test_cli_sweep_writes_the_artifact(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sweep.json"
    code = main(
        [
            "sweep-chunking",
            "--dataset",
            str(KB / "golden.jsonl"),
            "--corpus",
            str(KB / "corpus.jsonl"),
            "--strategies",
            "sentence,whole",
            "--sizes",
            "64",
            "--overlaps",
            "0,64",
            "--metrics",
            "R@5",
            "--resamples",
            "500",
            "--no-progress",
            "--out",
            str(out),
        ]
    )
    text = capsys.readouterr().out
    assert code == 0 and "sentence-64-0" in text and "skipped sentence-64-64" in text
    report = json.loads(out.read_text(), parse_constant=reject)  # strict JSON: no NaN
    assert [p["name"] for p in report["points"]] == ["sentence-64-0", "whole"]
    assert report["provenance"]["dataset_sha256"] == report["dataset"]["sha256"]
    assert report["provenance"]["corpus_sha256"] == report["corpus"]["sha256"]
    assert report["skipped"] == ["sentence-64-64: overlap 64 is not below size 64"]


def test_cli_refuses_chunk_id_labels_and_bad_sizes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    golden = write_lines(
        tmp_path / "golden.jsonl",
        [
            json.dumps(
                {"id": "q1", "query": "refund", "tenant_id": "acme", "relevant_chunk_ids": ["acme-faq-api"]}
            )
        ],
    )
    common = ["sweep-chunking", "--corpus", str(KB / "corpus.jsonl"), "--out", str(tmp_path / "s.json")]
    assert main([*common, "--dataset", str(golden)]) == 2
    err = capsys.readouterr().err
    assert f"{golden}:1" in err and "evidence" in err and "Traceback" not in err
    assert main([*common, "--dataset", str(KB / "golden.jsonl"), "--sizes", "64,big"]) == 2
    assert "--sizes" in capsys.readouterr().err


def test_whitespace_at_span_ends_is_trimmed_so_an_unsplit_document_is_not_counted_split() -> None:
    text = "  Refunds are possible within 30 days.\n\nHardware is covered for two years.\n"
    corpus = Corpus((Document("d", "t", text),), "<memory>", "sha-ws")
    whole_doc = Evidence("d", 0, len(text), 1)
    case = GoldenCase("q", "refund window", ("d",), tenant_id="t", evidence=(whole_doc,))
    dataset = Dataset((case,), "<memory>", "sha", "jsonl")
    (span,) = trim_evidence(dataset, corpus).cases[0].evidence
    assert text[span.start : span.end] == text.strip() and span.grade == 1
    result = sweep(dataset, corpus, [ChunkingConfig("recursive", 512, 0), ChunkingConfig("fixed", 8, 0)])
    one_chunk, windows = result.points
    assert one_chunk.spans == {"spans": 1, "split": 0, "split_rate": 0.0}
    assert one_chunk.tokens.recall == 1.0 and windows.spans["split"] == 1
