"""Shared fixtures: paths to the public benchmark data (tests using it skip cleanly when it is absent)."""

from __future__ import annotations

import contextlib
import io
import os
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
# and one folder for what the whole run builds once and only reads (set here, before pytest-xdist starts
# its workers: they inherit it, so every worker of one run sees the same folder)
SHARED_BUILDS_ENV = "RAGAUDIT_TEST_SHARED_BUILDS"
os.environ.setdefault(SHARED_BUILDS_ENV, tempfile.mkdtemp(prefix="ragaudit-test-shared-"))

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

SMALL_CLI = ("--probes-per-tenant", "4", "--rounds", "1", "--budget", "0", "--top-k-values", "10")
SMALL_CLI += ("--concurrency-levels", "8", "--hostile-probes", "1", "--mutation-probes", "1")
"""A small ``audit-tenants`` plan for proofs that a leak is caught (the default plan is tested on its own)."""


@pytest.fixture(scope="module")
def chunks() -> list[Any]:
    """The demo knowledge base's chunks, one per document (a file may define its own)."""
    from ragaudit.corpus.chunkers import chunk_corpus, make_chunker
    from ragaudit.corpus.loading import load_corpus

    return chunk_corpus(load_corpus(KB / "corpus.jsonl"), make_chunker("whole"))


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


# ---- speed: retries without waits, the demo built once, units of work for pytest-xdist ---------------


