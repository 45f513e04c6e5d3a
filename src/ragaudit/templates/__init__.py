"""Files ``ragaudit init`` writes into a user's repository: the lesson's layout (section 9).

The templates are package data under ``templates/init/`` (the workflow sits in ``github/``, not
``.github/``, because package-data globs skip hidden folders; the test file ends in ``.tmpl`` so that
neither pytest nor a type checker treats it as ragaudit's own code). :func:`scaffold` copies each one
to its place and never overwrites a file that exists: it reports it as skipped instead.

The workflow installs ragaudit from what :data:`INSTALL_PLACEHOLDER` is replaced with: ragaudit is not
published on PyPI, so ``ragaudit init`` builds a wheel of the running ragaudit into the repository
(:func:`build_wheel`, offline, from its source tree) and names it there; ``--install SPEC`` names a
path, a wheel or a pip requirement instead.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path

from ragaudit.errors import InputError
from ragaudit.version import __version__

INSTALL_PLACEHOLDER = "__RAGAUDIT_INSTALL__"
"""Where the workflow template names what to ``pip install`` (replaced by :func:`scaffold`)."""

EXTRAS = "bm25"
"""The extras the scaffolded tests need (the demo's bm25 pipeline)."""

VENDOR = "vendor"
"""The folder of the user's repository ``ragaudit init`` puts the ragaudit wheel in."""

SCAFFOLD: tuple[tuple[str, str, str], ...] = (
    (
        "tests/evals/datasets/retrieval_v1.jsonl",
        "tests/evals/datasets/retrieval_v1.jsonl",
        "golden-set template (one JSON case per line)",
    ),
    ("tests/evals/datasets/README.md", "tests/evals/datasets/README.md", "the golden-set format, explained"),
    ("tests/evals/test_retrieval.py.tmpl", "tests/evals/test_retrieval.py", "pytest tests using the plugin"),
    ("gates.toml", "gates.toml", "release-gate policy for 'ragaudit gate'"),
    ("github/workflows/ragaudit.yml", ".github/workflows/ragaudit.yml", "GitHub Actions workflow"),
)
"""``(template under templates/init/, destination in the user's repository, what it is)``."""


@dataclass
class ScaffoldResult:
    root: Path
    written: list[tuple[Path, str]] = field(default_factory=list)
    skipped: list[tuple[Path, str]] = field(default_factory=list)


def template_text(name: str) -> str:
    """The text of one template (``name`` relative to ``templates/init/``)."""
    return (files("ragaudit.templates") / "init" / name).read_text(encoding="utf-8")


def repository_folder(root: str | Path) -> Path:
    """``root`` as the folder to scaffold (it may not exist yet); a file there is an input error."""
    target = Path(root)
    if target.exists() and not target.is_dir():
        raise InputError(
            str(target), None, "is a file, not a folder", "name the repository folder to scaffold"
        )
    return target


def source_tree() -> Path | None:
    """The source tree this ragaudit runs from (a clone: ``pyproject.toml`` + ``src/ragaudit``), if any."""
    root = Path(__file__).resolve().parents[3]
    pyproject = root / "pyproject.toml"
    found = (root / "src" / "ragaudit").is_dir() and pyproject.is_file()
    return root if found and 'name = "ragaudit"' in pyproject.read_text(encoding="utf-8") else None


def build_wheel(dest: str | Path) -> Path:
    """Build a wheel of the running ragaudit from its source tree into ``dest``, offline (no index, no
    build isolation: setuptools and wheel come from the current environment); the tree is copied to a
    temporary folder first, so the clone gains no ``build/`` or ``*.egg-info``."""
    tree = source_tree()
    if tree is None:
        raise InputError(
            "ragaudit init",
            None,
            "this ragaudit has no source tree to build a wheel from",
            "pass --install SPEC: the wheel, path or pip requirement your CI installs ragaudit from",
        )
    out = Path(dest)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ragaudit-wheel-") as tmp:
        copy = Path(tmp) / "ragaudit"
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
        shutil.copytree(tree / "src" / "ragaudit", copy / "src" / "ragaudit", ignore=ignore)
        for name in ("pyproject.toml", "README.md", "LICENSE"):
            if (tree / name).is_file():
                shutil.copy2(tree / name, copy / name)
        command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index"]
        done = subprocess.run(
            [*command, "-q", "-w", str(out), str(copy)], capture_output=True, text=True, check=False
        )
    wheels = sorted(out.glob(f"ragaudit-{__version__}-*.whl"))
    if done.returncode != 0 or not wheels:
        raise InputError(
            "ragaudit init",
            None,
            f"building the ragaudit wheel failed: {(done.stderr or done.stdout).strip()[-400:]}",
            "install setuptools and wheel in this environment, or pass --install SPEC",
        )
    return wheels[-1]


def scaffold(root: str | Path, install: str | None = None) -> ScaffoldResult:
    """Write every template under ``root`` (created if missing); existing files are left untouched.

    ``install``: what the workflow ``pip install``-s ragaudit from (a wheel or path in the repository,
    or a pip requirement); default ``ragaudit[bm25]==VERSION``, which needs ragaudit published in the
    index the CI uses."""
    target = repository_folder(root)
    result = ScaffoldResult(target)
    for template, destination, what in SCAFFOLD:
        path = target / destination
        if path.exists():
            result.skipped.append((path, what))
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            with path.open("x", encoding="utf-8") as handle:  # "x": never replace a file made meanwhile
                text = template_text(template)
                handle.write(
                    text.replace(INSTALL_PLACEHOLDER, install or f"ragaudit[{EXTRAS}]=={__version__}")
                )
        except FileExistsError:
            result.skipped.append((path, what))
            continue
        result.written.append((path, what))
    return result
