"""The one exit rule of every command that runs retrieval or a judge (docs/cli.md, "Exit codes").

After writing its report, such a command says how each source went (``done LABEL: 84 cases, 0 failed,
75 of 75 answerable scored``, stderr, not with ``--quiet``) and exits 1 when any source it ran (an endpoint, a Python
retriever, a pipeline, a run file, a chat endpoint answering or judging) has:

- a failed share above ``--max-error-rate``::

      failed share = failed / total     failed = cases with no ranking (or answer): an error, a
                                        timeout, a malformed reply, no tenant, or (run files) no
                                        result for an answerable case of the dataset

  with the default 0, any failed case fails the run;
- no case that could be scored (``scored`` = answerable cases with a ranking, or answers obtained):
  every case failed, or none is answerable at ``--relevance-threshold``;
- (run files) no case id in common with the dataset;
- a cross-tenant chunk among what it returned (printed as ``SECURITY: ...``): whatever
  ``--max-error-rate`` allows, a leak is a release blocker.

The rule itself (:class:`~ragaudit.evaluation.outcome.SourceOutcome`) lives in
:mod:`ragaudit.evaluation.outcome`, so ``ragaudit gate`` and the pytest plugin apply the same one; this
module prints it and turns it into the exit code. The summary (stderr) names each failing source, its first failures (case id and message), the count
of failures by kind (``timeout``, ``HTTP 500``, ``HTTP 401``, ``bad JSON``, ``connection``, an exception
type, ...) and, per kind, the flag that fixes the usual cause, in the command's own option names.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from collections.abc import Sequence
from typing import TextIO

from ragaudit.cli.argtypes import share
from ragaudit.cli.console import quiet
from ragaudit.evaluation.outcome import (
    SourceOutcome,
    Via,
    eval_outcome,
    failures_outcome,
    report_outcome,
    result_outcome,
    run_outcome,
)
from ragaudit.security.error_rate import classify_error

__all__ = [
    "SourceOutcome",
    "Via",
    "add_outcome_options",
    "eval_outcome",
    "exit_code",
    "failure_kind",
    "failures_outcome",
    "fix_for",
    "report_outcome",
    "result_outcome",
    "run_outcome",
]


EXIT_CODES = """\
exit codes (the same for every command that runs retrieval or a judge):
  0  every case was answered and scored (or the failed share is within --max-error-rate)
  1  the run failed: the share of failed cases is above --max-error-rate (default 0: any
     failed case fails the run), no case could be scored, a run file shares no case id
     with the dataset, or a cross-tenant chunk was returned (SECURITY: a release blocker);
     the report is still written, and stderr names the first failures, their count by
     kind and the flag that fixes the usual cause
  2  bad usage or input: an option out of range, a missing or malformed file
see docs/cli.md, "Exit codes\""""

SHOWN = 5
"""First failures printed per source."""
NO_ANSWER = "no answer for this case in"
"""The start of the reason of a case an ``--answers`` file has no answer for (``check-answers``)."""
NO_ANSWER_KIND = "no answer"


def add_outcome_options(parser: argparse.ArgumentParser) -> None:
    """``--max-error-rate`` and the exit-code text at the end of ``--help``."""
    parser.add_argument(
        "--max-error-rate",
        type=share,
        default=0.0,
        metavar="SHARE",
        help="share of failed cases tolerated before the run fails with exit 1 (default 0: any failed "
        "case fails it)",
    )
    parser.epilog = EXIT_CODES
    parser.formatter_class = argparse.RawDescriptionHelpFormatter


_HTTP = re.compile(r"\bHTTP (\d{3})\b")
_EXCEPTION = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning))\b")


def failure_kind(reason: str) -> str:
    """A short kind for a failure reason: ``HTTP 401``, ``timeout``, ``connection``, ``bad JSON``,
    ``malformed response``, ``no-tenant``, ``missing``, an exception type (``KeyError``), or ``other``
    (refines :func:`ragaudit.security.error_rate.classify_error`)."""
    if reason.startswith(NO_ANSWER):
        return NO_ANSWER_KIND
    kind = classify_error(reason)
    if kind.startswith("http"):
        found = _HTTP.search(reason)
        return f"HTTP {found.group(1)}" if found else kind
    if kind == "malformed-response":
        return "bad JSON" if re.search(r"not (valid )?JSON", reason) else "malformed response"
    if kind == "other":
        found = _EXCEPTION.match(reason)
        return found.group(1) if found else "other"
    return kind


