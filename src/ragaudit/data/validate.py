"""``ragaudit validate``: every problem of a dataset (and its ties to a corpus) in one pass.

With a corpus, each case is also checked against it:

* every labelled id (relevant ids, graded ids, evidence documents) must be in the corpus;
* the case's ``tenant_id`` must be one of the corpus's tenants (``"ACME "`` is not ``acme``: the
  error names the closest tenant as the fix);
* every labelled id must belong to the case's tenant: a case labelled with another tenant's chunk
  would reward a cross-tenant leak;
* every evidence span must lie inside its document's ``text``: a span past its end overlaps no chunk,
  so its grade would be lost without a word.

A ``--corpus`` that does not exist is an input error (exit 2), never a dataset checked clean.

The tenant checks apply when the corpus names tenants (a BEIR corpus does not).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from pathlib import Path

from ragaudit.data.beir import beir_paths, read_beir_queries
from ragaudit.data.corpus_ids import CorpusIndex, read_corpus_index
from ragaudit.data.golden_jsonl import read_golden_jsonl
from ragaudit.data.loading import DatasetFormat, detect_dataset_format
from ragaudit.data.schema import Dataset, GoldenCase
from ragaudit.data.trec import read_qrels
from ragaudit.errors import InputError, Problem

EXAMPLES = 5


def _shown(ids: list[str]) -> str:
    return ", ".join(repr(i) for i in ids[:EXAMPLES]) + (" ..." if len(ids) > EXAMPLES else "")


def labelled_ids(case: GoldenCase) -> list[str]:
    """Every id a case labels: relevant ids, graded ids and evidence documents, each once."""
    return list(
        dict.fromkeys([*(case.relevant_chunk_ids or ()), *case.relevance, *(e.doc_id for e in case.evidence)])
    )


def _unknown_ids(path: str, cases: Iterable[GoldenCase], corpus: CorpusIndex) -> list[Problem]:
    problems: list[Problem] = []
    for case in cases:
        missing = [d for d in labelled_ids(case) if not corpus.known(d)]
        if missing:
            problems.append(
                Problem(
                    path,
                    case.line,
                    f"case {case.id!r}: {len(missing)} id(s) not in the corpus: {_shown(missing)}",
                    "fix the ids, or add the documents to the corpus",
                )
            )
    return problems


def _span_problems(path: str, cases: Iterable[GoldenCase], corpus: CorpusIndex) -> list[Problem]:
    problems: list[Problem] = []
    for case in cases:
        for i, span in enumerate(case.evidence):
            length = corpus.lengths.get(span.doc_id)
            if length is not None and span.end > length:
                problems.append(
                    Problem(
                        path,
                        case.line,
                        f"case {case.id!r}: evidence[{i}] [{span.start}, {span.end}) of {span.doc_id!r} ends past "
                        f"its text ({length} characters); it can never overlap a chunk",
                        "fix the offsets against the document's text (character offsets, end exclusive)",
                    )
                )
    return problems


def closest_tenant(tenant: str, tenants: Iterable[str]) -> str | None:
    """The corpus tenant a mistyped one most likely means (case, spaces and typos forgiven)."""
    by_key = {t.strip().casefold(): t for t in sorted(tenants)}
    key = tenant.strip().casefold()
    if key in by_key:
        return by_key[key]
    close = difflib.get_close_matches(key, list(by_key), n=1, cutoff=0.6)
    return by_key[close[0]] if close else None


def _tenant_problems(path: str, cases: Iterable[GoldenCase], corpus: CorpusIndex) -> list[Problem]:
    if not corpus.tenants:
        return []
    problems: list[Problem] = []
    known = ", ".join(sorted(corpus.tenants)[:EXAMPLES]) + (" ..." if len(corpus.tenants) > EXAMPLES else "")
    for case in cases:
        tenant = case.tenant_id
        if tenant is None:
            continue
        if tenant not in corpus.tenants:
            best = closest_tenant(tenant, corpus.tenants)
            problems.append(
                Problem(
                    path,
                    case.line,
                    f"case {case.id!r}: tenant_id {tenant!r} is not a corpus tenant (corpus tenants: {known})",
                    f'write "tenant_id": "{best}"' if best else "use one of the corpus tenants",
                )
            )
            continue
        foreign = [d for d in labelled_ids(case) if (owners := corpus.owners_of(d)) and tenant not in owners]
        if foreign:
            owner = sorted(corpus.owners_of(foreign[0]))[0]
            problems.append(
                Problem(
                    path,
                    case.line,
                    f"case {case.id!r} (tenant {tenant!r}) is labelled with {len(foreign)} id(s) of another "
                    f"tenant: {_shown(foreign)} (first belongs to {owner!r}); scoring it would reward a "
                    "cross-tenant leak",
                    "label the case with its own tenant's chunks, or fix its tenant_id",
                )
            )
    return problems


def unknown_ids_warning(dataset: Dataset, corpus: str | Path) -> list[str]:
    """``eval``'s warning for labelled ids that the corpus lacks: count and first examples (or nothing)."""
    index, problems = read_corpus_index(corpus)
    if any(p.severity == "error" for p in problems):
        return [f"labelled ids were not checked against {corpus}: it has unreadable lines (see validate)"]
    warnings = _unknown_tenants_warning(dataset, corpus, index)
    missing = list(
        dict.fromkeys(d for case in dataset.cases for d in labelled_ids(case) if not index.known(d))
    )
    if not missing:
        return warnings
    cases = sum(1 for case in dataset.cases if any(not index.known(d) for d in labelled_ids(case)))
    return [
        f"{len(missing)} labelled id(s) in {cases} case(s) are not in the corpus {corpus}: {_shown(missing)}; "
        f"they can never be retrieved (run `ragaudit validate {dataset.path} --corpus {corpus}`)",
        *warnings,
    ]


