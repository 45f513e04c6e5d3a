"""No command is silent for long (issue 25.4): the command's watcher speaks within ``FIRST_S`` of the
start and then at least every ``EVERY_S``, naming the running step, its age and the runner's count; a
slow phase (an injected one, not a timed one) says so before it ends."""

from __future__ import annotations

import io
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import KB
from ragaudit.cli import console
from ragaudit.cli.console import EVERY_S, FIRST_S, Watcher
from ragaudit.cli.main import main
from ragaudit.counters import Counter, active_counts
from ragaudit.runner.progress import progress_bar


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_watcher_speaks_within_the_first_limit_then_every_interval() -> None:
    clock, out = Clock(), io.StringIO()
    watcher = Watcher("audit-tenants", terminal=False, clock=clock, stream=lambda: out)
    assert watcher.tick(FIRST_S - 0.1) is None
    assert watcher.tick(FIRST_S) == "audit-tenants: working ..."
    clock.now = 2.0
    watcher.spoke()  # what step() does: its own line, then the step is entered
    watcher.enter("audit-tenants: building pipeline hybrid")
    assert watcher.tick(2.0 + EVERY_S - 0.1) is None
    first = watcher.tick(2.0 + EVERY_S)
    assert first == f"audit-tenants: building pipeline hybrid: still running, {EVERY_S:.0f} s"
    assert watcher.tick(2.0 + EVERY_S + 1) is None
    counter = progress_bar(1200, enabled=False, desc="tenant-audit")
    counter.update(340)
    try:
        second = watcher.tick(2.0 + 2 * EVERY_S)
    finally:
        counter.close()
    assert second is not None and second.endswith("; tenant-audit 340/1,200 done")
    watcher.leave("audit-tenants: building pipeline hybrid")
    assert watcher.tick(2.0 + 3 * EVERY_S) == f"audit-tenants: still running, {2 + 3 * EVERY_S:.0f} s"
    assert out.getvalue().splitlines() == [
        "audit-tenants: working ...",
        first,
        second,
        f"audit-tenants: still running, {2 + 3 * EVERY_S:.0f} s",
    ]


def test_on_a_terminal_a_step_gets_a_status_line_and_a_drawn_bar_keeps_it_quiet() -> None:
    out, drawing = io.StringIO(), {"bar": True}
    watcher = Watcher(
        "eval", terminal=True, clock=Clock(), stream=lambda: out, bar_active=lambda: drawing["bar"]
    )
    watcher.enter("eval: building pipeline dense")
    assert watcher.tick(10.0) is None and out.getvalue() == ""  # the bar is speaking
    drawing["bar"] = False
    assert watcher.tick(10.0) == "eval: building pipeline dense: still running, 10 s"
    assert out.getvalue() == "\reval: building pipeline dense: still running, 10 s\x1b[K"  # in place
    watcher.leave("eval: building pipeline dense")
    assert out.getvalue().endswith("\r\x1b[K")  # cleared when the step ends
    assert watcher.tick(20.0) == "eval: still running, 20 s"  # outside a step: a whole line
    assert out.getvalue().endswith("\r\x1b[Keval: still running, 20 s\n")


class _Heard(io.StringIO):
    """stderr that signals when a line starts with ``step`` and says it is still running."""

    def __init__(self, step: str) -> None:
        super().__init__()
        self.step, self.heard = step, threading.Event()

    def write(self, text: str) -> int:
        written = super().write(text)
        if any(ln.startswith(self.step) and ": still running" in ln for ln in self.getvalue().splitlines()):
            self.heard.set()
        return written

    def isatty(self) -> bool:
        return False


