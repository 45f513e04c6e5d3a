"""docs/pipelines.md's pipeline file builds and answers as written (a `fusion.json` stands in for the
model `ragaudit fit-fusion` writes); adding the page's `[rewrite]` table to it is refused with the
message the page quotes. The page's example once combined both, and `eval --pipeline` on it exited 2."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from conftest import KB
from ragaudit.corpus.loading import load_corpus
from ragaudit.errors import InputError
from ragaudit.pipelines.build import build_pipeline
from ragaudit.pipelines.config import load_pipeline_file
from ragaudit.retrieval.fusion_features import FEATURES
from ragaudit.retrieval.learned_fusion import FusionModel

pytestmark = pytest.mark.slow
PAGE = Path(__file__).resolve().parents[1] / "docs" / "pipelines.md"


def _toml_blocks() -> list[str]:
    return re.findall(r"```toml\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.DOTALL)


def test_the_pages_pipeline_file_builds_and_a_rewrite_under_learned_is_refused_as_quoted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    weights = tuple(1.0 if name == "rrf" else 0.0 for name in FEATURES)
    FusionModel(weights, (0.0,) * len(FEATURES), (1.0,) * len(FEATURES), candidates=50).write(
        tmp_path / "fusion.json"
    )
    main_example, rewrite = _toml_blocks()[0], _toml_blocks()[1]
    assert 'type = "learned"' in main_example and "[rewrite]" not in main_example
    assert rewrite.lstrip().startswith("[rewrite]")
    (tmp_path / "page.toml").write_text(main_example, encoding="utf-8")
    corpus = load_corpus(KB / "corpus.jsonl")
    pipeline = build_pipeline(load_pipeline_file(tmp_path / "page.toml"), corpus)
    found = asyncio.run(pipeline.retriever.search(tenant_id="acme", query="refund policy", top_k=5))
    assert len(found) == 5 and all(chunk["tenant_id"] == "acme" for chunk in found)

    (tmp_path / "both.toml").write_text(main_example + "\n" + rewrite, encoding="utf-8")
    with pytest.raises(InputError) as refused:
        build_pipeline(load_pipeline_file(tmp_path / "both.toml"), corpus)
    quoted = "the learned stage needs a hybrid first stage of BM25 and dense (got RewriteRetriever)"
    assert quoted in str(refused.value)
    assert quoted in " ".join(PAGE.read_text(encoding="utf-8").split())  # the page quotes it (wrapped)
