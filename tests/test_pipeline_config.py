"""Pipeline TOML files and presets: parsed strictly, every problem named, hashes stable."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragaudit.errors import InputError, ValidationError
from ragaudit.pipelines.config import PRESETS, load_pipeline_file, preset, resolve_pipeline

GOOD = """
name = "mine"
[chunking]
strategy = "sentence"
size = 128
overlap = 16
[retriever]
type = "hybrid"
method = "weighted"
weights = [0.3, 0.7]
components = [{ type = "bm25", k1 = 1.2 }, { type = "dense", store = "qdrant" }]
[rerank]
type = "cross-encoder"
model = "/models/ce"
top_n = 20
[rewrite]
type = "synonyms"
mapping = { sso = "single sign-on" }
"""


def test_full_config_parses(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text(GOOD)
    cfg = load_pipeline_file(path)
    assert cfg.name == "mine"
    assert (cfg.chunking.strategy, cfg.chunking.size, cfg.chunking.overlap) == ("sentence", 128, 16)
    assert cfg.retriever.type == "hybrid"
    assert [c.type for c in cfg.retriever.components] == ["bm25", "dense"]
    assert cfg.retriever.components[0].params["k1"] == 1.2
    assert cfg.rerank is not None and cfg.rerank.params["top_n"] == 20
    assert cfg.rewrite is not None and cfg.rewrite.params["mapping"]["sso"] == "single sign-on"
    assert cfg.to_dict()["retriever"]["weights"] == [0.3, 0.7]
    assert resolve_pipeline(str(path)).sha256() == cfg.sha256()


def test_every_problem_is_named(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(
        '[chunking]\nstrategy = "words"\noverlap = 999\n'
        '[retriever]\ntype = "hybrid"\ncomponents = [{ type = "bm25", k2 = 1 }]\n'
        '[rerank]\ntype = "magic"\n'
        "[extra]\n"
    )
    with pytest.raises(ValidationError) as info:
        load_pipeline_file(path)
    messages = [p.message for p in info.value.problems]
    assert any("[top level] unknown key(s) extra" in m for m in messages)
    assert any("unknown strategy 'words'" in m for m in messages)
    assert any("overlap" in m for m in messages)
    assert any("at least two components" in m for m in messages)
    assert any("[rerank] unknown or missing type 'magic'" in m for m in messages)
    hint = next(p for p in info.value.problems if "k2" in p.message)
    assert hint.message.startswith("[retriever.components[0]]") and "k1" in hint.fix


def test_syntax_errors_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.toml"
    path.write_text('[retriever]\ntype = "bm25"\nk1 = \n')
    with pytest.raises(InputError) as info:
        load_pipeline_file(path)
    assert info.value.problem.line == 3 and "invalid TOML" in info.value.problem.message


BAD_LINES = """name = "x"
colour = "red"

[chunking]
strategy = "fixed"
size = -3

[retriever]
type = "hybrid"
method = "nope"
components = [{ type = "bm25" }, { type = "bm25x" }]

[rerank]
type = "cross-encoder"
depth = "ten"
"""


def test_every_problem_of_a_built_in_stage_names_its_line(tmp_path: Path) -> None:
    """Errors name file, line and fix: each key of a built-in stage, chunking and the top level is
    found at its line (a hybrid's inline components at the line of ``components``)."""
    path = tmp_path / "bad.toml"
    path.write_text(BAD_LINES)
    with pytest.raises(ValidationError) as info:
        load_pipeline_file(path)
    lines = {p.message[: p.message.index("] ") + 1]: p.line for p in info.value.problems}
    assert lines == {
        "[top level]": 2,
        "[chunking]": 6,
        "[retriever]": 10,
        "[retriever.components[1]]": 11,
        "[rerank]": 15,
    }
    assert all(p.path == str(path) for p in info.value.problems)


@pytest.mark.parametrize("name", list(PRESETS))
def test_presets(name: str) -> None:
    cfg = preset(name)
    assert cfg.name == name and cfg.chunking.strategy == "whole"
    assert len(cfg.sha256()) == 64


def test_preset_hashes_differ_and_unknown_preset_lists_valid_ones() -> None:
    assert len({preset(n).sha256() for n in PRESETS}) == len(PRESETS)
    with pytest.raises(InputError, match=r"bm25, dense, hybrid, hybrid-rerank:MODEL\.json"):
        resolve_pipeline("hybird")


def test_hybrid_rerank_needs_a_fitted_model(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="none was given") as bare:
        resolve_pipeline("hybrid-rerank")
    assert "ragaudit fit-fusion --dataset D --corpus C --out fusion.json" in str(bare.value)
    model = tmp_path / "fusion.json"
    model.write_text("{}")
    with pytest.raises(InputError, match=f"use --pipeline hybrid-rerank:{model}"):
        resolve_pipeline(str(model))
    learned = resolve_pipeline("hybrid-rerank:models/fusion.json")
    assert learned.name == "hybrid-rerank" and learned.retriever == preset("hybrid").retriever
    assert learned.rerank is not None and learned.rerank.to_dict() == {
        "type": "learned",
        "model": "models/fusion.json",
        "top_n": 100,
    }
