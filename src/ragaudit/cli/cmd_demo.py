"""``ragaudit demo``: the main job on the bundled multi-tenant knowledge base, end to end."""

from __future__ import annotations

import argparse

HELP = "run bm25 / dense / hybrid on the bundled demo knowledge base"


EXAMPLES = """\
ragaudit demo                                   # bm25, dense, hybrid on the bundled data
ragaudit demo --pipelines bm25,hybrid --out-dir reports/quick
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out-dir", default="reports/demo", help="where the reports go (default reports/demo)"
    )
    parser.add_argument(
        "--pipelines",
        default="bm25,dense,hybrid",
        help="comma-separated presets or pipeline TOML files (default %(default)s)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    from importlib.resources import files

    from ragaudit.cli import cmd_bench

    kb = files("ragaudit") / "demo_data" / "kb"
    print(f"demo knowledge base: {kb}")
    # the bench command's own parser fills every default, so the demo never drifts from `ragaudit bench`
    bench_parser = argparse.ArgumentParser(prog="ragaudit bench", allow_abbrev=False)
    cmd_bench.configure(bench_parser)
    bench_args = bench_parser.parse_args(
        ["--dataset", str(kb / "golden.jsonl"), "--corpus", str(kb / "corpus.jsonl"), "--pipelines", args.pipelines,
         "--metrics", "nDCG@10,R@5,R@10,MRR@10,P@5", "--out-dir", args.out_dir]
        + (["--no-progress"] if args.no_progress else [])
    )  # fmt: skip
    code = cmd_bench.run(bench_args)
    if code != 0:
        return code
    audit = audit_winner(args.out_dir, args.pipelines)
    return report_and_gate(args.out_dir, audit)


QUICK_AUDIT = ["--rounds", "1", "--top-k-values", "10", "--max-top-k", "10"]
"""The demo's tenant audit: every probe asked by its owner, by every other tenant and as hostile ids,
once, at top_k 10 (about 600 requests, a few seconds); the full audit's defaults send about 3,200."""
QUICK_AUDIT_FLOOR = 500
"""The demo's gate takes its one-round audit (about 700 requests) as verification only because its
policy lowers ``[security] min_audit_requests`` (default 3,000) to this; the gate's security line says
so (docs/gates.md)."""


def audit_winner(out_dir: str, pipelines: str) -> str:
    """Audit tenant isolation of the benchmark's winner (the pipeline the gate judges) across tenants
    with :data:`QUICK_AUDIT`; print its verdict and return the audit report's path. Only such a
    cross-tenant audit verifies isolation: the benchmark asked each golden question as its own tenant."""
    import contextlib
    import io
    import json
    from importlib.resources import files
    from pathlib import Path

    from ragaudit.cli import cmd_audit_tenants
    from ragaudit.pipelines.config import resolve_pipeline

    out = Path(out_dir)
    benchmark = json.loads((out / "benchmark.json").read_text(encoding="utf-8"))
    winner = str((benchmark.get("ranking") or {}).get("winner") or benchmark["pipelines"][0]["name"])
    given = [p.strip() for p in pipelines.split(",") if p.strip()]
    spec = next((p for p in given if resolve_pipeline(p).name == winner), winner)
    kb = files("ragaudit") / "demo_data" / "kb"
    path = out / f"audit-{winner}.json"
    parser = argparse.ArgumentParser(prog="ragaudit audit-tenants", allow_abbrev=False)
    cmd_audit_tenants.configure(parser)
    audit_args = parser.parse_args(
        ["--corpus", str(kb / "corpus.jsonl"), "--pipeline", spec, "--canaries", str(kb / "canaries.jsonl"),
         "--out", str(path), "--no-progress", *QUICK_AUDIT]
    )  # fmt: skip
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        cmd_audit_tenants.run(audit_args)
    print()
    print(f"tenant audit of {winner} (one round at top_k 10; the full audit: ragaudit audit-tenants):")
    for line in printed.getvalue().splitlines():
        if line.startswith(("requests:", "detection power:", "verdict:")):
            print(f"  {line}")
    print(f"  report: {path}")
    return str(path)


def report_and_gate(out_dir: str, audit: str | None = None) -> int:
    """Write one page per pipeline and the page comparing them all (ranked, winner, significance, cost,
    leaks, recommendation); gate the winner against the baseline with the policy ``ragaudit init``
    writes, and with the tenant ``audit`` of the winner (without one, tenant isolation is not verified),
    and show the verdict on the comparison page. The last line printed is that page's path.

    Returns the gate's exit code: 0 only when every gate passed, 1 when one failed or could not verify
    what it guards (unless the policy accepts that); the pages are written either way."""
    import json
    from dataclasses import replace
    from importlib.resources import as_file, files
    from pathlib import Path

    from ragaudit.gates.policy import bundled_policy
    from ragaudit.gates.verdict import run_gates
    from ragaudit.report.bench_pages import write_bench_pages
    from ragaudit.report.terminal import render_terminal
    from ragaudit.report.view import dataset_queries

    out = Path(out_dir)
    benchmark = json.loads((out / "benchmark.json").read_text(encoding="utf-8"))
    with as_file(files("ragaudit") / "demo_data" / "kb" / "golden.jsonl") as golden:
        queries = dataset_queries(golden)
    ranking = benchmark.get("ranking") or {}
    winner = str(ranking.get("winner") or benchmark["pipelines"][0]["name"])
    baseline = str(benchmark["baseline"])
    verdict = run_gates(
        out / f"{winner}.json",
        replace(bundled_policy(), min_audit_requests=QUICK_AUDIT_FLOOR),
        baseline_path=out / f"{baseline}.json" if winner != baseline else None,
        audit_paths=[audit] if audit else (),
    )
    verdict.write_json(out / "verdict.json")
    pages, page = write_bench_pages(out, queries, gate=verdict.to_dict())
    print()
    print(render_terminal(verdict.to_dict()))
    print(f"pages per pipeline: {', '.join(str(out / p) for p in pages.values())}")
    what = f"comparison of all {len(pages)} pipelines" if len(pages) > 1 else "the pipeline's summary"
    print(f"{what} (open this): {page.resolve()}")
    return verdict.exit_code
