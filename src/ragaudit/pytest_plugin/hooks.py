"""The plugin's pytest hooks: its options and markers, closing the session's event loop, and ``async
def`` tests run without pytest-asyncio, on one event loop per session (so a session-scoped retriever
holding connections stays on its loop), unless pytest-asyncio or anyio is installed and has claimed
the test."""

from __future__ import annotations

import inspect

import pytest

from ragaudit.pytest_plugin.session import SESSION, session_of
from ragaudit.pytest_plugin.settings import MARKERS, OPTIONS


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ragaudit", "ragaudit retrieval evaluation")
    for key, help_text in OPTIONS.items():
        if key == "tenant_aliases":
            parser.addini(f"ragaudit_{key}", help_text, type="linelist")
        else:
            parser.addini(f"ragaudit_{key}", help_text, type="string")
        group.addoption(
            f"--ragaudit-{key.replace('_', '-')}", dest=f"ragaudit_{key}", default=None, help=help_text
        )


def pytest_configure(config: pytest.Config) -> None:
    for line in MARKERS:
        config.addinivalue_line("markers", line)


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(SESSION, None)
    if state is not None:
        state.close()


def _claimed_by_other_plugin(item: pytest.Function) -> bool:
    manager = item.config.pluginmanager
    if item.get_closest_marker("anyio") and manager.has_plugin("anyio"):
        return True
    if manager.has_plugin("asyncio"):  # pytest-asyncio: marked tests, or every test in auto mode
        try:
            auto = item.config.getini("asyncio_mode") == "auto"
        except ValueError:
            auto = False
        return auto or item.get_closest_marker("asyncio") is not None
    return False


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Run ``async def`` tests on the session's event loop (no pytest-asyncio needed)."""
    function = pyfuncitem.obj
    if not inspect.iscoroutinefunction(function) or _claimed_by_other_plugin(pyfuncitem):
        return None
    arguments = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    session_of(pyfuncitem.config).event_loop().run_until_complete(function(**arguments))
    return True
