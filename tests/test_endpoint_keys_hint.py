"""A service refusing a request made with ``--endpoint-keys`` is explained by the keys file: a tenant
the file does not list is named with the file to add it to (docs/serve.md's quick start once made keys
for two of the demo's three tenants, and the 401s said "set auth_header_env"), a tenant it lists is
told to check its key there; without a keys file the hint names the CLI flags too."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from ragaudit.cli.outcome import fix_for
from ragaudit.errors import PermanentRetrievalError
from ragaudit.retrieval.http import HttpRetriever
from servers import LocalServer, Reply, Request

pytest.importorskip("httpx")

ACME_KEY = "rk_acme_secret_0123456789"


def _refuse_all_but_acme(request: Request) -> Reply:
    if request.headers.get("authorization") == f"Bearer {ACME_KEY}":
        return Reply(status=403, body={"error": "tenant mismatch"})
    return Reply(status=401, body={"error": "a valid API key is required"})


def _refusal(retriever: HttpRetriever, tenant: str) -> str:
    with pytest.raises(PermanentRetrievalError) as caught:
        asyncio.run(retriever.search(tenant_id=tenant, query="refund", top_k=3))
    return str(caught.value)


def test_a_tenant_missing_from_the_keys_file_is_named_with_the_file(tmp_path: Path) -> None:
    keys = tmp_path / "keys-client.toml"
    keys.write_text(f'[tenants]\nacme = "{ACME_KEY}"\n', encoding="utf-8")
    with LocalServer(_refuse_all_but_acme) as server:
        retriever = HttpRetriever(server.url, tenant_keys=str(keys))
        missing = _refusal(retriever, "initech")
        listed = _refusal(retriever, "acme")
    assert missing.startswith("HTTP 401")
    assert f"no key for tenant 'initech' in {keys}: add it under [tenants]" in missing
    assert listed.startswith("HTTP 403")
    assert f"check the key of tenant 'acme' in {keys}" in listed
    assert ACME_KEY not in listed


def test_without_a_keys_file_the_hint_names_the_cli_flags() -> None:
    with LocalServer(_refuse_all_but_acme) as server:
        message = _refusal(HttpRetriever(server.url), "acme")
    assert "set auth_header_env; on the CLI --auth-env or --endpoint-keys" in message
    assert "--endpoint-keys FILE with one key per tenant" in fix_for("HTTP 401", "endpoint")


def test_a_403_with_one_shared_credential_points_to_one_key_per_tenant(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`--auth-env` with a key `serve` binds to acme: every other tenant's request is 403. The credential
    is valid, so "check the credential" sent the user the wrong way."""
    monkeypatch.setenv("SEARCH_TOKEN", ACME_KEY)
    with LocalServer(_refuse_all_but_acme) as server:
        message = _refusal(HttpRetriever(server.url, auth_header_env="SEARCH_TOKEN"), "globex")
    assert message.startswith("HTTP 403")
    assert (
        "a key bound to one tenant cannot ask as another; give one key per tenant with --endpoint-keys"
        in message
    )
    assert "--endpoint-keys FILE with one key per tenant" in fix_for("HTTP 403", "endpoint")
    assert ACME_KEY not in message
