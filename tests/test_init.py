"""``ragaudit init``: the lesson's layout in a user's repository, commented, never overwriting a file;
the scaffolded tests run green on the demo knowledge base and the scaffolded policy gates their report."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

import ragaudit.pipelines.build
import ragaudit.retrieval.bm25  # noqa: F401  (imported once here, not again in the in-process run)
from ragaudit.cli.main import main
from ragaudit.data.golden_jsonl import load_golden_jsonl
from ragaudit.gates.policy import load_policy
from ragaudit.templates import SCAFFOLD, scaffold, template_text

pytest_plugins = ["pytester"]

PLUGIN_ARGS: tuple[str, ...] = (
    ()
    if any(ep.name == "ragaudit" for ep in entry_points(group="pytest11"))
    else ("-p", "ragaudit.pytest_plugin")
)
DOCS_WORKFLOW = Path(__file__).resolve().parents[1] / "docs" / "ci" / "ragaudit.yml"
FILES = [
    "tests/evals/datasets/retrieval_v1.jsonl",
    "tests/evals/datasets/README.md",
    "tests/evals/test_retrieval.py",
    "gates.toml",
    ".github/workflows/ragaudit.yml",
]


def test_init_writes_the_lessons_layout_with_comments(tmp_path: Path) -> None:
    result = scaffold(tmp_path / "repo")
    root = tmp_path / "repo"
    assert [p.relative_to(root).as_posix() for p, _ in result.written] == FILES and not result.skipped
    dataset = load_golden_jsonl(root / FILES[0])
    assert len(dataset.cases) >= 8 and any(not c.is_answerable(1) for c in dataset.cases)
    assert (
        '"relevant_chunk_ids"' in (root / FILES[1]).read_text()
        and "unanswerable" in (root / FILES[1]).read_text()
    )
    test_file = (root / FILES[2]).read_text()
    compile(test_file, FILES[2], "exec")
    assert "pytest.mark.ragaudit(" in test_file and "@pytest.mark.security" in test_file
    assert "@pytest.mark.retrieval_eval" in test_file and "# " in test_file
    policy = load_policy(root / "gates.toml")
    assert policy.floors == {"nDCG@10": 0.70, "R@5": 0.85} and policy.max_leaks == 0
    assert (root / "gates.toml").read_text().count("\n#") >= 3
    workflow = (root / FILES[4]).read_text()
    assert workflow.startswith("#") and "ragaudit gate" in workflow and "pytest tests/evals" in workflow


def test_the_workflow_is_valid_yaml_and_the_docs_copy_is_the_same() -> None:
    text = template_text("github/workflows/ragaudit.yml")
    assert DOCS_WORKFLOW.read_text(encoding="utf-8") == text
    yaml = pytest.importorskip("yaml")
    workflow = yaml.safe_load(text)
    steps = workflow["jobs"]["retrieval-gates"]["steps"]
    gate = next(s for s in steps if s.get("name") == "Release gates")
    assert gate["if"] == "always()" and "--policy gates.toml" in gate["run"]


def test_init_never_overwrites_and_reports_skipped_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mine = tmp_path / "gates.toml"
    mine.write_text("# my own policy\n", encoding="utf-8")
    fast = ["--install", "ragaudit[bm25]"]  # no wheel build: this test is about not overwriting
    assert main(["init", str(tmp_path), *fast]) == 0
    out = capsys.readouterr().out
    assert (
        f"skipped  {mine}  - exists, not overwritten" in out and out.count("created  ") == len(SCAFFOLD) - 1
    )
    assert mine.read_text() == "# my own policy\n"
    assert main(["init", str(tmp_path), *fast]) == 0
    assert capsys.readouterr().out.count("skipped  ") == len(SCAFFOLD)
    assert main(["init", str(mine)]) == 2 and "is a file, not a folder" in capsys.readouterr().err


def test_the_scaffolded_project_passes_its_tests_and_its_gates(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    scaffold(pytester.path)
    report = pytester.path / "reports" / "eval.json"
    audit = pytester.path / "reports" / "audit.json"
    result = pytester.runpytest(
        *PLUGIN_ARGS,
        "-p",
        "no:cacheprovider",
        "-p",
        "no:hypothesispytest",
        "--strict-markers",
        "tests/evals",
        "--ragaudit-report",
        str(report),
        "--ragaudit-audit-report",
        str(audit),
    )
    result.assert_outcomes(passed=3)
    assert json.loads(report.read_text())["counts"]["cases"] >= 8
    capsys.readouterr()
    policy = str(pytester.path / "gates.toml")
    assert main(["gate", str(report), "--policy", policy]) == 1  # own-tenant queries verify no isolation
    assert "[NOT VERIFIED] security" in capsys.readouterr().out
    assert main(["gate", str(report), "--policy", policy, "--audit", str(audit)]) == 0
    text = capsys.readouterr().out
    assert "ragaudit gate: PASS (4 gates)" in text and f"verified by audit {audit}" in text


LEAKY_MODULE = """
from ragaudit.security.leaky import _demo_chunks, make_leaky


def make():
    # tenant-partitioned BM25 except pages of more than 20 results, served unfiltered: one query at
    # top_k 10 never sees it, the tenant audit's top_k 50 does
    return make_leaky("top-k-path", _demo_chunks())
"""


def test_the_scaffolded_leak_test_runs_the_full_audit_and_catches_a_conditional_leak(
    pytester: pytest.Pytester,
) -> None:
    scaffold(pytester.path)
    pytester.makepyfile(leaky_topk=LEAKY_MODULE)
    pytester.syspathinsert()
    result = pytester.runpytest(
        *PLUGIN_ARGS,
        "-p",
        "no:cacheprovider",
        "-p",
        "no:hypothesispytest",
        "tests/evals",
        "-m",
        "security",
        "-k",
        "tenants_chunks",
        "--ragaudit-retriever",
        "leaky_topk:make",
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*tenant audit: leak*"])


def test_init_from_a_clone_builds_a_wheel_the_workflow_installs_offline(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    assert main(["init", str(repo)]) == 0
    workflow = (repo / ".github" / "workflows" / "ragaudit.yml").read_text(encoding="utf-8")
    found = re.search(r'pip install "([^"]+)" pytest', workflow)
    assert found is not None and "ragaudit[bm25]" not in workflow
    spec = found.group(1)
    assert spec.startswith("vendor/ragaudit-") and spec.endswith(".whl[bm25]")
    wheel = repo / spec.removesuffix("[bm25]")
    assert wheel.is_file()
    # offline: no index; the dependencies are this environment's, ragaudit is the wheel's
    site = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            "--target",
            str(site),
            str(wheel),
        ],
        check=True,
        capture_output=True,
    )
    env = {**os.environ, "PYTHONPATH": str(site)}
    origin = subprocess.run(
        [sys.executable, "-c", "import ragaudit; print(ragaudit.__file__)"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert origin.stdout.startswith(str(site))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/evals"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0 and "3 passed" in proc.stdout, proc.stdout[-2000:]
    assert not (repo / "build").exists() and not list(repo.glob("**/*.egg-info"))
