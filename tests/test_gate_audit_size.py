"""A clean tenant audit too small to verify isolation keeps the security gate NOT VERIFIED, with its
figures (before: one round of one probe per tenant, 112 requests, made the security gate PASS).

The honest twins: an audit of the default size passes, and a policy that lowers
``[security] min_audit_requests`` may accept a smaller one, and the gate's summary says the floor was
lowered."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from ragaudit.errors import ValidationError
from ragaudit.gates.audit_size import DEFAULT_MIN_AUDIT_REQUESTS, audit_too_small
from ragaudit.gates.checks import security_gate
from ragaudit.gates.policy import GatePolicy, parse_policy
from ragaudit.report.html import render_html
from ragaudit.report.markdown import render_markdown
from ragaudit.report.view import build_view
from test_gate_forged_audits import CLEAN, CORPUS, REPORT
from test_gate_forged_reports import _honest

POWER = "a leak on 1 request in 1,000 would be seen with probability 0.106"


def _tiny() -> dict[str, Any]:
    """What ``audit-tenants --probes-per-tenant 1 --rounds 1`` wrote on the demo KB (its figures)."""
    audit = copy.deepcopy(CLEAN)
    audit["requests"] = {"total": 112, "cross_tenant": 63, "owner": 9}
    audit["asking"] = {"detection_power": {"statement": POWER}}
    return audit


def test_a_tiny_clean_audit_does_not_verify_isolation() -> None:
    gate = security_gate(REPORT, GatePolicy(), [("tiny.json", _tiny())])
    assert gate.status == "not_verified" and not gate.passed
    assert (
        "112 request(s) answered (112 request(s) sent; 63 cross-tenant) < min_audit_requests 3,000 "
        "(counted as sent minus failed: it states no asking.requests.answered)" in gate.summary
    )
    assert POWER in gate.summary and "audit-tenants" in gate.summary


def test_the_default_size_passes_and_a_lowered_floor_is_said() -> None:
    assert DEFAULT_MIN_AUDIT_REQUESTS == 3000  # audit-tenants' default --budget: 1 - 0.999**3000 = 0.95
    full = security_gate(REPORT, GatePolicy(), [("audit.json", copy.deepcopy(CLEAN))])
    assert full.status == "pass" and "lowered" not in full.summary
    lowered = security_gate(REPORT, GatePolicy(min_audit_requests=100), [("tiny.json", _tiny())])
    assert lowered.status == "pass"
    assert "audit size floor lowered by the policy: min_audit_requests 100 (default 3,000" in lowered.summary


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        (
            {"tenants": ["acme"], "corpus": {**CORPUS, "tenants": ["acme"]}},
            "it audited 1 tenant(s): isolation is tested only between at least two",
        ),
        (
            {"probe_list": [{"id": "acme/title/0", "tenant": "acme"}, {"id": "generic/0", "tenant": None}]},
            "no probe of globex was made (1 of 2 tenant(s) probed)",
        ),
        ({"probe_list": None}, "it lists no probes"),
        ({"requests": {"total": 5000}}, "it states no request counts"),
        ({"requests": {"total": 5000, "cross_tenant": 0}}, "it asked no cross-tenant request"),
    ],
)
def test_an_audit_that_did_not_probe_across_tenants_verifies_nothing(edit: dict[str, Any], why: str) -> None:
    audit = {**copy.deepcopy(CLEAN), **edit}
    found = audit_too_small(audit)
    assert found is not None and found.startswith(why)
    gate = security_gate(REPORT, GatePolicy(min_audit_requests=0), [("audit.json", audit)])
    assert gate.status == "not_verified" and why in gate.summary


def test_a_tiny_audit_that_found_a_leak_still_fails() -> None:
    leaky = _tiny()
    leaky["passed"], leaky["verdict"] = False, "leak"
    leaky["leaks"] = {**leaky["leaks"], "count": 1}
    assert security_gate(REPORT, GatePolicy(), [("tiny.json", leaky)]).status == "fail"


def test_the_policy_key_is_checked() -> None:
    assert parse_policy({"security": {"min_audit_requests": 500}}).min_audit_requests == 500
    for bad in (-1, 2.5, True, "3000"):
        with pytest.raises(ValidationError, match="min_audit_requests: must be a whole number >= 0"):
            parse_policy({"security": {"min_audit_requests": bad}})


def test_the_pages_say_the_floor_was_lowered(tmp_path: Path) -> None:
    report = _honest(tmp_path)
    lowered = security_gate(REPORT, GatePolicy(min_audit_requests=100), [("tiny.json", _tiny())])
    full = security_gate(REPORT, GatePolicy(), [("audit.json", copy.deepcopy(CLEAN))])
    for gate, said in ((lowered, True), (full, False)):
        section = {"passed": True, "verdict": "pass", "gates": [gate.to_json()]}
        view = build_view({**report, "gate": section})
        html, markdown = render_html(view), render_markdown(view)
        assert "gate passed" in html and "**Gate: ✅ PASSED**" in markdown
        assert ("min_audit_requests 100" in html) is said
        assert ("min\\_audit\\_requests 100" in markdown) is said  # Markdown escapes the underscores


def test_failed_requests_count_toward_no_floor() -> None:
    """An audit run with a lax --max-error-rate: 3,000 sent, 2,700 failed, still 'clean' by its own
    budget; 300 answered requests verify no more than a 300-request audit."""
    lax = copy.deepcopy(CLEAN)
    lax["max_error_rate"] = 0.95
    lax["errors"] = {"total": 2900, "failed": 2650, "rate": 0.91}
    lax["hostile_tenants"] = {**lax["hostile_tenants"], "failed": 50}
    gate = security_gate(REPORT, GatePolicy(), [("lax.json", lax)])
    assert gate.status == "not_verified"
    assert "300 request(s) answered (3,000 request(s) sent, 2,700 failed; 1,200 cross-tenant)" in gate.summary


def test_refused_and_rejected_requests_are_not_answers_to_the_floor() -> None:
    """The README's served audit: 3,843 requests sent, none failed, but the 1,392 hostile ids were all
    refused and mutations rejected: 2,311 answered with a ranking (its detection power, 0.901, is worked
    out from those). Sent minus failed (3,843) met the floor of 3,000 and the gate said PASS, so the
    floor's promise (a leak on 1 request in 1,000 seen with probability 0.95) did not hold."""
    served = copy.deepcopy(CLEAN)
    served["requests"] = {**served["requests"], "total": 3843}
    served["asking"] = {
        **served.get("asking", {}),
        "requests": {"total": 3843, "answered": 2311},
        "detection_power": {"statement": "a leak on 1 request in 1,000 would be seen with probability 0.901"},
    }
    gate = security_gate(REPORT, GatePolicy(), [("served.json", served)])
    assert gate.status == "not_verified" and not gate.passed
    assert "2,311 request(s) answered with results to check (3,843 request(s) sent" in gate.summary
    enough = copy.deepcopy(served)
    enough["asking"]["requests"]["answered"] = 3000  # the honest twin: 3,000 answered meets the floor
    assert security_gate(REPORT, GatePolicy(), [("served.json", enough)]).status == "pass"
