"""A tenant-audit report whose own figures contradict its ``clean`` verdict verifies nothing, and the
leaks it shows anywhere count (before: each of these passed the security gate, exit 0)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from ragaudit.evaluation.compare import LoadedReport
from ragaudit.gates.checks import security_gate
from ragaudit.gates.policy import GatePolicy

SYSTEM = {"pipeline": {"config_sha256": "ab" * 32}}
SIZED: dict[str, Any] = {  # as large as the gate's default floor asks (gates/audit_size.py)
    "tenants": ["acme", "globex"],
    "requests": {"total": 3000, "cross_tenant": 1200, "owner": 600},
    "probe_list": [  # 24 distinct probes per tenant: audit-tenants' default --probes-per-tenant
        {"id": f"{tenant}/title/{n}", "tenant": tenant, "text": f"{tenant} question {n}"}
        for tenant in ("acme", "globex")
        for n in range(24)
    ],
}
CORPUS = {"sha256": "cd" * 32, "tenants": ["acme", "globex"]}
REPORT = LoadedReport(
    "eval",
    "eval.json",
    {
        "kind": "eval",
        "security": {"leaks": 0, "records": []},
        "pipeline": SYSTEM["pipeline"],
        "corpus": CORPUS,
    },
)
CLEAN: dict[str, Any] = {
    "kind": "tenant-audit",
    "passed": True,
    "verdict": "clean",
    "isolation": {"check": "tenant isolation", "state": "pass", "reason": "no foreign chunk served"},
    "max_error_rate": 0.0,
    "source": SYSTEM,
    **SIZED,
    "corpus": CORPUS,
    "stopped": None,
    "checked_chunks": 400,
    "errors": {"total": 200, "failed": 0, "rate": 0.0},
    "leaks": {
        "count": 0,
        "to_hostile_ids": 0,
        "by_pair": {},
        "by_class": {},
        "records_listed": 0,
        "records": [],
    },
    "hostile_tenants": {"requests": 40, "refused": 10, "empty": 30, "served": 0, "failed": 0, "records": []},
    "unattributed": {"count": 0},
}
RECORD = {"chunk_id": "globex-msa", "owner": ["globex"], "caller_tenant": "acme", "probe": {"id": "p1"}}


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(audit: dict[str, Any]) -> None:
        *parents, key = path.split(".")
        holder = audit
        for name in parents:
            holder = holder[name]
        holder[key] = value

    return edit


LEAKS_SHOWN: dict[str, tuple[Callable[[dict[str, Any]], None], int]] = {
    "records listed, count 0": (_set("leaks.records", [RECORD, RECORD]), 2),
    "per-pair counts, count 0": (_set("leaks.by_pair", {"globex -> acme": 7}), 7),
    "per-class counts, count 0": (_set("leaks.by_class", {"chunk": 3}), 3),
}
CONTRADICTED: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "hostile ids served": (
        _set("hostile_tenants.served", 4),
        "4 request(s) as a hostile tenant id were served",
    ),
    "errors beyond its budget": (_set("errors.rate", 0.9), "error rate 0.9 > its max_error_rate 0"),
    "stopped early": (_set("stopped", "service unreachable"), "it stopped early"),
    "a tenant left out": (_set("tenants", ["acme"]), "it audited 1 tenant(s), not its corpus's globex"),
    "leaks replaced by 0": (_set("leaks", 0), "its leaks section is not the one"),
    "another kind": (_set("kind", "eval"), "it is a 'eval' report, not a tenant audit"),
}


def test_the_clean_audit_verifies_isolation() -> None:
    gate = security_gate(REPORT, GatePolicy(), [("audit.json", copy.deepcopy(CLEAN))])
    assert gate.status == "pass" and gate.passed


@pytest.mark.parametrize("name", LEAKS_SHOWN)
def test_leaks_an_audit_shows_anywhere_count(name: str) -> None:
    edit, leaks = LEAKS_SHOWN[name]
    audit = copy.deepcopy(CLEAN)
    edit(audit)
    gate = security_gate(REPORT, GatePolicy(), [("audit.json", audit)])
    assert gate.status == "fail" and not gate.passed
    assert gate.summary == f"{leaks} cross-tenant leak(s)"


@pytest.mark.parametrize("name", CONTRADICTED)
def test_an_audit_whose_figures_contradict_clean_verifies_nothing(name: str) -> None:
    edit, words = CONTRADICTED[name]
    audit = copy.deepcopy(CLEAN)
    edit(audit)
    gate = security_gate(REPORT, GatePolicy(), [("audit.json", audit)])
    assert gate.status == "not_verified" and not gate.passed
    assert words in gate.summary, gate.summary


def test_an_audit_that_names_no_corpus_verifies_nothing() -> None:
    """Before: removing ``corpus`` from an audit of another corpus skipped the corpus tie: pass."""
    audit = copy.deepcopy(CLEAN)
    del audit["corpus"]
    gate = security_gate(REPORT, GatePolicy(), [("audit.json", audit)])
    assert gate.status == "not_verified" and "the audit names no corpus" in gate.summary
    other = {**copy.deepcopy(CLEAN), "corpus": {"sha256": "ef" * 32}}
    assert "it audited another corpus" in security_gate(REPORT, GatePolicy(), [("audit.json", other)]).summary
