"""One headless Chromium (Debian's /usr/bin/chromium, driven by playwright) for the browser tests in a
row: conftest's ``browser`` fixture launches it for the first test that asks for it and closes it after
the last of a run of such tests (the next test does not ask for it, or none is left). The browser files
run one after the other in one unit of work (``SERIAL_FILES`` in conftest), so the unit launches it
once instead of once per file. Every test still opens its own pages.

Playwright's sync API keeps an event loop running in this thread while the browser is open: code that
calls ``asyncio.run`` (the CLI's commands) must run before, or in another thread (:func:`off_the_loop`).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import pytest

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

T = TypeVar("T")


class SharedChromium:
    """The open browser and its playwright driver, or nothing."""

    def __init__(self) -> None:
        self._playwright: Any = None
        self._browser: Any = None

    @property
    def is_open(self) -> bool:
        return self._browser is not None

    def get(self) -> Any:
        """The open browser; launched first if none is (skips when playwright is not installed)."""
        if self._browser is None:
            sync_api = pytest.importorskip("playwright.sync_api")
            playwright = sync_api.sync_playwright().start()
            try:
                self._browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
            except BaseException:
                playwright.stop()
                raise
            self._playwright = playwright
        return self._browser

    def close(self) -> None:
        browser, playwright = self._browser, self._playwright
        self._browser = self._playwright = None
        try:
            if browser is not None:
                browser.close()
        finally:
            if playwright is not None:
                playwright.stop()


SHARED = SharedChromium()


def off_the_loop(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` in a thread of its own: safe to call ``asyncio.run`` in, browser open or not."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(fn, *args).result()