def test_a_slow_index_build_speaks_before_it_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``audit-tenants --pipeline bm25`` with a pipeline build that does not end until the watcher has
    spoken about it (an injected slow step: the test waits for the line, it never measures time)."""
    import ragaudit.pipelines.sources as sources

    building = "audit-tenants: building pipeline bm25"
    err = _Heard(building)
    monkeypatch.setattr(console, "FIRST_S", 0.05)
    monkeypatch.setattr(console, "EVERY_S", 0.05)
    monkeypatch.setattr(console, "TICK_S", 0.01)
    monkeypatch.setattr("sys.stderr", err)
    real_open, spoke_before_the_end = sources.open_source, []

    def slow_open(*args: Any, **kwargs: Any) -> Any:
        spoke_before_the_end.append(err.heard.wait(timeout=60))
        return real_open(*args, **kwargs)

    monkeypatch.setattr(sources, "open_source", slow_open)
    code = main(
        ["audit-tenants", "--corpus", str(KB / "corpus.jsonl"), "--pipeline", "bm25", "--probes-per-tenant", "2",
         "--no-progress", "--out", str(tmp_path / "audit.json")]
    )  # fmt: skip
    assert code == 0 and spoke_before_the_end == [True]
    lines = err.getvalue().splitlines()
    first = lines.index(f"{building} over {KB / 'corpus.jsonl'} (indexes, embeddings) ...")
    after = lines.index("audit-tenants: indexing chunk owners and planning the probes ...")
    said = [ln for ln in lines[first + 1 : after] if ": still running, " in ln]
    assert said and said[0].startswith(f"{building} over")  # named, while it ran


def test_quiet_commands_and_the_labeling_server_are_not_watched() -> None:
    from ragaudit.cli import cmd_label

    console.set_quiet(True)
    try:
        with console.watching("eval") as watcher:
            assert watcher is None
    finally:
        console.set_quiet(False)
    assert cmd_label.WATCHED is False


class _Encoder:
    """A fake text encoder that notes, at each batch, what the open counter says."""

    fingerprint, dim = "fake-encoder", 2

    def __init__(self) -> None:
        self.seen: list[tuple[str, int, int] | None] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.seen.append(active_counts())
        return np.ones((len(texts), self.dim), dtype=np.float32)


def test_embedding_keeps_a_counter_the_watcher_quotes(tmp_path: Path) -> None:
    from ragaudit.retrieval.embedding_cache import EmbeddingCache

    encoder = _Encoder()
    with EmbeddingCache(encoder, tmp_path, batch_size=2, progress=False) as cache:
        cache.embed([f"text {i}" for i in range(5)])
    assert encoder.seen == [("embedding", 0, 5), ("embedding", 2, 5), ("embedding", 4, 5)]
    assert active_counts() is None  # closed when the texts are embedded
    out = io.StringIO()
    watcher = Watcher("eval", terminal=False, clock=Clock(), stream=lambda: out)
    watcher.enter("eval: building pipeline dense over corpus.jsonl")
    with Counter(5000, "embedding") as counter:
        counter.update(1200)
        line = watcher.tick(FIRST_S)
    assert (
        line
        == "eval: building pipeline dense over corpus.jsonl: still running, 2 s; embedding 1,200/5,000 done"
    )


def test_loading_a_python_retriever_is_a_named_step(capsys: pytest.CaptureFixture[str]) -> None:
    """Importing a framework behind --retriever (Haystack: 2-5 s) was an unnamed "working ..." or
    "still running" after "reading the corpus"; eval and audit-tenants now name the step."""
    spec = "ragaudit.security.leaky:demo_backfill"
    corpus = str(KB / "corpus.jsonl")
    main(["eval", "--dataset", str(KB / "golden.jsonl"), "--corpus", corpus, "--retriever", spec])
    assert f"eval: loading the retriever {spec} ..." in capsys.readouterr().err
    argv = [
        "audit-tenants",
        "--corpus",
        corpus,
        "--retriever",
        spec,
        "--rounds",
        "1",
        "--mutation-probes",
        "0",
    ]
    main([*argv, "--probes-per-tenant", "1", "--hostile-probes", "0"])
    assert f"audit-tenants: loading the retriever {spec} ..." in capsys.readouterr().err


def test_a_pipeline_without_a_corpus_is_not_built_over_none(capsys: pytest.CaptureFixture[str]) -> None:
    """Before: "eval: building pipeline bm25 over None ..." and then the error asking for --corpus."""
    assert main(["eval", "--dataset", str(KB / "golden.jsonl"), "--pipeline", "bm25"]) == 2
    err = capsys.readouterr().err
    assert "over None" not in err and "error: --corpus: a pipeline needs a corpus" in err
