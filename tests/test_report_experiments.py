"""``ragaudit report`` on the experiment kinds, from real artifacts made on the demo KB (BM25, few
resamples): ablation (variants and the remove-one / add-one gains), reranker-eval (an LLM reranker on
the local OpenAI-compatible stub), rewrite-eval (an LLM rewrite that loses and swaps entities, with
hostile text) and chunking-sweep (its grid in the provenance)."""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from conftest import KB
from openai_stub import OpenAIStub
from ragaudit.artifacts.envelope import schema_errors
from ragaudit.cli.main import main
from ragaudit.corpus.loading import Corpus, load_corpus
from ragaudit.data.loading import load_dataset
from ragaudit.data.schema import Dataset
from ragaudit.evaluation.live import RunOptions
from ragaudit.experiments.ablation import run_ablation
from ragaudit.experiments.chunking_sweep import chunking_grid, sweep_chunking
from ragaudit.experiments.reranker_eval import evaluate_reranker
from ragaudit.experiments.rewrite_eval import evaluate_rewrite, rewrite_stage
from ragaudit.metrics.names import parse_metrics
from ragaudit.metrics.policy import Policy
from ragaudit.pipelines.config import parse_pipeline, preset
from ragaudit.report.html import render_html
from ragaudit.report.markdown import render_markdown
from ragaudit.report.view import build_view

SPECS = parse_metrics("nDCG@10,R@5")
OPTIONS = RunOptions(top_k=10, progress=False)
RESAMPLES = 200
HOSTILE = "<script>document.title='pwned'</script> | API call limit per month"
REWRITES = {
    "pro plan api limit how much?": HOSTILE,  # loses "pro"
    "Can we get SSO on the Professional plan?": "Can we get SSO on the Enterprise plan?",  # a swap
}
ENVELOPE_KEYS = ["schema_version", "kind", "ragaudit_version", "created_at", "provenance"]


def reject(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


def _query(body: dict[str, Any]) -> str:
    prompt = "\n".join(str(m.get("content", "")) for m in body["messages"])
    found: list[str] = re.findall(r"Query: (.*)", prompt)
    return found[-1].strip()


def rewrite(body: dict[str, Any]) -> str:
    query = _query(body)
    return REWRITES.get(query, query)


def judge(body: dict[str, Any]) -> str:
    """A deterministic relevance grade: how many longer words of the query the passage shares (0-3)."""
    prompt = "\n".join(str(m.get("content", "")) for m in body["messages"])
    words = set(re.findall(r"[a-z]{4,}", _query(body).lower()))
    passage = prompt.split("Passage:", 1)[-1].lower()
    return str(min(3, sum(1 for w in words if w in passage)))


def pricing_and_refunds(dataset: Dataset, tenant: str = "") -> Dataset:
    """The pricing and refund cases of the demo set (28; 10 of one tenant): every LLM round trip costs."""
    pattern = rf"^{tenant or '[a-z]+'}-(pricing|refund)-"
    return replace(dataset, cases=tuple(c for c in dataset.cases if re.match(pattern, c.id)))


def _artifacts(folder: Path, dataset: Dataset, corpus: Corpus) -> dict[str, Path]:
    out = {name: folder / f"{name}.json" for name in ("ablation", "reranker", "rewrite", "sweep")}
    base = parse_pipeline(
        {
            "name": "two-bm25-rm3",
            "retriever": {
                "type": "hybrid",
                "components": [{"type": "bm25"}, {"type": "bm25", "k1": 0.9, "b": 0.4}],
            },
            "rewrite": {"type": "rm3"},
        }
    )
    ablation = run_ablation(
        dataset, corpus, base, ["rewrite", "hybrid"], SPECS, Policy(), OPTIONS, resamples=RESAMPLES
    )
    asyncio.run(ablation).write_json(out["ablation"])
    subset = pricing_and_refunds(dataset)
    with OpenAIStub(responder=judge) as stub:
        rerank = {"type": "llm", "base_url": stub.base_url, "model": "stub", "top_n": 3}
        config = parse_pipeline({"name": "bm25-llm", "retriever": {"type": "bm25"}, "rerank": rerank})
        reranked = evaluate_reranker(
            pricing_and_refunds(dataset, "acme"),
            corpus,
            config,
            SPECS,
            Policy(),
            resamples=RESAMPLES,
            progress=False,
        )
        asyncio.run(reranked).write_json(out["reranker"])
    with OpenAIStub(responder=rewrite) as stub:
        stage = rewrite_stage({"type": "llm", "base_url": stub.base_url, "model": "stub"}, "test")
        options = RunOptions(top_k=10, concurrency=4, progress=False)
        rewritten = evaluate_rewrite(
            subset, corpus, preset("bm25"), stage, SPECS, Policy(), options, resamples=RESAMPLES
        )
        asyncio.run(rewritten).write_json(out["rewrite"])
    grid, _ = chunking_grid(["fixed"], [64, 128], [0])
    swept = sweep_chunking(
        dataset, corpus, preset("bm25"), grid, SPECS, Policy(), OPTIONS, resamples=RESAMPLES
    )
    asyncio.run(swept).write_json(out["sweep"])
    return out


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("experiments")
    return _artifacts(folder, load_dataset(KB / "golden.jsonl"), load_corpus(KB / "corpus.jsonl"))


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"), parse_constant=reject)
    return data


def markdown(path: Path) -> str:
    return render_markdown(build_view(load(path)))


def html(path: Path) -> str:
    return render_html(build_view(load(path)))


def sections(page: str) -> list[str]:
    return re.findall(r'<section id="([^"]+)"', page)


def row(text: str, start: str) -> list[str]:
    """The cells of the Markdown table line starting with ``start``."""
    line = next(line for line in text.splitlines() if line.startswith(start))
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]]


