"""A clean audit that met the request floor by re-asking a few probes over many rounds does not verify
isolation (before: one probe per tenant asked in rounds up to 3,000 requests made the security gate
PASS).

The honest twins: the default 24 distinct probes per tenant pass; a tenant whose few documents make
fewer probes under the default plan passes when the audit's corpus can be re-read to show it; a policy
may lower ``[security] min_probes_per_tenant`` and the pass then says so."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from ragaudit.artifacts.provenance import sha256_of
from ragaudit.errors import ValidationError
from ragaudit.gates.audit_probes import DEFAULT_MIN_PROBES_PER_TENANT, distinct_probes, too_few_probes
from ragaudit.gates.checks import security_gate
from ragaudit.gates.policy import GatePolicy, parse_policy
from ragaudit.security.probes import DEFAULT_PER_TENANT
from test_gate_forged_audits import CLEAN, REPORT


def _few(per_tenant: int = 1) -> dict[str, Any]:
    """A 3,000-request audit made of ``per_tenant`` probe(s) per tenant asked in many rounds."""
    audit = copy.deepcopy(CLEAN)
    audit["probe_list"] = [
        {"id": f"{t}/title/{n}", "tenant": t, "text": f"{t} question {n}"}
        for t in ("acme", "globex")
        for n in range(per_tenant)
    ]
    return audit


def test_a_few_probes_asked_in_many_rounds_do_not_verify_isolation() -> None:
    assert DEFAULT_MIN_PROBES_PER_TENANT == DEFAULT_PER_TENANT == 24  # audit-tenants' --probes-per-tenant
    gate = security_gate(REPORT, GatePolicy(), [("few.json", _few())])
    assert gate.status == "not_verified" and not gate.passed
    assert "acme 1, globex 1 distinct probe(s) < min_probes_per_tenant 24" in gate.summary
    assert "could not be re-read" in gate.summary  # the corpus is not here: why it could not be excused


def test_a_probe_listed_twice_under_two_ids_counts_once() -> None:
    audit = _few()
    audit["probe_list"] = [
        {"id": f"acme/title/{n}", "tenant": "acme", "text": " Acme  question "} for n in range(24)
    ] + [p for p in CLEAN["probe_list"] if p["tenant"] == "globex"]
    assert distinct_probes(audit) == {"acme": 1, "globex": 24}
    assert security_gate(REPORT, GatePolicy(), [("dup.json", audit)]).status == "not_verified"


def test_the_default_plan_passes_and_a_lowered_floor_is_said() -> None:
    assert security_gate(REPORT, GatePolicy(), [("audit.json", copy.deepcopy(CLEAN))]).status == "pass"
    lowered = security_gate(REPORT, GatePolicy(min_probes_per_tenant=1), [("few.json", _few())])
    assert lowered.status == "pass"
    assert (
        "audit size floor lowered by the policy: min_probes_per_tenant 1 (default 24: audit-tenants' "
        "default --probes-per-tenant)" in lowered.summary
    )


def test_a_shared_tenant_needs_no_probes() -> None:
    audit = _few(24)
    audit["probe_list"] = [p for p in audit["probe_list"] if p["tenant"] == "acme"]
    audit["shared_tenants"] = {"tenants": ["globex"], "chunks": 0}
    assert too_few_probes(audit) is None


def test_a_small_tenant_is_held_to_what_its_documents_allow(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    docs = [
        {
            "doc_id": f"acme-{n}",
            "tenant_id": "acme",
            "title": f"Acme policy {n}",
            "text": f"Acme rule {n}. " * 30,
        }
        for n in range(40)
    ] + [{"doc_id": "globex-0", "tenant_id": "globex", "title": "Globex memo", "text": "Globex note. " * 30}]
    corpus.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    from ragaudit.corpus.loading import load_corpus
    from ragaudit.security.probes import generate_probes

    made = generate_probes(load_corpus(corpus).documents, generic=())
    audit = copy.deepcopy(CLEAN)
    audit["probe_list"] = [p.to_json() for p in made]
    audit["corpus"] = {**audit["corpus"], "path": str(corpus), "sha256": sha256_of(corpus), "documents": 41}
    counts = distinct_probes(audit)
    assert counts["acme"] == 24 and counts["globex"] < 24  # one document makes fewer than the default
    assert too_few_probes(audit) is None  # the default plan over this corpus: nothing is missing
    audit["probe_list"] = [p for p in audit["probe_list"] if p["tenant"] == "acme"] + audit["probe_list"][-1:]
    found = too_few_probes(audit)
    assert found is not None and "globex 1 distinct probe(s)" in found and "re-read" not in found


def test_the_policy_key_is_checked() -> None:
    assert parse_policy({"security": {"min_probes_per_tenant": 4}}).min_probes_per_tenant == 4
    with pytest.raises(ValidationError, match="min_probes_per_tenant"):
        parse_policy({"security": {"min_probes_per_tenant": -1}})
