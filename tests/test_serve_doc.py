"""docs/serve.md's quick start makes a key for every tenant of the demo KB, and its client keys file
lists them all: with one missing, `eval --endpoint-keys` fails that tenant's cases with 401 and the
audit leaves its probes unverified (the page once made keys for two of the three tenants)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import KB

PAGE = (Path(__file__).resolve().parents[1] / "docs" / "serve.md").read_text(encoding="utf-8")


def test_the_quick_start_and_the_client_keys_file_cover_every_demo_tenant() -> None:
    corpus = (KB / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    tenants = {json.loads(line)["tenant_id"] for line in corpus if line.strip()}
    quick_start = re.findall(r"```bash\n(.*?)```", PAGE, flags=re.DOTALL)[0]
    assert set(re.findall(r"--new-key (\S+) >> keys\.toml", quick_start)) == tenants
    client = next(
        block for block in re.findall(r"```toml\n(.*?)```", PAGE, flags=re.DOTALL) if "[tenants]" in block
    )
    assert set(re.findall(r'^(\w+) = "rk_\.\.\."$', client, flags=re.MULTILINE)) == tenants