def test_every_artifact_is_strict_json_with_the_shared_envelope(artifacts: dict[str, Path]) -> None:
    kinds = {
        "ablation": "ablation",
        "reranker": "reranker-eval",
        "rewrite": "rewrite-eval",
        "sweep": "chunking-sweep",
    }
    for name, path in artifacts.items():
        report = load(path)  # refuses NaN / Infinity
        assert list(report)[:5] == ENVELOPE_KEYS and report["kind"] == kinds[name]
        prov = report["provenance"]
        assert prov["dataset_sha256"] == report["dataset"]["sha256"] and prov["policy_version"] == 1
        assert prov["pipeline"] is not None and prov["environment"]["packages"]
        assert schema_errors(report) == []


def test_ablation_sections_show_the_gains_of_each_toggle(artifacts: dict[str, Path]) -> None:
    report = load(artifacts["ablation"])
    gains = {(g["analysis"], g["metric"]): g for g in report["gains"] if g["toggle"] == "rewrite"}
    text = markdown(artifacts["ablation"])
    assert text.startswith("### ragaudit ablation: components of two-bm25-rm3 on golden.jsonl")
    ci = r"\d+\.\d+% CI \(Bonferroni 1-α/m\)"  # the delta's CI is adjusted like its Holm p
    assert re.search(
        rf"\| toggle \| metric \| remove-one Δ \| {ci} \| p \(Holm\) \| add-one Δ \| {ci} \|", text
    )
    cells = row(text, "| rewrite | nDCG@10 |")
    for offset, analysis in ((2, "remove-one"), (5, "add-one")):
        gain = gains[(analysis, "nDCG@10")]
        assert cells[offset].strip("*\\") == f"{gain['delta']:+.4f}"
        assert cells[offset + 1] == f"\\[{gain['ci'][0]:+.4f}, {gain['ci'][1]:+.4f}\\]"
        assert cells[offset + 2] == f"{gain['p_value_corrected']:.3f}"
    assert gains[("remove-one", "nDCG@10")]["delta"] != gains[("add-one", "nDCG@10")]["delta"]
    assert "across all 8 gains" in text
    assert row(text, "| bare-plus-rewrite (= full-minus-hybrid) |")[1] == "rewrite"
    assert "every variant scored the same 84 cases (75 answerable)" in text
    assert "| **pipeline** | two-bm25-rm3 (config sha256 " in text
    page = html(artifacts["ablation"])
    assert sections(page) == ["ablation", "provenance"]
    assert page.count('<circle class="pt') == len(report["gains"]) == 8
    assert "rewrite · remove · nDCG@10" in page and "<h3>Variants</h3>" in page


