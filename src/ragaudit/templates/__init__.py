"""Files ``ragaudit init`` writes into a user's repository: the lesson's layout (section 9).

The templates are package data under ``templates/init/`` (the workflow sits in ``github/``, not
``.github/``, because package-data globs skip hidden folders; the test file ends in ``.tmpl`` so that
neither pytest nor a type checker treats it as ragaudit's own code). :func:`scaffold` copies each one
to its place and never overwrites a file that exists: it reports it as skipped instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path

from ragaudit.errors import InputError

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


def scaffold(root: str | Path) -> ScaffoldResult:
    """Write every template under ``root`` (created if missing); existing files are left untouched."""
    target = Path(root)
    if target.exists() and not target.is_dir():
        raise InputError(
            str(target), None, "is a file, not a folder", "name the repository folder to scaffold"
        )
    result = ScaffoldResult(target)
    for template, destination, what in SCAFFOLD:
        path = target / destination
        if path.exists():
            result.skipped.append((path, what))
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            with path.open("x", encoding="utf-8") as handle:  # "x": never replace a file made meanwhile
                handle.write(template_text(template))
        except FileExistsError:
            result.skipped.append((path, what))
            continue
        result.written.append((path, what))
    return result
