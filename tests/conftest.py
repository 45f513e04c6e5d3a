"""Shared fixtures: paths to the public benchmark data (tests using it skip cleanly when it is absent)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# one embedding/LLM cache per test session: tests never touch the user's .ragaudit/cache
os.environ.setdefault("RAGAUDIT_CACHE_DIR", tempfile.mkdtemp(prefix="ragaudit-test-cache-"))
# and one run history: eval / bench / demo in tests never write to the repository's history
os.environ.setdefault(
    "RAGAUDIT_HISTORY", str(Path(tempfile.mkdtemp(prefix="ragaudit-test-history-")) / "history.sqlite")
)

SHARED_DATA = Path(
    os.environ.get("RAGAUDIT_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)
BEIR_ROOT = SHARED_DATA / "beir"
TREC_EVAL_ROOT = SHARED_DATA / "trec_eval"


@pytest.fixture(scope="session")
def beir_root() -> Path:
    if not BEIR_ROOT.is_dir():
        pytest.skip(f"public benchmark data not found at {BEIR_ROOT}")
    return BEIR_ROOT


@pytest.fixture(scope="session")
def trec_eval_root() -> Path:
    """trec_eval's own test suite (inputs and reference outputs), see its README.md."""
    if not (TREC_EVAL_ROOT / "out.test").is_file():
        pytest.skip(f"trec_eval's test suite not found at {TREC_EVAL_ROOT}")
    return TREC_EVAL_ROOT


KB = Path(__file__).resolve().parents[1] / "src" / "ragaudit" / "demo_data" / "kb"


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path
