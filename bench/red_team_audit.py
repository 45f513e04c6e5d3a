"""What the red-team scripts (``bench/red_team_round3.py``, ``bench/red_team_round4.py``) share: one
**default** ``audit-tenants`` of a service served on 127.0.0.1 (``tests/servers.py``), as one line of
their tables (style, leaky or honest, exit code, verdict, leak records, unattributed chunks, requests
sent, seconds)."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from ragaudit.cli.main import main  # noqa: E402
from servers import LocalServer, Reply, Request  # noqa: E402


def audit_line(
    handle: Callable[[Request], Reply],
    style: str,
    honest: bool,
    corpus: Path,
    out: Path,
    flags: Sequence[str] = (),
) -> str:
    """Serve ``handle``, audit it with the defaults (plus ``flags``) into ``out``, and say what came out."""
    started = time.perf_counter()
    with LocalServer(handle) as server:
        code = main(
            [
                *("audit-tenants", "--corpus", str(corpus), "--endpoint", server.url),
                *("--out", str(out), "--no-progress", "--quiet", *flags),
            ]
        )
    report = json.loads(out.read_text(encoding="utf-8"))
    return (
        f"{style:18} {'honest' if honest else 'leaky':6} exit {code} {report['verdict']:12} "
        f"leaks {report['leaks']['count']:>6} unattributed {report['unattributed']['count']} "
        f"requests {report['requests']['total']} ({time.perf_counter() - started:.0f} s)"
    )
