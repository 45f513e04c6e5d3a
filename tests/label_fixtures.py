"""Shared pieces of the labeling tests: a small pool over the demo KB, and a real workbench server process.

``LabelServer`` starts ``ragaudit label`` in its own process (``python -m ragaudit.cli.main``), reads the
URL and token it prints, and talks to it over real HTTP on 127.0.0.1; ``kill()`` sends SIGKILL.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import ModuleType
from typing import Any

from conftest import KB

SRC = Path(__file__).resolve().parents[1] / "src"
BUILD_DEMO_KB = Path(__file__).resolve().parents[1] / "scripts" / "build_demo_kb.py"
CASES = ("acme-pricing-001", "acme-warranty-001", "globex-pricing-001", "initech-unanswerable-001")


def skip_without_sklearn() -> None:
    """Skip the calling test module when scikit-learn (the ``dev`` extra) is absent; found, not imported."""
    if importlib.util.find_spec("sklearn") is None:
        import pytest

        pytest.skip("scikit-learn is not installed (the dev extra)", allow_module_level=True)


def sklearn_kappa(a: Any, b: Any, weights: str | None) -> float:
    """scikit-learn's Cohen's kappa, the reference the agreement tests compare with. Imported at use:
    ``sklearn.metrics`` takes about a second to import, which every pytest-xdist worker paid while
    collecting, whatever it ran."""
    from sklearn.metrics import cohen_kappa_score

    return float(cohen_kappa_score(a, b, weights=weights))


def load_build_demo_kb() -> ModuleType:
    """``scripts/build_demo_kb.py`` imported as a module (it is a script, not a package module)."""
    spec = importlib.util.spec_from_file_location("build_demo_kb", BUILD_DEMO_KB)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their module while the class is created
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


def written_grades() -> dict[str, dict[str, int]]:
    """The grades written with each demo KB case (``Case.grades`` in ``scripts/build_demo_kb.py``).

    The shipped golden set is complete (every document of the tenant judged, see the KB's README), so a
    pool over it has nothing to judge; the labeling tests need a golden set with holes, the one before
    the pooled judgments.
    """
    module = load_build_demo_kb()
    return {
        case.id: {f"{case.tenant}-{slug}": grade for slug, grade in case.grades.items()}
        for case in module.CASES
    }


def small_golden(folder: Path, cases: tuple[str, ...] = CASES) -> Path:
    """A golden file with a few demo KB cases, with the grades written with them (what the pool carries
    over), not the complete judgments the KB ships."""
    written = written_grades()
    records = [json.loads(ln) for ln in (KB / "golden.jsonl").read_text(encoding="utf-8").splitlines()]
    lines = [
        json.dumps({**record, "relevance": written[record["id"]]})
        for record in records
        if record["id"] in cases
    ]
    path = folder / "golden.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def trec_run(folder: Path, name: str, ranking: dict[str, list[str]]) -> Path:
    path = folder / f"{name}.trec"
    with path.open("w", encoding="utf-8") as out:
        for case_id, docs in ranking.items():
            for rank, doc in enumerate(docs, start=1):
                out.write(f"{case_id} Q0 {doc} {rank} {100 - rank} {name}\n")
    return path


def small_pool(folder: Path, depth: int = 3) -> Path:
    """A pool of the small golden set over the demo KB from one run file (fast: no index to build)."""
    from ragaudit.cli.main import main

    golden = small_golden(folder)
    run = trec_run(
        folder,
        "sys",
        {
            "acme-pricing-001": [
                "acme-pricing-professional-v3",
                "acme-faq-billing",
                "acme-pricing-professional-v2",
            ],
            "acme-warranty-001": [
                "acme-warranty-policy-v2",
                "acme-warranty-policy-v1",
                "acme-returns-policy",
            ],
            "globex-pricing-001": ["globex-pricing-professional-v2", "globex-faq-billing"],
            "initech-unanswerable-001": ["initech-faq-billing"],
        },
    )
    out = folder / "pool.jsonl"
    args = ["pool", "--dataset", str(golden), "--corpus", str(KB / "corpus.jsonl"), "--runs", str(run)]
    assert main([*args, "--depth", str(depth), "--out", str(out)]) == 0
    return out


class LabelServer:
    """``ragaudit label POOL --out FILE`` in a subprocess, with its URL and token."""

    def __init__(self, pool: Path, out: Path, annotator: str = "ana", *extra: str) -> None:
        env = {**os.environ, "PYTHONPATH": str(SRC)}
        cmd = [sys.executable, "-m", "ragaudit.cli.main", "label", str(pool), "--out", str(out)]
        self.proc = subprocess.Popen(
            [*cmd, "--annotator", annotator, "--no-browser", *extra],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
        )
        self.url = ""
        self.lines: list[str] = []
        deadline = time.monotonic() + 60
        assert self.proc.stdout is not None
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                raise AssertionError(f"label server exited early: {''.join(self.lines)}")
            self.lines.append(line)
            if line.startswith("workbench: "):
                self.url = line.split(" ", 1)[1].strip()
                break
        assert self.url, "the label server printed no URL"
        self.base = self.url.split("/?", 1)[0]
        self.token = self.url.split("token=", 1)[1]
        self._wait_ready()

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                self.call("GET", "/api/state")
                return
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.05)
        raise AssertionError("the label server did not answer")

    def call(self, method: str, path: str, body: Any = None, token: str | None = "") -> Any:
        """One request; returns the JSON answer, or raises HTTPError with the status."""
        headers = {"Content-Type": "application/json"}
        if token is not None:
            headers["X-Ragaudit-Token"] = token or self.token
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method, headers=headers)
        with urllib.request.urlopen(request, timeout=10) as answer:
            return json.loads(answer.read())

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs."""
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
