"""The HTML pages of a benchmark folder: one page per pipeline (its eval report against the baseline,
every query drillable) and the comparison page that links them (the ``benchmark`` report).

``ragaudit demo`` and ``ragaudit bench --html`` write them next to the reports the benchmark wrote::

    pages, page = write_bench_pages(folder, queries, gate=verdict)   # {pipeline: "hybrid.html"}, report.html
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ragaudit.report.html import render_html
from ragaudit.report.view import build_view


def _read(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def write_pipeline_pages(
    folder: str | Path,
    benchmark: Mapping[str, Any],
    queries: Mapping[str, str] | None = None,
    *,
    resamples: int = 10_000,
) -> dict[str, str]:
    """Write ``<pipeline>.html`` for each pipeline of ``benchmark`` from ``<pipeline>.json`` in
    ``folder`` (against the baseline's report, except the baseline's own page); return
    ``{pipeline: file name}`` (relative links, so the folder can move)."""
    root = Path(folder)
    baseline_name = str(benchmark.get("baseline", ""))
    base_path = root / f"{baseline_name}.json"
    base = _read(base_path) if base_path.is_file() else None
    pages: dict[str, str] = {}
    for entry in benchmark.get("pipelines", []):
        name = str(entry["name"])
        path = root / f"{name}.json"
        against = base if name != baseline_name else None
        view = build_view(
            _read(path),
            against,
            report_path=str(path),
            baseline_path=baseline_name,
            queries=queries,
            resamples=resamples,
        )
        page = f"{name}.html"
        (root / page).write_text(render_html(view), encoding="utf-8")
        pages[name] = page
    return pages


def write_comparison_page(
    out: str | Path,
    benchmark: Mapping[str, Any],
    pages: Mapping[str, str] | None = None,
    *,
    gate: Mapping[str, Any] | None = None,
) -> Path:
    """Write the page comparing every pipeline (the ``benchmark`` report, with links to ``pages`` and
    the ``gate`` verdict of the recommended pipeline in its header); return its path."""
    report = {
        **benchmark,
        **({"pages": dict(pages)} if pages else {}),
        **({"gate": dict(gate)} if gate else {}),
    }
    path = Path(out)
    path.write_text(render_html(build_view(report, report_path=str(path))), encoding="utf-8")
    return path


def write_bench_pages(
    folder: str | Path,
    queries: Mapping[str, str] | None = None,
    *,
    gate: Mapping[str, Any] | None = None,
    resamples: int = 10_000,
) -> tuple[dict[str, str], Path]:
    """Both of the above from ``folder/benchmark.json``: ``({pipeline: page}, path of report.html)``."""
    root = Path(folder)
    benchmark = _read(root / "benchmark.json")
    pages = write_pipeline_pages(root, benchmark, queries, resamples=resamples)
    return pages, write_comparison_page(root / "report.html", benchmark, pages, gate=gate)
