"""Ablation: variants derived from one configuration, invariants verified, gains tested and corrected."""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path
from typing import Any

import pytest

from conftest import KB, write_lines
from ragaudit.cli.main import main
from ragaudit.corpus.loading import load_corpus
from ragaudit.data.loading import load_dataset
from ragaudit.errors import InputError
from ragaudit.evaluation.live import RunOptions
from ragaudit.experiments.ablation import (
    AblationResult,
    applicable_toggles,
    check_invariants,
    check_toggles,
    plan_variants,
    run_ablation,
)
from ragaudit.metrics.names import parse_metrics
from ragaudit.metrics.policy import Policy
from ragaudit.pipelines.config import parse_pipeline, preset
from ragaudit.report.terminal import render_terminal
from ragaudit.stats.correction import holm_bonferroni

# a hybrid with a rerank stage (planning only: nothing is built)
RERANKED = parse_pipeline(
    {
        "name": "hybrid-bi-encoder",
        "retriever": {"type": "hybrid", "components": [{"type": "bm25"}, {"type": "dense"}]},
        "rerank": {"type": "bi-encoder", "top_n": 30},
    }
)

# two BM25 variants fused: a hybrid retriever that needs no embedding model, so the test stays fast
TWO_BM25 = """\
name = "two-bm25-rm3"
[retriever]
type = "hybrid"
components = [{ type = "bm25" }, { type = "bm25", k1 = 0.9, b = 0.4 }]
[rewrite]
type = "rm3"
"""


def schema_errors(report: dict[str, Any]) -> list[str]:
    """The report schema's complaints about ``report`` (the shared envelope every kind carries)."""
    pytest.importorskip("jsonschema")
    artifact = pytest.importorskip("ragaudit.artifacts.envelope")
    errors: list[str] = artifact.schema_errors(report)
    return errors


def test_variants_of_a_reranked_hybrid() -> None:
    base = RERANKED
    assert applicable_toggles(base) == ("rerank", "hybrid")
    variants = {v.name: v for v in plan_variants(base, ("rerank", "hybrid"))}
    assert list(variants) == [
        "full",
        "full-minus-rerank",
        "full-minus-hybrid",
        "bare",
        "bare-plus-rerank",
        "bare-plus-hybrid",
    ]
    assert variants["full"].config.sha256() == base.sha256()
    assert variants["full-minus-hybrid"].config.retriever.to_dict() == {"type": "bm25"}
    assert variants["full-minus-hybrid"].config.rerank == base.rerank
    assert variants["bare"].config.rerank is None and variants["bare"].config.retriever.type == "bm25"
    assert variants["bare-plus-rerank"].same_as == "full-minus-hybrid"
    assert variants["bare-plus-hybrid"].same_as == "full-minus-rerank"
    assert variants["full"].same_as is None and variants["bare"].same_as is None


def test_a_learned_stage_keeps_its_hybrid() -> None:
    learned = preset("hybrid-rerank:fusion.json")
    assert applicable_toggles(learned) == ("rerank",)
    for toggle in ("hybrid", "dense", "bm25"):
        with pytest.raises(InputError, match="learned rerank stage reads the bm25 \\+ dense hybrid"):
            check_toggles(learned, ["rerank", toggle])


def test_component_toggles_keep_weights_with_their_components() -> None:
    base = parse_pipeline(
        {
            "name": "three",
            "retriever": {
                "type": "hybrid",
                "method": "weighted",
                "weights": [1.0, 2.0, 3.0],
                "components": [{"type": "bm25"}, {"type": "dense"}, {"type": "bm25", "k1": 0.9}],
            },
        }
    )
    variants = {v.name: v for v in plan_variants(base, ("dense",))}
    bare = variants["bare"].config.retriever.to_dict()
    assert bare["weights"] == [1.0, 3.0] and [c["type"] for c in bare["components"]] == ["bm25", "bm25"]
    assert bare["method"] == "weighted"
    only_dense = {v.name: v for v in plan_variants(base, ("bm25",))}["bare"].config.retriever
    assert only_dense.to_dict() == {"type": "dense"}
    with pytest.raises(InputError, match="without a first-stage retriever"):
        check_toggles(preset("hybrid"), ["bm25", "dense"])


def test_bad_toggles_are_refused_with_a_fix() -> None:
    with pytest.raises(InputError, match="unknown toggle 'chunking'") as unknown:
        check_toggles(RERANKED, ["chunking"])
    assert "rewrite, rerank, hybrid, bm25, dense" in str(unknown.value)
    with pytest.raises(InputError, match="no \\[rerank\\] table") as absent:
        check_toggles(preset("bm25"), ["rerank"], "base.toml")
    assert str(absent.value).startswith("base.toml") and "drop --toggle rerank" in str(absent.value)
    with pytest.raises(InputError, match="no hybrid retriever"):
        check_toggles(preset("dense"), ["hybrid"])
    with pytest.raises(InputError, match="nothing to ablate"):
        check_toggles(preset("bm25"), [])
    assert check_toggles(RERANKED, ["Rerank", " hybrid", "rerank"]) == ("rerank", "hybrid")


def _report(ids: list[str], tenants: dict[str, str], top_k: int = 10) -> dict[str, Any]:
    return {
        "dataset": {"sha256": "abc"},
        "policy": {"gain": "exponential"},
        "retrieval": {"top_k": top_k},
        "per_case": [{"id": i, "tenant_id": tenants.get(i, "acme"), "answerable": i != "u"} for i in ids],
    }


