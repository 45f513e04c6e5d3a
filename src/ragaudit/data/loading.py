"""Load datasets and runs from any supported format, detected from the path or named explicitly."""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType
from typing import Literal

from ragaudit.artifacts.provenance import sha256_of
from ragaudit.data.beir import DEFAULT_TENANT, load_beir
from ragaudit.data.golden_jsonl import load_golden_jsonl
from ragaudit.data.run import Run
from ragaudit.data.run_jsonl import load_jsonl_run
from ragaudit.data.schema import Dataset, GoldenCase
from ragaudit.data.trec import load_qrels_noted, load_trec_run
from ragaudit.errors import InputError

DatasetFormat = Literal["auto", "jsonl", "beir", "qrels"]
RunFormat = Literal["auto", "trec", "jsonl"]


def _first_text_line(path: Path) -> str:
    with path.open("rb") as handle:
        for raw in handle:
            text = raw.decode("utf-8", errors="replace").lstrip("\ufeff").strip()
            if text:
                return text
    return ""


def detect_dataset_format(path: str | Path) -> Literal["jsonl", "beir", "qrels"]:
    p = Path(path)
    if not p.exists():
        raise InputError(str(p), None, "dataset not found", "check the path: no such file or folder")
    if p.is_dir():
        if (p / "qrels").is_dir() or (p / "queries.jsonl").is_file():
            return "beir"
        raise InputError(
            str(p),
            None,
            "folder is not a BEIR dataset (no qrels/ or queries.jsonl)",
            "point --dataset at a golden JSONL file, a BEIR folder or a TREC qrels file",
        )
    first = _first_text_line(p)
    if first.startswith("{"):
        return "jsonl"
    if first:
        return "qrels"
    raise InputError(str(p), None, "dataset file is empty", "write one case per line")


def qrels_dataset(path: str | Path) -> Dataset:
    """A dataset from TREC qrels alone: grades only, no query text (fine for run-file evaluation)."""
    qrels, notes = load_qrels_noted(path)
    cases = tuple(
        GoldenCase(qid, "", None, MappingProxyType(judged), DEFAULT_TENANT) for qid, judged in qrels.items()
    )
    return Dataset(cases, str(path), sha256_of(path), "qrels", notes=tuple(notes))


def load_dataset(
    path: str | Path, fmt: DatasetFormat = "auto", split: str = "test", threshold: int = 1
) -> Dataset:
    """Load a golden JSONL file, a BEIR folder or a TREC qrels file."""
    kind = detect_dataset_format(path) if fmt == "auto" else fmt
    if kind == "jsonl":
        return load_golden_jsonl(path)
    if kind == "beir":
        return load_beir(path, split, threshold)
    return qrels_dataset(path)


def detect_run_format(path: str | Path) -> Literal["trec", "jsonl"]:
    p = Path(path)
    if not p.is_file():
        raise InputError(str(p), None, "run file not found", "check the --run path")
    return "jsonl" if _first_text_line(p).startswith("{") else "trec"


def load_run(path: str | Path, fmt: RunFormat = "auto", name: str | None = None) -> Run:
    """Load a TREC run file or a JSONL run."""
    kind = detect_run_format(path) if fmt == "auto" else fmt
    return load_jsonl_run(path, name) if kind == "jsonl" else load_trec_run(path, name)
