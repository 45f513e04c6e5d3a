"""The fourth red team's tables: the **default** ``audit-tenants`` against each service of
``security/leaky_round4.py`` (the leaky styles and their honest twins, then the honest presentations
beside the same presentation over the shared index), each served on 127.0.0.1 (``tests/servers.py``).

    PYTHONPATH=src python bench/red_team_round4.py [STYLE,STYLE...] [--corpus FILE] [--extra flags]

One line per audit: style, leaky or honest, exit code, verdict, leak records, unattributed chunks and
requests sent. ``--corpus`` audits another corpus (the shared-text corpus of
``tests/test_red_team_round4.py`` with the style ``plain``). The figures in docs/security.md
("Red team, round 4") come from this script; about 5 s per audit on 2 shared cores.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from ragaudit.corpus.chunkers import chunk_corpus, make_chunker  # noqa: E402
from ragaudit.corpus.loading import load_corpus  # noqa: E402
from ragaudit.security.leaky_round4 import ROUND4_STYLES, Round4Service, make_round4_service  # noqa: E402
from red_team_audit import audit_line  # noqa: E402
from servers import Reply, Request  # noqa: E402

KB_CORPUS = ROOT / "src" / "ragaudit" / "demo_data" / "kb" / "corpus.jsonl"


def _wire(service: Round4Service) -> Any:
    def handle(request: Request) -> Reply:
        split = urlsplit(request.path)
        try:
            body = request.json() if request.body else None
        except ValueError:
            body = None
        status, answer, headers = service.respond(
            body, request.headers, dict(parse_qsl(split.query)), split.path, request.method
        )
        return Reply(status=status, body=answer, headers=headers)

    return handle


def audit(style: str, honest: bool, corpus: Path, work: Path, extra: list[str]) -> str:
    chunks = chunk_corpus(load_corpus(corpus), make_chunker("whole"))
    service = make_round4_service(style, chunks, honest=honest)
    out = work / f"{style}-{'honest' if honest else 'leaky'}.json"
    return audit_line(_wire(service), style, honest, corpus, out, extra)


def run(argv: list[str]) -> int:
    styles = argv[0].split(",") if argv and not argv[0].startswith("-") else list(ROUND4_STYLES)
    corpus = Path(argv[argv.index("--corpus") + 1]) if "--corpus" in argv else KB_CORPUS
    extra = argv[argv.index("--extra") + 1 :] if "--extra" in argv else []
    with tempfile.TemporaryDirectory() as tmp:
        for style in styles:
            for honest in (False, True):
                print(audit(style, honest, corpus, Path(tmp), extra), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(run(sys.argv[1:]))
