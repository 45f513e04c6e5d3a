"""What an HTTP status tells: the wait a ``Retry-After`` header asks for, and the hint appended to a
refusal's message (what to check: the credential, the URL, the request fields)."""

from __future__ import annotations

import email.utils
import time


def _retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _status_hint(status: int, auth_env: str | None) -> str:
    if status == 403 and auth_env:
        return (
            f" (refused with the credential in ${auth_env}: a key bound to one tenant cannot ask as "
            "another; give one key per tenant with --endpoint-keys)"
        )
    if status in (401, 403):
        return (
            f" (check the credential in ${auth_env})"
            if auth_env
            else " (the service wants credentials: set auth_header_env; on the CLI --auth-env or --endpoint-keys)"
        )
    if status in (404, 405):
        return " (check the URL and that the endpoint accepts POST)"
    if 300 <= status < 400:
        return " (a redirect: use the final URL)"
    if status in (400, 422):
        return " (the service rejected the request body: check request_fields)"
    return ""
