"""The floor plan of docs/architecture.md holds: a package imports only its own modules and lower floors.

Every ``import`` and ``from ... import`` of every module under ``src/ragaudit`` is read with ``ast``
(imports inside functions and ``if TYPE_CHECKING:`` blocks count too), so a new upward import fails
here, naming the module, the line and the floors involved.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import ragaudit

SRC = Path(ragaudit.__file__).parent

FLOORS: dict[str, int] = {
    # 0 ground: shared pieces every floor may use
    "errors": 0,
    "version": 0,
    "redaction": 0,
    "verdict": 0,
    "sqlite_files": 0,
    "retry": 0,
    "cache": 0,
    "text": 0,
    "artifacts": 0,
    "templates": 0,
    "counters": 0,
    # 1-2 data, metrics, statistics, corpus
    "data": 1,
    "metrics": 1,
    "stats": 1,
    "corpus": 2,
    # 3-5 talking to models and retrievers, running cases
    "llm": 3,
    "retrieval": 4,
    "runner": 5,
    # 6 building pipelines, scoring and comparing runs
    "pipelines": 6,
    "evaluation": 6,
    # 7 what a user asks of a system (siblings: never import each other)
    "experiments": 7,
    "context": 7,
    "security": 7,
    "serving": 7,
    # 8 rendering and the labeling workbench
    "report": 8,
    "labeling": 8,
    # 9 verdicts over reports
    "gates": 9,
    # 10 entry points
    "cli": 10,
    "pytest_plugin": 10,
    "api": 10,
    "__init__": 10,
    "__main__": 10,
}
SIBLINGS = 7
"""On this floor packages do not import each other either (each is a separate user question)."""


def _package(path: Path) -> str:
    return path.relative_to(SRC).parts[0].removesuffix(".py")


def _imports(path: Path) -> list[tuple[int, str]]:
    """``(line, imported top-level package)`` for every ragaudit import in ``path``."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "ragaudit" and len(parts) > 1:
                found.append((node.lineno, parts[1]))
    return found


def _modules() -> list[Path]:
    return sorted(p for p in SRC.rglob("*.py") if "__pycache__" not in p.parts)


def test_every_package_has_a_floor() -> None:
    packages = {_package(p) for p in _modules()}
    assert packages <= set(FLOORS), (
        f"give these a floor in FLOORS and docs/architecture.md: {packages - set(FLOORS)}"
    )


def test_no_module_imports_a_higher_floor_or_a_sibling() -> None:
    wrong: list[str] = []
    for path in _modules():
        home = _package(path)
        for line, target in _imports(path):
            if target == home or target not in FLOORS:
                continue
            upward = FLOORS[target] > FLOORS[home]
            sibling = FLOORS[target] == FLOORS[home] == SIBLINGS
            if upward or sibling:
                wrong.append(
                    f"{path.relative_to(SRC)}:{line}: {home} (floor {FLOORS[home]}) imports "
                    f"{target} (floor {FLOORS[target]})"
                )
    assert not wrong, "imports against the floor plan:\n" + "\n".join(wrong)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from ragaudit.report.html import render\n", [(1, "report")]),
        ("import ragaudit.cli.main\n", [(1, "cli")]),
        ("if TYPE_CHECKING:\n    from ragaudit.gates.policy import X\n", [(2, "gates")]),
        ("def f():\n    from ragaudit.security import leaky\n", [(2, "security")]),
        ("from . import sibling\nimport numpy\n", []),
    ],
)
def test_the_walker_sees_every_kind_of_import(
    tmp_path: Path, source: str, expected: list[tuple[int, str]]
) -> None:
    module = tmp_path / "m.py"
    module.write_text(source)
    assert _imports(module) == expected


KNOWN_CYCLES: tuple[frozenset[str], ...] = (frozenset({"pipelines.config", "pipelines.stages"}),)
"""The import circles that remain (modules relative to ``ragaudit``). They may only shrink: a new
circle, or a module joining one of these, fails :func:`test_no_new_import_circles`."""


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _module_graph() -> dict[str, set[str]]:
    """``{module: modules it imports}`` inside ragaudit, every import counted (in functions and
    ``TYPE_CHECKING`` blocks too); ``from ragaudit.a import b`` imports ``a.b`` when that is a module."""
    modules = {_module_name(p): p for p in _modules()}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            found: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.Import):
                found = [a.name for a in node.names]
            for full in found:
                inner = full.removeprefix("ragaudit.")
                if full.startswith("ragaudit.") and inner in modules and inner != name:
                    targets.add(inner)
        graph[name] = targets
    return graph


def import_circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[frozenset[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                members = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    members.add(member)
                    if member == node:
                        break
                if len(members) > 1:
                    circles.append(frozenset(members))
    return circles


def test_the_circle_finder_finds_circles_and_only_them() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}, "f": {"g"}, "g": {"f"}}
    assert sorted(map(sorted, import_circles(graph))) == [["a", "b", "c"], ["f", "g"]]


def test_no_new_import_circles() -> None:
    """No package's modules import each other in a circle, except the known circles, which only shrink."""
    new = [
        sorted(circle)
        for circle in import_circles(_module_graph())
        if not any(circle <= known for known in KNOWN_CYCLES)
    ]
    assert not new, "modules that import each other in a circle (move the shared piece down):\n" + "\n".join(
        " -> ".join(c) for c in new
    )


def _sets_environment(tree: ast.AST) -> list[int]:
    """Lines that write the process environment: ``os.environ[k] = v``, ``del os.environ[k]``,
    ``os.environ.setdefault/update/pop/clear(...)``, ``os.putenv/unsetenv(...)``."""

    def is_environ(node: ast.AST) -> bool:
        return isinstance(node, ast.Attribute) and node.attr == "environ"

    lines: list[int] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            lines += [node.lineno for t in targets if isinstance(t, ast.Subscript) and is_environ(t.value)]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            func = node.func
            if (is_environ(func.value) and func.attr in {"setdefault", "update", "pop", "clear"}) or (
                func.attr in {"putenv", "unsetenv"}
            ):
                lines.append(node.lineno)
    return lines


def test_the_environment_check_sees_writes_not_reads() -> None:
    tree = ast.parse(
        "import os\nos.environ['A'] = '1'\nos.environ.setdefault('B', '1')\nx = os.environ.get('C')\n"
        "y = os.environ['D']\nos.putenv('E', '1')\n"
    )
    assert _sets_environment(tree) == [2, 3, 6]


def test_library_modules_leave_the_process_environment_alone() -> None:
    """Only the command line sets environment variables (HF_HUB_OFFLINE and friends)."""
    offenders = [
        f"{path.relative_to(SRC)}:{line}"
        for path in _modules()
        if _package(path) != "cli"
        for line in _sets_environment(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert not offenders, f"library modules that set environment variables: {offenders}"
