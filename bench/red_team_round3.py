"""The third red team's table: the **default** ``audit-tenants`` against each leaky service of
``security/leaky_round3.py`` and its honest twin, each served on 127.0.0.1 (``tests/servers.py``).

    PYTHONPATH=src python bench/red_team_round3.py [STYLE,STYLE...] [--extra audit-tenants flags]

One line per audit: style, leaky or honest, exit code, verdict, leak records, unattributed chunks and
requests sent. ``jwt-claims`` and ``duplicate-key`` are audited with ``--endpoint-keys`` (the keys the
service issues: HS256 JWTs, opaque keys). The figures in docs/security.md ("Red team, round 3") come
from this script; about 5 s per audit on 2 shared cores.
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
from ragaudit.security.leaky_round3 import ROUND3_STYLES, Round3Service, make_round3_service  # noqa: E402
from red_team_audit import audit_line  # noqa: E402
from servers import Reply, Request  # noqa: E402

KB = ROOT / "src" / "ragaudit" / "demo_data" / "kb"
KEYED = ("jwt-claims", "duplicate-key")


def _wire(service: Round3Service) -> Any:
    def handle(request: Request) -> Reply:
        params = dict(parse_qsl(urlsplit(request.path).query))
        try:
            body = request.json()
        except ValueError:
            body = {}
        path = urlsplit(request.path).path
        status, answer, headers = service.respond(body, request.headers, params, request.body, path)
        return Reply(status=status, body=answer, headers=headers)

    return handle


def audit(style: str, honest: bool, work: Path, extra: list[str]) -> str:
    chunks = chunk_corpus(load_corpus(KB / "corpus.jsonl"), make_chunker("whole"))
    service = make_round3_service(style, chunks, honest=honest)
    flags = list(extra)
    if style in KEYED:
        keys = work / f"{style}-keys.toml"
        keys.write_text("[tenants]\n" + "".join(f'{t} = "{k}"\n' for t, k in service.keys().items()))
        flags += ["--endpoint-keys", str(keys)]
    out = work / f"{style}-{'honest' if honest else 'leaky'}.json"
    return audit_line(_wire(service), style, honest, KB / "corpus.jsonl", out, flags)


def run(argv: list[str]) -> int:
    styles = argv[0].split(",") if argv and not argv[0].startswith("-") else list(ROUND3_STYLES)
    extra = argv[argv.index("--extra") + 1 :] if "--extra" in argv else []
    with tempfile.TemporaryDirectory() as tmp:
        for style in styles:
            for honest in (False, True):
                print(audit(style, honest, Path(tmp), extra), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(run(sys.argv[1:]))
