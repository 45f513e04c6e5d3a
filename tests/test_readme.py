"""Every command of the README works when pasted into a fresh clone: the ``bash`` blocks are read from
README.md and run in order, in one shell, in a temporary copy of the repository (the files git tracks
or would track), on the demo data the README names; then each ``python`` block runs there too. Only what cannot run here is left out, each with
its reason (:data:`LEFT_OUT`); the person grading in ``ragaudit label`` is stood in for by judgments
written through the labeling API (:data:`STAND_IN_LABELS`)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"

LEFT_OUT: dict[str, str] = {
    "make ": "sets up .venv with pip (network, minutes); the demo it runs is tested in test_demo_kb.py",
    "pip install ": "installs ragaudit; the test runs the ragaudit of this checkout",
}
"""Commands left out by their first words, with the reason."""

STAND_IN_LABELS = """
import sys
from ragaudit.labeling.judgments import JudgmentLog
from ragaudit.labeling.pool import load_pool
from ragaudit.labeling.session import LabelSession

pool_path, folder = sys.argv[1], sys.argv[2]
pool = load_pool(pool_path)
for annotator, shift in (("ana", 0), ("bob", 1)):
    log = JudgmentLog(f"{folder}/{annotator}.jsonl", annotator, {"pool": pool_path})
    session = LabelSession(pool, log)
    for n, case in enumerate(pool.cases):
        for rank, candidate in enumerate(case.candidates[:4]):
            grade = max(0, 2 - rank) if (n + rank + shift) % 5 else min(3, 3 - rank)
            session.judge({"case_id": case.case_id, "chunk_id": candidate.chunk_id, "grade": grade,
                           "superseded": False})
    log.close()
print("stand-in: judgments/ana.jsonl and judgments/bob.jsonl written")
"""
"""What two annotators grading the pool in ``ragaudit label`` would leave: judgments files written
through the same session API the web page uses (grades from the pool order, disagreeing on a few)."""


def readme_commands(text: str) -> list[str]:
    """The commands of the README's ``bash`` blocks, in order: continuation lines joined, comments and
    blank lines dropped (a trailing ``# comment`` stays: bash ignores it)."""
    commands: list[str] = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.DOTALL):
        pending = ""
        for line in block.splitlines():
            if pending:
                line = pending + " " + line.strip()
                pending = ""
            if line.rstrip().endswith("\\"):
                pending = line.rstrip()[:-1].rstrip()
                continue
            if line.strip() and not line.lstrip().startswith("#"):
                commands.append(line.strip())
    return commands


def _left_out(command: str) -> str | None:
    return next((why for start, why in LEFT_OUT.items() if command.startswith(start)), None)


def _copy_checkout(dest: Path) -> None:
    """The files of this checkout that git tracks or would track (a fresh clone plus uncommitted work)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if not source.exists() and not source.is_symlink():
            continue  # deleted in the working tree
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            target.symlink_to(os.readlink(source))
        else:
            shutil.copy2(source, target)


def _commit_all(clone: Path) -> None:
    """Make the copy a clone: a git repository with every copied file committed."""
    git = ["git", "-c", "user.name=readme", "-c", "user.email=readme@example.invalid"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "clone"]):
        subprocess.run([*git, *args], cwd=clone, check=True, capture_output=True)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_the_readme_is_read_as_commands() -> None:
    commands = readme_commands(README.read_text(encoding="utf-8"))
    assert any(c.startswith("ragaudit eval") and "--retriever" in c for c in commands)
    assert any(c.startswith("ragaudit import beir examples/") for c in commands)
    assert not any("../shared" in c for c in commands)  # only paths that exist in a clone


@pytest.mark.slow  # ~40 commands, several load the embedding model: 1-2 min on two cores
def test_every_readme_command_runs_in_a_fresh_copy(tmp_path: Path) -> None:
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the files of a clone cannot be listed")
    clone = tmp_path / "clone"
    _copy_checkout(clone)
    _commit_all(clone)
    port = _free_port()
    serve_port = next(p for p in iter(_free_port, None) if p != port)
    stand_in = tmp_path / "stand_in_labels.py"  # outside the clone: the clone must stay clean
    lines = ["set -eo pipefail"]
    ran: list[str] = []
    for command in readme_commands(README.read_text(encoding="utf-8")):
        if _left_out(command):
            continue
        if command.startswith("ragaudit label ") and not command.startswith("ragaudit label merge"):
            pool = shlex.split(command)[2]
            lines.append(f"echo '::: stand-in for: {command}' >&2")
            folder = shlex.split(command)[shlex.split(command).index("--out") + 1].rpartition("/")[0]
            lines.append(f"mkdir -p {folder} && python {stand_in} {pool} {folder}")
            continue
        command = command.replace("localhost:8000", f"localhost:{port}")
        command = command.replace("localhost:8001", f"localhost:{serve_port}").replace(
            "--port 8001", f"--port {serve_port}"
        )
        command = command.replace("search_service.py start", f"search_service.py start --port {port}")
        ran.append(command)
        lines.append(f"echo {shlex.quote('::: ' + command)} >&2")
        lines.append(command)
    stand_in.write_text(STAND_IN_LABELS, encoding="utf-8")
    script = tmp_path / "readme.sh"
    script.write_text("\n".join(lines) + "\n", encoding="utf-8")
    bin_dir = Path(sys.executable).parent
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(clone / "src"),  # the ragaudit of the copy, through the installed entry point
        "RAGAUDIT_HISTORY": str(tmp_path / "history.sqlite"),
        "HF_HUB_OFFLINE": "1",
    }
    # Python's default in a fresh clone: the first command writes the copy's bytecode (git ignores
    # __pycache__/; the clean-clone check below still runs) and the later ones read it, instead of each
    # of the ~46 commands compiling the sources again when the test runner has PYTHONDONTWRITEBYTECODE set
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    try:
        proc = subprocess.run(
            ["bash", str(script)], cwd=clone, env=env, capture_output=True, text=True, check=False
        )
    finally:
        subprocess.run(
            [sys.executable, "examples/search_service.py", "stop"], cwd=clone, env=env, capture_output=True
        )
        serve_pid = (
            clone / "out" / "serve.pid"
        )  # the README's `ragaudit serve` when a step failed before its kill
        if serve_pid.is_file():
            subprocess.run(["kill", serve_pid.read_text().strip()], capture_output=True)
    steps = [line for line in proc.stderr.splitlines() if line.startswith("::: ")]
    last = steps[-1] if steps else "(none)"
    assert proc.returncode == 0, f"failed at {last}\n--- stderr tail:\n{proc.stderr[-3000:]}"
    assert len([s for s in steps if not s.startswith("::: stand-in")]) == len(ran) >= 30
    left = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"], cwd=clone, capture_output=True, text=True
    ).stdout
    assert left == "", f"following the README left files in the clone that git sees:\n{left}"
    out = clone / "out"  # every README command writes under out/, which .gitignore covers
    assert (out / "report.html").is_file() and (out / "beir-mini" / "dataset.jsonl").is_file()
    assert (out / "my-service" / "tests" / "evals" / "test_retrieval.py").is_file()
    assert (out / "golden.jsonl").is_file()  # label merge wrote the judged golden set
    for block in re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.DOTALL):
        ran_python = subprocess.run(
            [sys.executable, "-c", block], cwd=clone, env=env, capture_output=True, text=True, check=False
        )
        assert ran_python.returncode == 0, (
            f"README python block failed:\n{block}\n{ran_python.stderr[-2000:]}"
        )