@pytest.fixture(autouse=True)
def _retries_without_waits(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Retries in tests retry at once: every :class:`ragaudit.retry.RetryPolicy` waits 0 s, so a test
    of a flaky or unreachable service does not sleep through real backoff (the attempts, their count
    and the errors are unchanged). Tests about the waits themselves are marked ``backoff`` and see the
    real schedule. This patches the test process only: commands run in a subprocess wait as shipped."""
    if request.node.get_closest_marker("backoff") is not None:
        return
    from ragaudit.retry import RetryPolicy

    def no_wait(
        self: RetryPolicy, key: str, failed_attempts: int, retry_after_s: float | None = None
    ) -> float:
        return 0.0

    monkeypatch.setattr(RetryPolicy, "delay_s", no_wait)


@dataclass(frozen=True)
class DemoBuild:
    """What ``ragaudit demo --no-progress`` left: its folder and what it printed on stdout."""

    folder: Path
    out: str


@contextlib.contextmanager
def _exclusive(lock: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``lock`` (created if missing): one process of the run at a time."""
    import fcntl

    with lock.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _run_demo(root: Path) -> tuple[int, str]:
    """``ragaudit demo --no-progress --out-dir ROOT/out`` from an empty embedding cache of its own
    (``ROOT/cache``, so it embeds the corpus and the queries itself): its exit code and stdout."""
    from ragaudit.cli.main import main

    printed = io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(printed):
        patch.setenv("RAGAUDIT_CACHE_DIR", str(root / "cache"))
        code = main(["demo", "--no-progress", "--out-dir", str(root / "out")])
    return code, printed.getvalue()


@pytest.fixture(scope="session")
def demo_build() -> DemoBuild:
    """``ragaudit demo`` run once per test run, for the tests that only read what it wrote or printed (a
    test that changes the folder builds its own). It starts from an empty embedding cache, as a first
    demo in a fresh clone does. Under pytest-xdist the first worker that needs it builds it and the
    others wait for that build and read it (a lock in :data:`SHARED_BUILDS_ENV`'s folder) instead of
    building the same demo again. Its exit code must be 0."""
    root = Path(os.environ[SHARED_BUILDS_ENV]) / "demo"
    root.mkdir(parents=True, exist_ok=True)
    done, printed = root / "exit-code", root / "stdout.txt"
    with _exclusive(root / "lock"):
        if not done.is_file():
            from chromium import off_the_loop  # the shared browser's event loop may be running here

            code, out = off_the_loop(_run_demo, root)
            printed.write_text(out, encoding="utf-8")
            done.write_text(str(code), encoding="utf-8")
    out = printed.read_text(encoding="utf-8")
    assert done.read_text(encoding="utf-8") == "0", out[-3000:]
    return DemoBuild(root / "out", out)


@pytest.fixture
def browser() -> Any:
    """A headless Chromium shared by the browser tests that run in a row (tests/chromium.py: launched
    for the first, closed after the last; each test opens its own pages). Skipped when playwright is
    absent; the browser files skip themselves when /usr/bin/chromium is."""
    from chromium import SHARED

    return SHARED.get()


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """Close the shared Chromium once the next test does not use it (after this test's fixtures, and
    the module's when it was the module's last, are torn down): code outside the browser tests may
    call ``asyncio.run``, which playwright's running event loop forbids."""
    from chromium import SHARED

    if SHARED.is_open and (nextitem is None or "browser" not in getattr(nextitem, "fixturenames", ())):
        SHARED.close()


SERIAL_FILES = frozenset(
    {
        "tests/test_report_chromium.py",
        "tests/test_label_chromium.py",
        "tests/test_benchmark_chromium.py",
        "tests/test_report_gold_chromium.py",
        "tests/test_scale_ray.py",
    }
)
"""The test files that start a headless Chromium (the ``browser`` fixture) or a local Ray cluster (marked
``ray``). Under pytest-xdist (``make test``) they are one unit of work: one worker runs them one after
the other, never beside each other. A new such file must be listed here (checked at collection)."""

SERIAL_UNIT = "browser-and-ray"

UNIT_SECONDS: dict[str, float] = {
    SERIAL_UNIT: 100.0,
    "tests/test_readme.py": 53.0,
    "tests/test_serve_engines.py": 40.0,
    "tests/test_tenant_audit.py": 33.0,
    "tests/test_request_mutations.py": 29.0,
    "tests/test_tenant_audit_asking.py": 25.0,
    "tests/test_red_team_services.py": 30.0,
    "tests/test_framework_pipelines.py": 26.0,
    "tests/test_serve_index.py": 25.0,
    "tests/test_serve.py": 23.0,
    "tests/test_init.py": 21.0,
    "tests/test_batch_invariance.py": 19.0,
    "tests/test_framework_adapters.py": 18.0,
    "tests/test_one_pipeline_one_number.py": 18.0,
    "tests/test_onnx_embedder.py": 16.5,
    "tests/test_pipelines.py": 11.0,
    "tests/test_tenant_attribution.py": 11.0,
    "tests/test_gates.py": 10.0,
    "tests/test_secret_forms_cli.py": 10.0,
    "tests/test_verified_earned.py": 8.0,
    "tests/test_rerank.py": 8.0,
    "tests/test_mlflow_export.py": 7.0,
    "tests/test_lesson_security.py": 6.0,
    "tests/test_load.py": 4.5,
    "tests/test_cli.py": 3.0,
}
"""About how many seconds each long unit of work takes (CPU seconds of ``pytest -q FILE`` alone, measured
2026-12-04; test_readme, test_onnx_embedder and test_one_pipeline_one_number 2026-12-05, the last
including the run's demo build, which in the whole run the browser-and-Ray unit has usually done first;
the browser-and-Ray unit from ``--durations``). Units not listed are short and come after, the ones with
more tests first. Speed only: a stale figure makes the run slower, never changes a result."""


def _longest_first(unit: tuple[str, dict[str, bool]]) -> tuple[float, int]:
    name, tests = unit
    return (-UNIT_SECONDS.get(name, 0.0), -len(tests))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every browser or Ray test lives in a file of :data:`SERIAL_FILES`."""
    for item in items:
        heavy = "browser" in getattr(item, "fixturenames", ()) or item.get_closest_marker("ray") is not None
        path = item.nodeid.split("::", 1)[0]
        if heavy and path not in SERIAL_FILES:
            raise pytest.UsageError(
                f"{path}: {item.name} starts a headless Chromium or a Ray cluster; add {path!r} to "
                "SERIAL_FILES in tests/conftest.py so pytest-xdist never runs it beside the others"
            )


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile`` (each file's tests in one worker, its module fixtures built once) with the
    files of :data:`SERIAL_FILES` as a single unit, handed out longest first (:data:`UNIT_SECONDS`): a
    worker that comes free takes the longest unit left, so the two finish together instead of one
    starting a minute-long unit near the end.
    (``--dist loadgroup`` with ``xdist_group`` marks would say the same, but pytest-xdist 3.8 ignores
    those marks on pytest 9.2: pytest-dev/pytest-xdist#1386.)"""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class FilesWithASerialUnit(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = super()._split_scope(nodeid)
            return SERIAL_UNIT if path in SERIAL_FILES else path

        def _assign_work_unit(self, node: Any) -> None:
            ordered = sorted(self.workqueue.items(), key=_longest_first)
            self.workqueue.clear()
            self.workqueue.update(ordered)
            super()._assign_work_unit(node)

    return FilesWithASerialUnit(config, log)


@pytest.fixture
def pytester(pytester: pytest.Pytester) -> pytest.Pytester:
    """pytest's ``pytester`` whose in-process runs keep the modules they import from outside the test's
    own folder. pytester restores ``sys.modules`` after each run and at teardown, so numpy.fft, numba,
    pydantic_core ... first imported by an inner run were dropped and imported again by a later test in
    the same worker, and some C extensions cannot be loaded twice in a process ("ImportError: cannot
    load module more than once per process": tests/test_in_sample.py after tests/test_pytest_plugin.py).
    The test's own modules (its test files, conftest and plugins under ``pytester.path``) are still
    dropped, as pytester intends."""
    from _pytest.pytester import SysModulesSnapshot

    own_folder = pytester.path.resolve()

    def keep(name: str) -> bool:
        file = getattr(sys.modules.get(name), "__file__", None)
        return file is None or not Path(file).resolve().is_relative_to(own_folder)

    take = "_Pytester__take_sys_modules_snapshot"
    assert hasattr(pytester, take), f"pytest changed pytester: {take} is gone; see this fixture"
    pytester._sys_modules_snapshot = SysModulesSnapshot(preserve=keep)  # type: ignore[attr-defined]
    setattr(pytester, take, lambda: SysModulesSnapshot(preserve=keep))
    return pytester
