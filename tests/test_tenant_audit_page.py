"""A failed tenant audit's page and Markdown show what leaked (issue 24), not only how many: probe, who
asked and how, chunk, rank, owner, how the owner was established and the JSON path, cut with a stated
"first N of M" (the report lists the first --max-records)."""

from __future__ import annotations

import json
from pathlib import Path

from ragaudit.cli.main import main
from ragaudit.report.html import render_html
from ragaudit.report.markdown import render_markdown
from ragaudit.report.view import build_view

KB = Path(__file__).resolve().parents[1] / "src" / "ragaudit" / "demo_data" / "kb"


def test_the_leak_table_is_on_the_page_and_in_markdown(tmp_path: Path) -> None:
    out = tmp_path / "audit.json"
    args = ["audit-tenants", "--corpus", str(KB / "corpus.jsonl"), "--retriever",
            "ragaudit.security.leaky:demo_relabeling", "--out", str(out), "--probes-per-tenant", "2",
            "--top-k-values", "10", "--concurrency-levels", "4", "--budget", "0", "--no-progress",
            "--max-records", "3"]  # fmt: skip
    assert main(args) == 1
    report = json.loads(out.read_text(encoding="utf-8"))
    total, first = report["leaks"]["count"], report["leaks"]["records"][0]
    assert total > 3 and len(report["leaks"]["records"]) == 3
    page = render_html(build_view(report))
    section = page.split('<section id="tenant-audit">')[1].split("</section>")[0]
    for header in ("probe", "asked as", "how asked", "chunk", "rank", "owner", "attributed by", "JSON path"):
        assert f"<th>{header}</th>" in section, header
    assert section.count('<td data-label="chunk">') == 3 and first["chunk_id"] in section
    assert first["probe"]["id"] in section and first["attributed_by"] in section
    assert f"first 3 of {total} shown; all {total} are in the JSON report" in section
    paths = [f["path"] for f in first.get("fields", [])]
    assert all(p in section for p in paths)
    markdown = render_markdown(build_view(report))
    assert first["chunk_id"].replace("_", "\\_") in markdown and "| how asked |" in markdown
    assert f"first 3 of {total} shown" in markdown
