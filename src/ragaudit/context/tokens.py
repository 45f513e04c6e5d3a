"""Token counts for context cost: tiktoken when an encoding is available offline, a regex otherwise.

tiktoken fetches its BPE files from the internet the first time an encoding is used and caches them
(in ``$TIKTOKEN_CACHE_DIR``, else ``$DATA_GYM_CACHE_DIR``, else ``<tmp>/data-gym-cache``). ragaudit never
lets it reach the network: :func:`token_counter` loads the encoding with tiktoken's remote reads
switched off for the duration of the call, so an encoding that is not already cached fails at once
(no hang, no download) and the documented fallback is used instead. To get exact counts on an offline
machine, copy the cached file from a machine where tiktoken ran into a folder and point
``TIKTOKEN_CACHE_DIR`` at it.

The fallback is the tokenizer every other ragaudit count uses
(:func:`ragaudit.corpus.chunkers.count_tokens`: ``\\w+|[^\\w\\s]``), close to subword counts for
English prose. Every report names the counter it used (:attr:`TokenCounter.name`), and whether it
is exact for an OpenAI model (:attr:`TokenCounter.exact`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ragaudit.corpus.chunkers import count_tokens
from ragaudit.errors import InputError, MissingDependencyError

DEFAULT_ENCODING = "cl100k_base"
FALLBACK_NAME = "regex \\w+|[^\\w\\s]"
_GUARD = threading.Lock()


class _RemoteReadRefused(Exception):
    """Raised in place of tiktoken's download: the encoding is not cached on this machine."""


@dataclass(frozen=True)
class TokenCounter:
    """Counts tokens; ``name`` says how (``tiktoken:cl100k_base`` or the regex fallback)."""

    name: str
    exact: bool
    """True for a tiktoken encoding (the count a model with that encoding bills)."""
    note: str
    _count: Callable[[str], int]

    def count(self, text: str) -> int:
        return self._count(text)

    def info(self) -> dict[str, Any]:
        return {"tokenizer": self.name, "exact": self.exact, "note": self.note}


def regex_counter(note: str = "") -> TokenCounter:
    return TokenCounter(FALLBACK_NAME, False, note or "regex tokenizer (as chunk sizes)", count_tokens)


def _load_offline(encoding: str) -> Any:
    """The tiktoken encoding if its BPE file is cached locally; ``None`` if it would need a download."""
    import tiktoken
    import tiktoken.load as tiktoken_load

    with _GUARD:
        original = tiktoken_load.read_file

        def local_only(blobpath: str) -> bytes:
            if "://" in blobpath:
                raise _RemoteReadRefused(blobpath)
            data: bytes = original(blobpath)
            return data

        tiktoken_load.read_file = local_only
        try:
            return tiktoken.get_encoding(encoding)
        except _RemoteReadRefused:
            return None
        finally:
            tiktoken_load.read_file = original


def token_counter(spec: str = "auto") -> TokenCounter:
    """A counter for ``spec``: ``auto``, ``regex``, or ``tiktoken[:ENCODING]`` (default ``cl100k_base``).

    ``auto`` uses tiktoken's ``cl100k_base`` when tiktoken is installed and the encoding is cached on
    this machine, else the regex fallback (and says why in :attr:`TokenCounter.note`). An explicit
    ``tiktoken`` spec fails with the fix when it cannot be honoured.
    """
    kind, _, encoding = spec.partition(":")
    if kind == "regex" and not encoding:
        return regex_counter()
    if kind not in ("auto", "tiktoken") or (kind == "auto" and encoding):
        raise InputError(
            "--tokenizer", None, f"unknown tokenizer {spec!r}", "use auto, regex or tiktoken[:ENCODING]"
        )
    encoding = encoding or DEFAULT_ENCODING
    try:
        import tiktoken  # noqa: F401
    except ImportError:
        if kind == "tiktoken":
            raise MissingDependencyError("tiktoken", "tokens") from None
        return regex_counter("fallback: tiktoken is not installed")
    try:
        loaded = _load_offline(encoding)
    except ValueError as exc:  # unknown encoding name
        first_line = str(exc).splitlines()[0] if str(exc) else "unknown encoding"
        raise InputError(
            "--tokenizer", None, first_line, "name a tiktoken encoding, e.g. cl100k_base"
        ) from None
    if loaded is None:
        why = f"tiktoken encoding {encoding} is not cached on this machine and ragaudit does not download it"
        if kind == "tiktoken":
            raise InputError(
                "--tokenizer",
                None,
                why,
                "copy tiktoken's cached BPE file into a folder and set TIKTOKEN_CACHE_DIR to it, or use --tokenizer regex",
            )
        return regex_counter(f"fallback: {why}")
    return TokenCounter(
        f"tiktoken:{encoding}",
        True,
        "exact",
        lambda text: len(loaded.encode(text, disallowed_special=())),
    )
