"""ablate and sweep-chunking name an IN-SAMPLE variant or grid point, as bench, compare, eval-reranker
and k-sweep do, and the pytest plugin's floors do not pass on one: a learned stage scored on the cases it was fitted on (before: their artifacts and
terminal views said nothing; on the demo KB the in-sample sweep point scored nDCG@10 0.9594)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

import ragaudit
from conftest import KB
from ragaudit.artifacts.envelope import schema_errors
from ragaudit.artifacts.in_sample import fitted_cases
from ragaudit.cli.main import main
from ragaudit.data.loading import load_dataset
from ragaudit.pytest_plugin import assert_floors
from ragaudit.retrieval.fusion_features import FEATURES
from ragaudit.retrieval.learned_fusion import FusionModel

GOLDEN = KB / "golden.jsonl"
CORPUS = str(KB / "corpus.jsonl")


def _fitted_on_its_golden(folder: Path) -> tuple[Path, Path]:
    """Eight golden cases and a hand-made fusion model that says it was fitted on them."""
    lines = GOLDEN.read_text(encoding="utf-8").splitlines()[:8]
    golden = folder / "golden.jsonl"
    golden.write_text("\n".join(lines) + "\n", encoding="utf-8")
    dataset = load_dataset(str(golden))
    info = {"fitted_on": {"dataset": dataset.info(), "cases": fitted_cases(dataset.cases)}}
    weights = tuple(-1.0 if name == "dense_log_rank" else 0.0 for name in FEATURES)
    model = folder / "m.json"
    FusionModel(weights, (0.0,) * len(FEATURES), (1.0,) * len(FEATURES), candidates=20, info=info).write(
        model
    )
    return golden, model


@pytest.mark.slow
def test_ablate_names_the_in_sample_variant(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    golden, model = _fitted_on_its_golden(tmp_path)
    config = tmp_path / "fused.toml"
    config.write_text(
        'name = "fused"\n[retriever]\ntype = "hybrid"\nmethod = "rrf"\n'
        'components = [{ type = "bm25" }, { type = "dense" }]\n'
        f'[rerank]\ntype = "learned"\nmodel = "{model}"\ntop_n = 20\n',
        encoding="utf-8",
    )
    code = main(["ablate", "--dataset", str(golden), "--corpus", CORPUS, "--config", str(config), "--toggle",
                 "rerank", "--metrics", "nDCG@10", "--resamples", "200", "--out-dir", str(tmp_path / "a")])  # fmt: skip
    assert code == 0
    report = json.loads((tmp_path / "a" / "ablation.json").read_text(encoding="utf-8"))
    assert report["in_sample"]["state"] == "in_sample" and report["in_sample"]["system"] == "variant full"
    assert schema_errors(report) == []
    assert "IN-SAMPLE: variant full: all " in capsys.readouterr().out


@pytest.mark.slow
def test_sweep_chunking_names_the_in_sample_point(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    golden, model = _fitted_on_its_golden(tmp_path)
    out = tmp_path / "sweep.json"
    code = main(["sweep-chunking", "--dataset", str(golden), "--corpus", CORPUS, "--sizes", "256", "--overlaps",
                 "0", "--strategies", "fixed", "--pipeline", f"hybrid-rerank:{model}", "--out", str(out)])  # fmt: skip
    assert code == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["in_sample"]["state"] == "in_sample"
    assert report["in_sample"]["system"] == "chunking fixed-256-0"
    assert schema_errors(report) == []
    assert "IN-SAMPLE: chunking fixed-256-0: all " in capsys.readouterr().out


@pytest.mark.slow
def test_the_pytest_plugin_does_not_pass_floors_on_an_in_sample_result(tmp_path: Path) -> None:
    golden, model = _fitted_on_its_golden(tmp_path)
    fused = ragaudit.pipeline(f"hybrid-rerank:{model}", CORPUS)
    result = asyncio.run(ragaudit.evaluate_retriever(fused, golden, metrics="nDCG@10"))
    with pytest.raises(
        AssertionError, match=r"IN-SAMPLE: all .*a floor met on the cases a stage was fitted on"
    ):
        assert_floors(result, {"nDCG@10": 0.0})
    with pytest.raises(AssertionError, match="IN-SAMPLE"):  # the report dict the plugin writes, too
        assert_floors(result.to_dict(), {"nDCG@10": 0.0})
    plain = asyncio.run(
        ragaudit.evaluate_retriever(ragaudit.pipeline("bm25", CORPUS), golden, metrics="nDCG@10")
    )
    assert_floors(plain, {"nDCG@10": 0.0})