def fix_for(kind: str, via: Via) -> str:
    """The flag (in the CLI's own option names) that fixes the usual cause of ``kind`` failures."""
    if kind == NO_ANSWER_KIND:
        return (
            "give every case of --dataset an answer in --answers (an empty answer is a decline), "
            "or raise --max-error-rate to check only the cases answered"
        )
    chat = via in ("chat", "judge")
    url = "--judge-endpoint (or --endpoint)" if via == "judge" else "--endpoint"
    concurrency = "--answer-concurrency" if chat else "--concurrency"
    if kind == "HTTP 403" and not chat:
        return (
            "the service refused these tenants' requests: a key bound to one tenant needs --endpoint-keys "
            "FILE with one key per tenant (else check the credential of --auth-env)"
        )
    if kind in ("HTTP 401", "HTTP 403"):
        if chat:
            return "the service refused the credential: pass --api-key-env VAR (the env var holding the key)"
        return (
            "the service refused the credential: pass --auth-env VAR (the env var holding the token), "
            "or --endpoint-keys FILE with one key per tenant"
        )
    if kind in ("HTTP 404", "HTTP 405"):
        return f"check the URL of {url} (its path, and that it accepts POST)"
    if kind in ("HTTP 400", "HTTP 422"):
        if chat:
            return "the service rejected the request: check --model"
        return "the service rejected {tenant_id, query, top_k}: check --tenant and --top-k"
    if kind == "HTTP 429":
        return f"the service is rate-limiting: lower {concurrency}"
    if kind.startswith("HTTP 5") or kind == "http-5xx":
        return "the service failed on its side (see its logs); to tolerate a few, raise --max-error-rate"
    if kind == "connection":
        return f"nothing answered: check {url} (the URL, and that the service is up)"
    if kind == "timeout":
        return f"no answer within --timeout: raise --timeout or lower {concurrency}"
    if kind in ("bad JSON", "malformed response"):
        if chat:
            return f"check {url} is an OpenAI-compatible API root (e.g. http://host/v1) and --model"
        if via == "endpoint" and kind == "bad JSON":
            return "the service answered something that is not JSON: check --endpoint is its search URL"
        if via == "endpoint":
            return (
                "map the response: --results-field PATH (where the result list is) and "
                "--field chunk_id=THEIRS (repeatable)"
            )
        return "the retriever returned the wrong shape: search() must return chunks with a chunk_id"
    if kind == "no-tenant":
        return "cases without tenant_id: add --tenant TENANT"
    if kind == "missing":
        return "the run has no result for these cases: check --run was made for this --dataset and --split"
    if kind == "KeyError" and via == "endpoint":
        return "a field is missing from the response: map it with --field OURS=THEIRS or --results-field PATH"
    if via == "retriever":
        return f"the --retriever raised {kind}: fix its search() (the message above says where)"
    if via == "pipeline":
        return f"the pipeline raised {kind}: check --pipeline and the models it needs"
    return f"see the messages above ({kind})"


# -- the verdict ------------------------------------------------------------------------------------


def _details(outcome: SourceOutcome) -> list[str]:
    if not outcome.failures:
        return []
    kinds = Counter(failure_kind(reason) for _, reason in outcome.failures)
    lines = ["  by kind: " + ", ".join(f"{n} {kind}" for kind, n in kinds.most_common())]
    lines.append("  first failures:")
    lines += [f"    {cid}: {reason}" for cid, reason in outcome.failures[:SHOWN]]
    if len(outcome.failures) > SHOWN:
        lines.append(f"    ... {len(outcome.failures) - SHOWN} more in the report")
    lines += [f"  fix ({kind}): {fix_for(kind, outcome.via)}" for kind, _ in kinds.most_common(3)]
    return lines


def exit_code(
    outcomes: Sequence[SourceOutcome], max_error_rate: float, *, stream: TextIO | None = None
) -> int:
    """Apply the rule to every source: print the summary to ``stream`` (stderr) and return 1 when any
    source fails the run, else 0 (a tolerated failure is still printed, as a note)."""
    out = stream if stream is not None else sys.stderr
    failed = False
    if not quiet():
        for outcome in outcomes:
            print(f"done {outcome.label}: {outcome.summary()}", file=out)
    for outcome in outcomes:
        security = outcome.security_problem()
        if security is not None:
            failed = True
            print(f"{security} ({outcome.label}; the report lists each one)", file=out)
        problems = outcome.problems(max_error_rate)
        if problems:
            failed = True
            for problem in problems:
                print(f"FAILED {outcome.label}: {problem}", file=out)
            if outcome.failures and outcome.run_ids != 0 and outcome.shared_ids != 0:
                print("\n".join(_details(outcome)), file=out)
        elif outcome.failures:
            print(f"note: {outcome.label}: {outcome.tolerated(max_error_rate)}", file=out)
            print("\n".join(_details(outcome)), file=out)
    if failed:
        print("exit 1: the run failed (the report, if asked for, was written all the same)", file=out)
    return 1 if failed else 0