def test_invariants_are_checked_and_a_broken_table_is_refused() -> None:
    good = _report(["a", "b", "u"], {})
    facts = check_invariants({"full": good, "bare": copy.deepcopy(good)})
    assert facts["cases"] == 3 and facts["answerable"] == 2 and facts["top_k"] == 10
    assert facts["tenants"] == ["acme"] and facts["same_for_every_variant"]
    assert facts["checked"] == ["dataset", "policy", "case ids", "tenants", "answerable cases", "top_k"]
    broken = {
        "case ids": _report(["a", "b", "c", "u"], {}),
        "tenants": _report(["a", "b", "u"], {"b": "globex"}),
        "top_k": _report(["a", "b", "u"], {}, top_k=5),
    }
    for what, other in broken.items():
        with pytest.raises(InputError, match=f"{what} differ from variant full's") as caught:
            check_invariants({"full": good, "bare": other})
        assert str(caught.value).startswith("variant bare")
    unanswerable = copy.deepcopy(good)
    unanswerable["per_case"][0]["answerable"] = False
    with pytest.raises(InputError, match="answerable cases differ"):
        check_invariants({"full": good, "bare": unanswerable})


@pytest.fixture(scope="module")
def ablation(tmp_path_factory: pytest.TempPathFactory) -> tuple[AblationResult, Path]:
    folder = tmp_path_factory.mktemp("ablation")
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
    result = asyncio.run(
        run_ablation(
            load_dataset(KB / "golden.jsonl"),
            load_corpus(KB / "corpus.jsonl"),
            base,
            ["rewrite", "hybrid"],
            parse_metrics("nDCG@10,R@5,MRR@10"),
            Policy(),
            RunOptions(top_k=10, progress=False),
            resamples=2000,
            report_dir=folder,
        )
    )
    return result, folder


def test_gains_are_paired_differences_corrected_together(ablation: tuple[AblationResult, Path]) -> None:
    result, _ = ablation
    means = {name: o.result.metrics for name, o in result.outcomes.items()}
    assert len(result.gains) == 2 * 2 * 3
    for gain in result.gains:
        c, t = gain.comparison, gain.toggle
        with_, without = (
            ("full", f"full-minus-{t}") if gain.analysis == "remove-one" else (f"bare-plus-{t}", "bare")
        )
        assert (c.system, c.baseline) == (with_, without)
        assert c.delta == pytest.approx(means[with_][c.metric] - means[without][c.metric], abs=1e-12)
        assert c.n == 75  # the answerable cases, paired
    raw = [g.comparison.p_value for g in result.gains]
    assert [g.comparison.p_value_corrected for g in result.gains] == pytest.approx(holm_bonferroni(raw))
    assert all(g.comparison.significant == (g.comparison.p_value_corrected < 0.05) for g in result.gains)
    rewrite = [g for g in result.gains if g.toggle == "rewrite" and g.comparison.metric == "nDCG@10"]
    assert all(g.comparison.delta > 0 for g in rewrite)  # RM3 helps BM25 on the demo KB, both ways


def test_variants_share_evaluations_and_the_artifact_states_invariants(
    ablation: tuple[AblationResult, Path],
) -> None:
    result, folder = ablation
    assert result.outcomes["bare-plus-rewrite"] is result.outcomes["full-minus-hybrid"]
    assert sorted(p.name for p in folder.iterdir()) == [
        "ablation.json",
        "bare.json",
        "full-minus-hybrid.json",
        "full-minus-rewrite.json",
        "full.json",
    ]
    data = json.loads((folder / "ablation.json").read_text())
    assert (
        data["kind"] == "ablation" and data["schema_version"] == 1 and data["correction"] == "holm-bonferroni"
    )
    assert data["dataset"]["cases"] == 84 and data["policy"]["gain"] == "exponential"
    assert schema_errors(data) == []
    inv = data["invariants"]
    assert inv["cases"] == 84 and inv["answerable"] == 75 and inv["top_k"] == 10
    assert inv["tenants"] == ["acme", "globex", "initech"]
    by_name = {v["name"]: v for v in data["variants"]}
    assert by_name["bare"]["off"] == ["rewrite", "hybrid"] and by_name["bare"]["leaks"] == 0
    assert by_name["bare-plus-hybrid"]["same_as"] == "full-minus-rewrite"
    assert {g["analysis"] for g in data["gains"]} == {"remove-one", "add-one"}
    printed = render_terminal(data)
    assert "remove-one" in printed and "(= full-minus-hybrid)" in printed


def test_cli_ablate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = write_lines(tmp_path / "base.toml", TWO_BM25.splitlines())
    common = [
        "--dataset",
        str(KB / "golden.jsonl"),
        "--corpus",
        str(KB / "corpus.jsonl"),
        "--config",
        str(config),
    ]
    out_dir = tmp_path / "out"
    code = main(
        [
            "ablate",
            *common,
            "--toggle",
            "hybrid",
            "--metrics",
            "nDCG@10",
            "--resamples",
            "200",
            "--no-progress",
            "--out-dir",
            str(out_dir),
        ]
    )
    assert code == 0
    text = capsys.readouterr().out
    assert "invariants checked: every variant scored the same 84 cases" in text
    data = json.loads((out_dir / "ablation.json").read_text())
    assert data["toggles"] == ["hybrid"] and len(data["gains"]) == 2
    assert {v["name"]: v["same_as"] for v in data["variants"]} == {
        "full": None,
        "full-minus-hybrid": None,
        "bare": "full-minus-hybrid",
        "bare-plus-hybrid": "full",
    }
    assert main(["ablate", *common, "--toggle", "rerank", "--out-dir", str(out_dir)]) == 2
    assert "no [rerank] table" in capsys.readouterr().err
