"""eval --corpus warns when cases are asked as a tenant the corpus does not have ("Acme" for "acme"):
before, a third of the demo golden set scored 0 with no word, "75 of 75 answerable scored", exit 0,
although ``ragaudit validate`` calls the same file 28 errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import KB
from ragaudit.cli.main import main
from ragaudit.data.loading import load_dataset
from ragaudit.data.validate import unknown_ids_warning

CORPUS = KB / "corpus.jsonl"


def _golden(folder: Path, tenant: str) -> Path:
    text = (
        (KB / "golden.jsonl")
        .read_text(encoding="utf-8")
        .replace('"tenant_id": "acme"', f'"tenant_id": "{tenant}"')
    )
    path = folder / "golden.jsonl"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_mistyped_tenant_is_named_with_the_one_meant(tmp_path: Path) -> None:
    (warning,) = unknown_ids_warning(load_dataset(str(_golden(tmp_path, "Acme"))), CORPUS)
    assert warning.startswith("28 case(s) are asked as a tenant the corpus")
    assert "'Acme' (28 case(s); did you mean 'acme'?)" in warning and "score 0" in warning


def test_the_demo_golden_set_gets_no_warning() -> None:
    assert unknown_ids_warning(load_dataset(str(KB / "golden.jsonl")), CORPUS) == []


def test_eval_prints_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["eval", "--dataset", str(_golden(tmp_path, "Acme")), "--corpus", str(CORPUS), "--pipeline", "bm25",
                 "--metrics", "nDCG@10", "--no-history", "-q"])  # fmt: skip
    assert code == 0  # a warning: a tenant may be served only --shared-tenant documents
    assert "warning: 28 case(s) are asked as a tenant the corpus" in capsys.readouterr().err
