"""Paths as a new user types them: a ``--retriever`` module in the current folder, a BEIR folder that
does not exist."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from conftest import KB
from ragaudit.cli.main import main

RETRIEVER = """
from ragaudit.retrieval.protocol import chunk_result  # noqa: F401  (the shape of a result)


class Echo:
    async def search(self, *, tenant_id, query, top_k):
        return [{"chunk_id": f"{tenant_id}-{i}", "score": 1.0 / (i + 1), "content": query,
                 "source_id": f"{tenant_id}-{i}", "tenant_id": tenant_id} for i in range(top_k)]


def make_retriever():
    return Echo()
"""


def test_a_retriever_module_in_the_current_folder_is_found_without_pythonpath(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "__init__.py").write_text("")
    (tmp_path / "mypkg" / "search.py").write_text(RETRIEVER)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    args = ["eval", "--dataset", str(KB / "golden.jsonl"), "--no-history"]
    assert main([*args, "--retriever", "mypkg.search:make_retriever"]) == 0
    assert "Python retriever mypkg.search:make_retriever" in capsys.readouterr().err
    assert sys.path[-1] == str(tmp_path)  # appended: installed packages still win


def test_a_missing_module_says_where_it_was_looked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["eval", "--dataset", str(KB / "golden.jsonl"), "--retriever", "nopkg.search:make"]) == 2
    err = capsys.readouterr().err
    assert "module 'nopkg.search' not found" in err and "run from the folder that holds it" in err


def test_import_beir_on_a_missing_folder_says_folder_not_found(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "shared" / "data" / "beir" / "msmarco"
    assert main(["import", "beir", str(missing), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert f"{missing}: BEIR folder not found" in err and "queries.jsonl" not in err.split("fix")[0]
    assert not (tmp_path / "out").exists()
    afile = tmp_path / "corpus.jsonl"
    afile.write_text("{}\n")
    assert main(["import", "beir", str(afile), "--out", str(tmp_path / "out")]) == 2
    assert "is a file, expected a BEIR folder" in capsys.readouterr().err
