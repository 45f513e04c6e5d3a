"""What the plugin builds once per test session (datasets, corpora, opened sources, ownership indexes,
evaluations and audits, and the one event loop they run on), kept in the pytest config's stash."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest

from ragaudit.pytest_plugin.settings import Settings

if TYPE_CHECKING:
    from ragaudit.corpus.loading import Corpus
    from ragaudit.data.schema import Dataset
    from ragaudit.evaluation.result import EvalResult
    from ragaudit.pipelines.sources import OpenedSource
    from ragaudit.security.tenant_audit import TenantAudit


@dataclass
class Session:
    """What the plugin builds once per test session."""

    loop: asyncio.AbstractEventLoop | None = None
    datasets: dict[str, Dataset] = field(default_factory=dict)
    corpora: dict[str, Corpus] = field(default_factory=dict)
    sources: dict[tuple[str, str | None], OpenedSource] = field(default_factory=dict)
    results: dict[Settings, EvalResult] = field(default_factory=dict)
    ownership: dict[tuple[str, str | None], Any] = field(default_factory=dict)
    audits: dict[Settings, TenantAudit] = field(default_factory=dict)

    def corpus(self, path: str) -> Corpus:
        """The corpus at ``path``, loaded once per session."""
        from ragaudit.corpus.loading import load_corpus

        if path not in self.corpora:
            self.corpora[path] = load_corpus(path)
        return self.corpora[path]

    def event_loop(self) -> asyncio.AbstractEventLoop:
        if self.loop is None or self.loop.is_closed():
            self.loop = asyncio.new_event_loop()
        return self.loop

    def close(self) -> None:
        if self.loop is not None and not self.loop.is_closed():
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            self.loop.close()


SESSION = pytest.StashKey[Session]()


def session_of(config: pytest.Config) -> Session:
    return config.stash.setdefault(SESSION, Session())