def test_reranker_sections_show_before_after_oracle_and_latency(artifacts: dict[str, Path]) -> None:
    report = load(artifacts["reranker"])
    assert report["reranker"] == "llm:stub" and report["top_n"] == 3
    text = markdown(artifacts["reranker"])
    assert text.startswith("### ragaudit reranker-eval: llm:stub in bm25-llm on golden.jsonl")
    ci = r"\d+\.?\d*% CI( \(Bonferroni 1-α/m\))?"
    assert re.search(
        rf"\| metric \| before \| after \| delta \| {ci} \| p \(Holm\) \| W/T/L \| oracle \| captured \|",
        text,
    )
    for summary in report["summary"]:
        cells = row(text, f"| {summary['metric']} |")
        assert cells[1:3] == [f"{summary['before']:.4f}", f"{summary['after']:.4f}"]
        assert cells[7] == f"{summary['ceiling']:.4f}"
        captured = summary["headroom_captured"]
        assert cells[8] == ("–" if captured is None else f"{captured:.1%}")  # one percentage format
    assert f"first-stage R@3 = {report['first_stage_recall']['value']:.4f}" in text
    assert re.search(r"latency ms: first stage p50 [\d.]+ p95 [\d.]+; the reranker adds p50", text)
    page = html(artifacts["reranker"])
    assert sections(page) == ["summary", "reranker", "provenance"]  # the notes are the kind's own
    assert text.count("nDCG@10 looks past the 3 reranked candidates") == 1  # the notes, once
    assert "nDCG@10 looks past the 3 reranked candidates" in page
    assert ">oracle</text>" in page and page.count('<circle class="pt') == len(report["summary"])
    assert "the reranker adds p50" in page


def test_rewrite_sections_flag_lost_and_swapped_entities_escaped(artifacts: dict[str, Path]) -> None:
    report = load(artifacts["rewrite"])
    assert report["constraints"]["flagged"] == 4  # two queries, each asked in two tenants of the subset
    text = markdown(artifacts["rewrite"])
    ci = r"\d+\.?\d*% CI of Δ( \(Bonferroni 1-α/m\))?"
    assert re.search(rf"\| metric \| baseline \| rewrite \| delta \| {ci} \| p \(Holm\) \| W/T/L \|", text)
    assert row(text, "| R@5 |")[1] == f"{report['metrics']['baseline']['R@5']:.4f}"
    assert "**❌ constraint preservation: FAIL**: 4 rewrite(s) that lost an entity or constraint" in text
    assert "flagged rewrites (4)" in text
    lost = next(line for line in text.splitlines() if line.startswith("- FLAG acme-pricing-002"))
    assert "&lt;script&gt;document.title='pwned'&lt;/script&gt; \\| API call limit" in lost
    assert "lost entity 'pro'" in lost
    swapped = next(line for line in text.splitlines() if line.startswith("- FLAG initech-pricing-006"))
    assert "swapped 'Professional' -&gt; 'Enterprise'" in swapped
    assert "<script>" not in text
    page = html(artifacts["rewrite"])
    assert sections(page) == ["rewrite", "provenance"]
    assert "&lt;script&gt;document.title=&#x27;pwned&#x27;&lt;/script&gt;" in page
    assert "<script>document" not in page and "flagged rewrites (4)" in page
    assert "swapped &#x27;Professional&#x27; -&gt; &#x27;Enterprise&#x27;" in page


def test_chunking_sweep_provenance_shows_the_grid(artifacts: dict[str, Path]) -> None:
    text = markdown(artifacts["sweep"])
    assert "chunking ?" not in text
    pipeline = row(text, "| **pipeline** |")[1]
    assert "chunking swept over 2 configurations: fixed × size 64, 128 × overlap 0" in pipeline
    assert re.search(r"; \d+–\d+ chunks; best fixed-(64|128)-0\)$", pipeline)
    assert "chunking swept over 2 configurations" in html(artifacts["sweep"])


def test_cli_renders_every_experiment(
    artifacts: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, path in artifacts.items():
        for fmt in ("md", "html"):
            out = tmp_path / f"{name}.{fmt}"
            assert main(["report", str(path), "--format", fmt, "--out", str(out)]) == 0
            assert out.stat().st_size > 1000
    assert "report written" in capsys.readouterr().err
