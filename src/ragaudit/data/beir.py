"""BEIR folders: ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/<split>.tsv`` (header optional).

BEIR semantics are kept: a query without any judgment is not evaluated; it is left out and counted
(``skipped["queries_without_judgments"]``), never turned into an unanswerable probe. A query whose
judgments are all grade 0 has no relevant item, so it counts as unanswerable under ragaudit's
policy (kept out of ranking averages, counted separately).
"""

from __future__ import annotations

import json
from pathlib import Path
from types import MappingProxyType

from ragaudit.artifacts.provenance import sha256_of
from ragaudit.data.lines import iter_json_records
from ragaudit.data.schema import Dataset, Evidence, GoldenCase
from ragaudit.data.trec import read_qrels
from ragaudit.errors import InputError, Problem, ValidationError

DEFAULT_TENANT = "default"


def beir_paths(folder: str | Path, split: str = "test") -> tuple[Path, Path, Path]:
    root = Path(folder)
    if not root.exists():
        raise InputError(
            str(root),
            None,
            "BEIR folder not found",
            f"check the path (it is read relative to {Path.cwd()}); a BEIR folder holds corpus.jsonl, "
            "queries.jsonl and qrels/",
        )
    if not root.is_dir():
        raise InputError(
            str(root), None, "is a file, expected a BEIR folder", "pass the folder holding queries.jsonl"
        )
    corpus, queries, qrels = root / "corpus.jsonl", root / "queries.jsonl", root / "qrels" / f"{split}.tsv"
    for path, what in ((queries, "queries.jsonl"), (qrels, f"qrels/{split}.tsv")):
        if not path.is_file():
            splits = (
                sorted(p.stem for p in (root / "qrels").glob("*.tsv")) if (root / "qrels").is_dir() else []
            )
            fix = f"available splits: {', '.join(splits)}" if splits else "point at a BEIR folder"
            raise InputError(str(path), None, f"BEIR folder has no {what}", fix)
    return corpus, queries, qrels


def read_beir_queries(path: Path) -> tuple[dict[str, str], list[Problem]]:
    queries: dict[str, str] = {}
    first_line: dict[str, int] = {}
    problems: list[Problem] = []
    for number, obj in iter_json_records(path, problems):
        qid = obj.get("_id") if isinstance(obj, dict) else None
        qtext = obj.get("text") if isinstance(obj, dict) else None
        if not isinstance(qid, str) or not isinstance(qtext, str):
            problems.append(
                Problem(
                    str(path),
                    number,
                    "a BEIR query needs string '_id' and 'text'",
                    'write {"_id": "q1", "text": "..."}',
                )
            )
            continue
        if qid in first_line:
            problems.append(
                Problem(
                    str(path),
                    number,
                    f"duplicate query id {qid!r} (first on line {first_line[qid]})",
                    "give every query a unique _id",
                )
            )
            continue
        first_line[qid] = number
        queries[qid] = qtext
    return queries, problems


def load_beir(
    folder: str | Path, split: str = "test", threshold: int = 1, doc_lengths: dict[str, int] | None = None
) -> Dataset:
    """Load a BEIR folder as a dataset (only queries with judgments become cases).

    With ``doc_lengths`` (``{doc_id: len(text)}``), every judged document with grade > 0 also becomes
    a whole-document evidence span, so span-based experiments work on BEIR data.
    """
    _, queries_path, qrels_path = beir_paths(folder, split)
    queries, problems = read_beir_queries(queries_path)
    qrels, qrel_problems = read_qrels(qrels_path)
    problems += qrel_problems
    for qid in sorted(set(qrels) - set(queries)):
        problems.append(
            Problem(
                str(qrels_path),
                None,
                f"judgments for query {qid!r} which is not in queries.jsonl",
                "add the query or remove its judgments",
            )
        )
    errors = [p for p in problems if p.severity == "error"]
    if errors:
        raise ValidationError(errors)
    cases: list[GoldenCase] = []
    for qid, qtext in queries.items():
        judged = qrels.get(qid)
        if not judged:
            continue
        relevant = tuple(d for d, g in judged.items() if g >= threshold)
        evidence = tuple(
            Evidence(d, 0, doc_lengths[d], g)
            for d, g in judged.items()
            if g > 0 and doc_lengths and doc_lengths.get(d)
        )
        cases.append(
            GoldenCase(qid, qtext, relevant, MappingProxyType(dict(judged)), DEFAULT_TENANT, evidence)
        )
    skipped = {"queries_without_judgments": len(queries) - len(cases)}
    notes = tuple(str(p) for p in qrel_problems if p.severity != "error")
    return Dataset(
        tuple(cases),
        str(folder),
        sha256_of(queries_path, qrels_path),
        "beir",
        MappingProxyType(skipped),
        notes,
    )


def iter_beir_corpus(path: Path) -> list[dict[str, object]]:
    """Read a BEIR corpus as ragaudit documents ``{doc_id, tenant_id, title, text, metadata}``."""
    docs: list[dict[str, object]] = []
    problems: list[Problem] = []
    for number, obj in iter_json_records(path, problems):
        if (
            not isinstance(obj, dict)
            or not isinstance(obj.get("_id"), str)
            or not isinstance(obj.get("text"), str)
        ):
            problems.append(
                Problem(
                    str(path),
                    number,
                    "a BEIR document needs string '_id' and 'text'",
                    'write {"_id": "d1", "title": "...", "text": "..."}',
                )
            )
            continue
        title = obj.get("title") if isinstance(obj.get("title"), str) else ""
        metadata = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        docs.append(
            {
                "doc_id": obj["_id"],
                "tenant_id": DEFAULT_TENANT,
                "title": title,
                "text": obj["text"],
                "metadata": metadata,
            }
        )
    if problems:
        raise ValidationError(problems)
    return docs


def import_beir(
    folder: str | Path, out: str | Path, split: str = "test", threshold: int = 1
) -> dict[str, object]:
    """Write ``OUT/corpus.jsonl`` and ``OUT/dataset.jsonl`` from a BEIR folder; return counts."""
    corpus_path, _, _ = beir_paths(folder, split)
    if not corpus_path.is_file():
        raise InputError(
            str(corpus_path), None, "BEIR folder has no corpus.jsonl", "point at a full BEIR folder"
        )
    docs = iter_beir_corpus(corpus_path)
    lengths = {str(d["doc_id"]): len(str(d["text"])) for d in docs}
    dataset = load_beir(folder, split, threshold, lengths)
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    with (out_dir / "corpus.jsonl").open("w", encoding="utf-8") as handle:
        for doc in docs:
            handle.write(json.dumps(doc, ensure_ascii=False) + "\n")
    with (out_dir / "dataset.jsonl").open("w", encoding="utf-8") as handle:
        for case in dataset.cases:
            handle.write(json.dumps(case.to_json(), ensure_ascii=False) + "\n")
    unanswerable = sum(1 for c in dataset.cases if not c.is_answerable(threshold))
    return {
        "documents": len(docs),
        "cases": len(dataset.cases),
        "unanswerable": unanswerable,
        "queries_without_judgments": dataset.skipped["queries_without_judgments"],
        "out": str(out_dir),
    }
