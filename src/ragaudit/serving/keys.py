"""The server's keys file: API keys, stored as SHA-256 hashes, each bound to one tenant.

```toml
[[key]]
tenant = "acme"
sha256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
label = "acme-2026-12"   # optional, never secret: names the key in errors and rotation notes
```

A tenant may hold several keys (rotation: add the new key, move the clients, remove the old one).
The file is read again when it changes (its modification time and size), so a rotation needs no
restart; a file that became invalid is reported once and the keys read before stay in force.

Keys are looked up by hashing the presented key and comparing it with **every** stored hash with
:func:`hmac.compare_digest` (no early exit), so the time taken does not depend on which hash matched
or how much of one did. The presented key is never stored, logged or echoed.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import sys
from dataclasses import dataclass

from ragaudit.data.toml_files import read_toml
from ragaudit.errors import InputError

HEX64 = re.compile(r"^[0-9a-f]{64}$")
KEYS_FIX = (
    'one [[key]] table per key: tenant = "acme", sha256 = "<64 hex digits>" (ragaudit serve --hash-key)'
)


def hash_key(key: str) -> str:
    """The SHA-256 hex digest of ``key`` (UTF-8), as the keys file stores it."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def new_key() -> str:
    """A fresh random API key (256 bits, URL-safe)."""
    return "rk_" + secrets.token_urlsafe(32)


@dataclass(frozen=True)
class KeyEntry:
    tenant: str
    digest: bytes
    label: str


def parse_keys(path: str) -> tuple[KeyEntry, ...]:
    """The entries of the keys file ``path``, or an :class:`InputError` naming the entry and the fix."""
    table, _ = read_toml(path, what="keys file", fix=KEYS_FIX)
    raw = table.get("key")
    unknown = sorted(set(table) - {"key"})
    if unknown:
        raise InputError(path, None, f"unknown table(s) {', '.join(unknown)}", KEYS_FIX)
    if not isinstance(raw, list) or not raw:
        raise InputError(path, None, "no [[key]] entries", KEYS_FIX)
    entries: list[KeyEntry] = []
    owners: dict[str, str] = {}
    for number, item in enumerate(raw, start=1):
        where = f"[[key]] #{number}"
        if not isinstance(item, dict):
            raise InputError(path, None, f"{where} is not a table", KEYS_FIX)
        extra = sorted(set(item) - {"tenant", "sha256", "label"})
        if extra:
            raise InputError(path, None, f"{where}: unknown field(s) {', '.join(extra)}", KEYS_FIX)
        tenant, digest, label = item.get("tenant"), item.get("sha256"), item.get("label", f"key #{number}")
        if not isinstance(tenant, str) or not tenant.strip() or tenant != tenant.strip():
            raise InputError(
                path, None, f"{where}: tenant must be a non-empty string without surrounding spaces", KEYS_FIX
            )
        if not isinstance(digest, str) or not HEX64.match(digest):
            raise InputError(
                path,
                None,
                f"{where} ({tenant}): sha256 must be 64 lower-case hex digits (the hash, never the key)",
                "ragaudit serve --hash-key < key.txt prints it",
            )
        if not isinstance(label, str):
            raise InputError(path, None, f"{where}: label must be a string", KEYS_FIX)
        if digest in owners:
            raise InputError(
                path,
                None,
                f"{where}: the same key hash is listed for {owners[digest]!r} and {tenant!r}",
                "give every key one tenant only",
            )
        owners[digest] = tenant
        entries.append(KeyEntry(tenant, bytes.fromhex(digest), label))
    return tuple(entries)


class ServerKeys:
    """The keys file, re-read when it changes; :meth:`tenant_of` authenticates a presented key."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._entries = parse_keys(path)
        self._stamp = self._file_stamp()

    def _file_stamp(self) -> tuple[int, int]:
        try:
            st = os.stat(self.path)
        except OSError:
            return (-1, -1)
        return (st.st_mtime_ns, st.st_size)

    def _refresh(self) -> None:
        stamp = self._file_stamp()
        if stamp == self._stamp or stamp == (-1, -1):
            return
        self._stamp = stamp
        try:
            self._entries = parse_keys(self.path)
        except InputError as exc:  # keep serving with the keys read before; say why once
            print(f"ragaudit serve: keys file not reloaded: {exc}", file=sys.stderr, flush=True)

    @property
    def tenants(self) -> tuple[str, ...]:
        return tuple(sorted({e.tenant for e in self._entries}))

    def tenant_of(self, presented: str) -> str | None:
        """The tenant of the presented key, or ``None``; every stored hash is compared (constant time)."""
        self._refresh()
        digest = hashlib.sha256(presented.encode("utf-8", "surrogatepass")).digest()
        found: str | None = None
        for entry in self._entries:
            if hmac.compare_digest(digest, entry.digest):
                found = entry.tenant
        return found
