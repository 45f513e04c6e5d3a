"""``ragaudit label``: the labeling workbench in the browser; ``ragaudit label merge``: judgments to a golden set.

``ragaudit label POOL --out FILE [--annotator NAME]`` serves the workbench on 127.0.0.1 with a session
token and appends every judgment to FILE (fsynced; restarting resumes). ``--adjudicate A.jsonl B.jsonl``
is the adjudication page: it shows those annotators' grades next to each candidate and opens on
their disagreements only.

``ragaudit label merge FILES... --into GOLDEN [--pool POOL]`` writes the golden set
(:mod:`ragaudit.labeling.merge`).
"""

from __future__ import annotations

import argparse
import getpass
import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ragaudit.labeling.judgments import AnnotatorLabels
    from ragaudit.labeling.pool import Pool

WATCHED = False
"""A server waiting for key presses: no "still running" lines (``ragaudit.cli.console.watching``)."""
HELP = "label a pool in the browser (keyboard grading, evidence spans, undo), or 'label merge' judgments"
NAME = re.compile(r"^[\w.@-]{1,64}$")


EXAMPLES = """\
ragaudit label pool.jsonl --out judgments/ana.jsonl --annotator ana
ragaudit label merge judgments/*.jsonl --into golden.jsonl
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "inputs", nargs="+", metavar="POOL | merge FILES", help="a pool file, or 'merge' and judgments files"
    )
    parser.add_argument("--out", help="label: this annotator's judgments file (appended; resumes)")
    parser.add_argument("--annotator", help="label: who is labeling (default: the login name)")
    parser.add_argument("--port", type=int, default=0, help="label: port on 127.0.0.1 (default: a free one)")
    parser.add_argument(
        "--no-browser", action="store_true", help="label: print the URL, do not open a browser"
    )
    parser.add_argument(
        "--adjudicate", nargs="+", default=[], metavar="FILE", help="label: show these annotators' grades"
    )
    parser.add_argument("--into", help="merge: the golden JSONL to write")
    parser.add_argument("--pool", help="merge: the pool (default: the one the judgments were made on)")
    parser.add_argument(
        "--relevant-from", type=int, default=2, help="merge: lowest grade listed as relevant (default 2)"
    )
    parser.add_argument(
        "--resolve", choices=["median", "min", "max"], default="median", help="merge: disagreeing grades"
    )
    parser.add_argument("--adjudicator", help="merge: this annotator's grade wins where given")


def run(args: argparse.Namespace) -> int:
    if args.inputs[0] == "merge":
        return _merge(args)
    return _label(args)


def _usage(where: str, message: str, fix: str) -> None:
    from ragaudit.errors import InputError

    raise InputError(where, None, message, fix)


def _label(args: argparse.Namespace) -> int:
    import secrets
    import webbrowser

    from ragaudit.artifacts.provenance import sha256_of
    from ragaudit.labeling.judgments import JudgmentLog, read_labels
    from ragaudit.labeling.pool import load_pool
    from ragaudit.labeling.server import bind_loopback, require_server_libraries, serve
    from ragaudit.labeling.session import LabelSession

    if len(args.inputs) != 1:
        _usage("label", "give one pool file", "ragaudit label pool.jsonl --out judgments/NAME.jsonl")
    if not args.out:
        _usage(
            "--out",
            "where should the judgments go?",
            "add --out judgments/NAME.jsonl (one file per annotator)",
        )
    if not 0 <= args.port <= 65535:
        _usage("--port", f"not a port: {args.port}", "use 0 (a free port) or 1024-65535")
    annotator = args.annotator or getpass.getuser() or "annotator"
    if not NAME.match(annotator):
        _usage("--annotator", f"{annotator!r} is not a usable name", "letters, digits, . _ @ - (at most 64)")
    require_server_libraries()
    pool_path = args.inputs[0]
    pool = load_pool(pool_path)
    others = [read_labels(p) for p in args.adjudicate]
    info = {"pool": str(Path(pool_path).resolve()), "pool_sha256": sha256_of(pool_path)}
    log = JudgmentLog(args.out, annotator, info)
    token = secrets.token_urlsafe(24)
    sock = bind_loopback(args.port)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/?token={token}"
    session = LabelSession(pool, log, others)
    session.pool_payload()  # built once, before the first page load asks for it
    done = sum(1 for key in log.state.grades if key in session.candidates)
    print(
        f"labeling {pool_path} as {annotator} into {args.out} "
        f"({done} judgments already there; {pool.candidates} candidates, {pool.unjudged} not carried over)"
    )
    print(f"workbench: {url}", flush=True)
    print("stop with Ctrl-C (every acknowledged judgment is already on disk)", flush=True)
    if not args.no_browser:
        webbrowser.open(url)
    try:
        serve(session, sock, token)
    finally:
        log.close()
    print(f"judgments saved in {args.out}")
    return 0


def _pool_of(files: list[AnnotatorLabels], given: str | None) -> Pool:
    from ragaudit.labeling.pool import load_pool

    if given:
        return load_pool(given)
    recorded = {
        str(e.get("pool")) for a in files for e in a.events if e.get("kind") == "open" and e.get("pool")
    }
    if len(recorded) != 1:
        _usage("--pool", "the judgments name no single pool", "add --pool pool.jsonl")
    return load_pool(recorded.pop())


def _merge(args: argparse.Namespace) -> int:
    from ragaudit.labeling.judgments import read_labels
    from ragaudit.labeling.merge import merge_judgments

    files = args.inputs[1:]
    if not files:
        _usage(
            "label merge",
            "no judgments files given",
            "ragaudit label merge judgments/*.jsonl --into golden.jsonl",
        )
    if not args.into:
        _usage("--into", "where should the golden set go?", "add --into golden.jsonl")
    if args.relevant_from not in (1, 2, 3):
        _usage(
            "--relevant-from",
            f"must be 1, 2 or 3 (got {args.relevant_from})",
            "grade 0 is never relevant; e.g. 2",
        )
    labels = [read_labels(p) for p in files]
    names = [a.annotator for a in labels]
    if len(set(names)) != len(names):
        _usage(
            files[0], f"two files hold the same annotator ({', '.join(names)})", "pass one file per annotator"
        )
    pool = _pool_of(labels, args.pool)
    result = merge_judgments(
        pool, labels, relevant_from=args.relevant_from, resolve=args.resolve, adjudicator=args.adjudicator
    )
    result.write(args.into)
    print(
        f"merged {len(labels)} annotators ({', '.join(names)}) into {args.into}: {len(result.cases)} cases, "
        f"{result.disagreements} disagreeing pairs resolved by {args.adjudicator or args.resolve}"
    )
    if result.unjudged:
        print(f"warning: {result.unjudged} pooled candidates are still unjudged (left out of the golden set)")
    if result.incomplete:
        shown = ", ".join(result.incomplete[:10]) + (" ..." if len(result.incomplete) > 10 else "")
        print(
            f"warning: {len(result.incomplete)} cases left out: nothing relevant and not marked unanswerable: {shown}"
        )
    if result.dropped_drafts:
        print(f"{len(result.dropped_drafts)} drafted unanswerable probes not accepted (dropped)")
    if result.conflicts:
        print(
            f"warning: marked unanswerable but graded relevant (kept answerable): {', '.join(result.conflicts)}"
        )
    return 0
