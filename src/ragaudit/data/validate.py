"""``ragaudit validate``: every problem of a dataset (and its ties to a corpus) in one pass."""

from __future__ import annotations

from pathlib import Path

from ragaudit.data.beir import beir_paths, read_beir_queries
from ragaudit.data.corpus_ids import is_known, read_corpus_ids
from ragaudit.data.golden_jsonl import read_golden_jsonl
from ragaudit.data.loading import DatasetFormat, detect_dataset_format
from ragaudit.data.schema import GoldenCase
from ragaudit.data.trec import read_qrels
from ragaudit.errors import Problem


def _unknown_ids(path: str, cases: list[GoldenCase], corpus_ids: set[str]) -> list[Problem]:
    problems: list[Problem] = []
    for case in cases:
        labelled = list(dict.fromkeys([*(case.relevant_chunk_ids or ()), *case.relevance]))
        missing = [d for d in labelled if not is_known(d, corpus_ids)]
        missing += [f"evidence doc {e.doc_id}" for e in case.evidence if not is_known(e.doc_id, corpus_ids)]
        if missing:
            shown = ", ".join(repr(m) for m in missing[:5]) + (" ..." if len(missing) > 5 else "")
            problems.append(
                Problem(
                    path,
                    case.line,
                    f"case {case.id!r}: {len(missing)} id(s) not in the corpus: {shown}",
                    "fix the ids, or add the documents to the corpus",
                )
            )
    return problems


def validate_dataset(
    path: str | Path, corpus: str | Path | None = None, fmt: DatasetFormat = "auto", split: str = "test"
) -> list[Problem]:
    """Return every problem found (errors and warnings); an empty list means the dataset is clean."""
    kind = detect_dataset_format(path) if fmt == "auto" else fmt
    problems: list[Problem]
    cases: list[GoldenCase] = []
    if kind == "jsonl":
        cases, problems = read_golden_jsonl(path)
    elif kind == "beir":
        corpus = corpus if corpus is not None else (Path(path) / "corpus.jsonl")
        _, queries_path, qrels_path = beir_paths(path, split)
        queries, problems = read_beir_queries(queries_path)
        qrels, more = read_qrels(qrels_path)
        problems += more
        problems += [
            Problem(str(qrels_path), None, f"judgments for unknown query {q!r}", "add it to queries.jsonl")
            for q in sorted(set(qrels) - set(queries))
        ]
        cases = [GoldenCase(q, queries.get(q, ""), None, j) for q, j in qrels.items()]
    else:
        qrels, problems = read_qrels(path)
        cases = [GoldenCase(q, "", None, j) for q, j in qrels.items()]
    if corpus is not None and Path(corpus).exists():
        corpus_ids, corpus_problems = read_corpus_ids(corpus)
        problems += corpus_problems
        problems += _unknown_ids(str(path), cases, corpus_ids)
    return problems
