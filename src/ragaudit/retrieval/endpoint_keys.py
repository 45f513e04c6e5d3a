"""The client side of per-tenant API keys: ``--endpoint-keys keys-client.toml``.

A service that binds the tenant to the credential (``ragaudit serve``) answers each tenant only to
that tenant's key. To evaluate or audit it as several tenants, the client holds one key per tenant::

    [tenants]
    acme = "rk_..."
    globex = "rk_..."

:class:`EndpointKeys` gives the key of the tenant a request is made for; a tenant the file does not
list (every hostile id the audit tries) gets none, so the service refuses the request (401), which is
the right answer. The file is re-read when it changes (rotation), its keys are kept in a private
mapping that no ``repr`` shows, and the HTTP client redacts the key used from every response and
message (:mod:`ragaudit.redaction`). Keep the file out of version control (``chmod 600``).
"""

from __future__ import annotations

import os

from ragaudit.data.toml_files import read_toml
from ragaudit.errors import InputError

FIX = '[tenants] with one line per tenant: acme = "KEY"'


def read_endpoint_keys(path: str) -> dict[str, str]:
    """``{tenant: key}`` of the client keys file, or an :class:`InputError` naming the entry."""
    table, _ = read_toml(path, what="endpoint keys file", fix=FIX)
    tenants = table.get("tenants")
    if set(table) != {"tenants"} or not isinstance(tenants, dict) or not tenants:
        raise InputError(path, None, "expected one [tenants] table with at least one tenant", FIX)
    out: dict[str, str] = {}
    for tenant, key in tenants.items():
        if not isinstance(key, str) or not key.strip():
            raise InputError(path, None, f"tenants.{tenant}: the key must be a non-empty string", FIX)
        out[tenant] = key.strip()
    return out


class EndpointKeys:
    """The per-tenant keys of one file, re-read when the file changes."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._keys = read_endpoint_keys(path)
        self._stamp = self._file_stamp()

    def __repr__(self) -> str:
        return f"EndpointKeys({self.path!r}, {len(self._keys)} tenants)"

    def _file_stamp(self) -> tuple[int, int]:
        try:
            st = os.stat(self.path)
        except OSError:
            return (-1, -1)
        return (st.st_mtime_ns, st.st_size)

    def tenants(self) -> list[str]:
        """The tenants the file lists (their keys stay private)."""
        return sorted(self._keys)

    def key_for(self, tenant_id: object) -> str | None:
        """The key of ``tenant_id`` (exact match), or ``None`` for a tenant the file does not list."""
        stamp = self._file_stamp()
        if stamp != self._stamp and stamp != (-1, -1):
            self._keys, self._stamp = read_endpoint_keys(self.path), stamp
        return self._keys.get(tenant_id) if isinstance(tenant_id, str) else None
