"""The tenant audit's verdict, in words and in three states, from what it counted.

- ``leak`` (fail): any foreign chunk was served;
- ``incomplete`` (not verified): the audit stopped early because the service could not be reached
  (:class:`~ragaudit.security.request_loop.Stopper`), or the share of failed tenant requests is above
  ``max_error_rate``;
- ``not-verified`` (not verified): returned chunks that nothing attributes (opaque ids, analysed or
  rewritten text: :mod:`ragaudit.security.ownership`) cannot be shown to be the caller's, so the
  audit cannot say isolation holds. ``--allow-unattributed`` accepts them only when at least
  ``--min-attributed`` (default 0.95) of the returned chunks were attributed; the verdict always
  states the attributed share ("verified 1 of 12,528 returned chunks (0.0%) ...: NOT VERIFIED"), so
  the flag alone never turns an audit that looked at almost nothing into a pass;
- ``clean`` (pass): none of these.

Only ``clean`` exits 0 and passes the gate; the reason says how many chunks were checked.
"""

from __future__ import annotations

from typing import Literal

from ragaudit.verdict import TENANT_ISOLATION, CheckVerdict

Verdict = Literal["clean", "leak", "incomplete", "not-verified"]
UNATTRIBUTED_BECAUSE = (
    "their text is found in no document, or nothing identifies them at all (id, text, title, snippet, "
    "highlight, metadata, source id), so they cannot be shown to be the caller's (opaque ids, analysed "
    "or rewritten text)"
)
NOT_CHECKED = (
    "not checked by probing: a tenant read from token claims the service does not verify (unless "
    "--endpoint-keys holds JWTs naming their tenants), counts and timing side channels, a leak rarer "
    "than the detection power, parameters and page tokens under names the audit does not try, other "
    "endpoints and HTTP methods than the one audited (a GET search, /suggest) and HTTP trailers "
    "(docs/security.md, Threat model)"
)
"""What a clean verdict does not cover: the classes a black-box audit cannot catch, said with every pass."""
RENAMED_TENANTS = (
    "; every one of the {n} requests naming a tenant of --corpus failed, so the ids that were served "
    "(near misses, other spellings) may be the service's own names for these tenants (ACME for acme): "
    "check that --corpus names the tenants as the service does (leaks.by_pair lists who got what)"
)
"""Said with a leak when no request naming a real tenant was answered: the data went only to other ids."""
ALLOW_FLAG = "--allow-unattributed"
MIN_FLAG = "--min-attributed"
DEFAULT_MIN_ATTRIBUTED = 0.95
FIX = (
    "fix: return each chunk's text as content, or ids the corpus knows (map them with --field "
    "chunk_id=THEIRS), and check --corpus is the data the service serves"
)


def stopped_sentence(not_sent: object, reason: object) -> str:
    """An early stop in words: how many planned requests were not sent, and why."""
    return f"{not_sent} planned requests were not sent; {reason}"


def audit_verdict(
    *,
    leaks: int,
    checked: int,
    unattributed: int,
    failed: int,
    tenant_requests: int,
    errors_within_limit: bool,
    allow_unattributed: bool,
    stopped: str | None = None,
    min_attributed: float = DEFAULT_MIN_ATTRIBUTED,
    also: str = "",
) -> tuple[Verdict, CheckVerdict]:
    """The verdict and its :class:`~ragaudit.verdict.CheckVerdict` (see the module docstring). ``also``
    is added to the counts (shared and semantically attributed chunks, in words)."""
    attributed = checked - unattributed
    counted = f"{checked} returned chunk(s) checked, {attributed} attributed by the corpus{also}"
    if leaks:
        return "leak", CheckVerdict(
            TENANT_ISOLATION,
            "fail",
            f"{leaks} foreign chunk(s) served; {counted}"
            + (
                RENAMED_TENANTS.format(n=tenant_requests)
                if tenant_requests and failed == tenant_requests
                else ""
            ),
            attributed,
            checked,
            leaks,
        )
    if stopped:
        return "incomplete", CheckVerdict(
            TENANT_ISOLATION,
            "not_verified",
            f"the audit stopped early: {stopped}; no foreign chunk among the {attributed} attributed",
            attributed,
            checked,
        )
    if not errors_within_limit:
        return "incomplete", CheckVerdict(
            TENANT_ISOLATION,
            "not_verified",
            f"{failed} of {tenant_requests} probe requests failed even in plain form (listed as unverified); "
            f"no foreign chunk among the {attributed} attributed",
            attributed,
            checked,
        )
    if attributed == 0:
        why = (
            f"none of the {checked} returned chunks could be attributed: {UNATTRIBUTED_BECAUSE}; {FIX}"
            if checked
            else "the service returned no chunk to any probe, not even to its owner, so nothing was checked"
        )
        return "not-verified", CheckVerdict(TENANT_ISOLATION, "not_verified", why, 0, checked)
    share = attributed / checked
    verified = f"verified {attributed:,} of {checked:,} returned chunks ({share:.1%})"
    if unattributed and not allow_unattributed:
        return "not-verified", CheckVerdict(
            TENANT_ISOLATION,
            "not_verified",
            f"{verified}: {unattributed} of {checked} returned chunks could not be attributed: "
            f"{UNATTRIBUTED_BECAUSE}; "
            f"no foreign chunk among the {attributed} attributed{also} ({FIX}, or {ALLOW_FLAG} to accept "
            f"them when at least {MIN_FLAG} {min_attributed:g} of the chunks are attributed)",
            attributed,
            checked,
        )
    if unattributed and share < min_attributed:
        return "not-verified", CheckVerdict(
            TENANT_ISOLATION,
            "not_verified",
            f"{verified}, below {MIN_FLAG} {min_attributed:g}: NOT VERIFIED; {unattributed:,} unattributed "
            f"chunk(s) ({UNATTRIBUTED_BECAUSE}) are more than {ALLOW_FLAG} may accept; no foreign chunk "
            f"among the {attributed} attributed{also}; {FIX}",
            attributed,
            checked,
        )
    allowed = (
        f"; {verified}, at least {MIN_FLAG} {min_attributed:g}: {unattributed:,} unattributed chunk(s) "
        f"accepted by {ALLOW_FLAG}"
        if unattributed
        else ""
    )
    return "clean", CheckVerdict(
        TENANT_ISOLATION,
        "pass",
        f"no foreign chunk served; {counted}{allowed}; {NOT_CHECKED}",
        attributed,
        checked,
    )