def _unknown_tenants_warning(dataset: Dataset, corpus: str | Path, index: CorpusIndex) -> list[str]:
    """Cases asked as a tenant that owns nothing in the corpus (``Acme`` for ``acme``): the source can only
    return another tenant's chunks or nothing, so they score 0 with no error (or nothing, when the
    corpus names no tenants)."""
    if not index.tenants:
        return []
    strays: dict[str, int] = {}
    for case in dataset.cases:
        if case.tenant_id is not None and case.tenant_id not in index.tenants:
            strays[case.tenant_id] = strays.get(case.tenant_id, 0) + 1
    if not strays:
        return []
    named = ", ".join(
        f"{tenant!r} ({n} case(s)"
        + (f"; did you mean {best!r}?)" if (best := closest_tenant(tenant, index.tenants)) else ")")
        for tenant, n in sorted(strays.items())
    )
    return [
        f"{sum(strays.values())} case(s) are asked as a tenant the corpus {corpus} does not have: {named}; "
        f"they can retrieve none of their own chunks and score 0 (run `ragaudit validate {dataset.path} "
        f"--corpus {corpus}`)"
    ]


def validate_dataset(
    path: str | Path, corpus: str | Path | None = None, fmt: DatasetFormat = "auto", split: str = "test"
) -> list[Problem]:
    """Return every problem found (errors and warnings); an empty list means the dataset is clean."""
    if corpus is not None and not Path(corpus).exists():
        raise InputError(str(corpus), None, "corpus not found", "check the path given to --corpus")
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
    if cases and not any(case.is_answerable() for case in cases):
        problems.append(
            Problem(
                str(path),
                None,
                f"no case is answerable ({len(cases)} cases, none with an item graded >= 1): ranking metrics "
                "cannot be scored on it ('ragaudit eval' fails such a run)",
                "label the relevant chunks of the answerable questions (unanswerable probes alone test abstention)",
                "warning",
            )
        )
    if corpus is not None and Path(corpus).exists():
        index, corpus_problems = read_corpus_index(corpus)
        problems += corpus_problems
        problems += _unknown_ids(str(path), cases, index)
        problems += _tenant_problems(str(path), cases, index)
        problems += _span_problems(str(path), cases, index)
    return problems
