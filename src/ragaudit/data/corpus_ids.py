"""The ids a corpus defines, for checking labels against it (``ragaudit validate --corpus``).

Accepts a ragaudit corpus JSONL (``doc_id`` or ``chunk_id``), a BEIR ``corpus.jsonl`` (``_id``) or a BEIR
folder. A document id ``D`` also makes chunk ids of the form ``D#n`` known, since chunkers name
chunks that way.
"""

from __future__ import annotations

from pathlib import Path

from ragaudit.data.lines import iter_json_records
from ragaudit.errors import Problem

ID_KEYS = ("chunk_id", "doc_id", "_id", "id")


def read_corpus_ids(path: str | Path) -> tuple[set[str], list[Problem]]:
    p = Path(path)
    if p.is_dir():
        p = p / "corpus.jsonl"
    ids: set[str] = set()
    problems: list[Problem] = []
    for number, obj in iter_json_records(p, problems):
        found = next((obj[k] for k in ID_KEYS if isinstance(obj, dict) and isinstance(obj.get(k), str)), None)
        if found is None:
            problems.append(
                Problem(str(p), number, "corpus record has no id", f"give it one of {', '.join(ID_KEYS)}")
            )
            continue
        ids.add(found)
    return ids, problems


def is_known(doc_id: str, ids: set[str]) -> bool:
    """Whether an id names a corpus record, or a chunk ``D#n`` of a known document ``D``."""
    if doc_id in ids:
        return True
    base, sep, tail = doc_id.rpartition("#")
    return bool(sep) and tail.isdigit() and base in ids
