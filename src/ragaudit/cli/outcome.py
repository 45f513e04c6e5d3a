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
- (run files) no case id in common with the dataset.

The summary (stderr) names each failing source, its first failures (case id and message), the count
of failures by kind (``timeout``, ``HTTP 500``, ``HTTP 401``, ``bad JSON``, ``connection``, an exception
type, ...) and, per kind, the flag that fixes the usual cause, in the command's own option names.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TextIO

from ragaudit.cli.argtypes import share
from ragaudit.cli.console import quiet
from ragaudit.security.error_rate import MISSING, classify_error

Via = Literal["endpoint", "retriever", "pipeline", "run", "report", "chat", "judge"]
"""How a source was queried; it picks the flags the fixes name."""

EXIT_CODES = """\
exit codes (the same for every command that runs retrieval or a judge):
  0  every case was answered and scored (or the failed share is within --max-error-rate)
  1  the run failed: the share of failed cases is above --max-error-rate (default 0: any
     failed case fails the run), no case could be scored, or a run file shares no case id
     with the dataset; the report is still written, and stderr names the first failures,
     their count by kind and the flag that fixes the usual cause
  2  bad usage or input: an option out of range, a missing or malformed file
see docs/cli.md, "Exit codes\""""

SHOWN = 5
"""First failures printed per source."""


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


@dataclass(frozen=True)
class SourceOutcome:
    """What one source gave: every case's failure (if any), how many cases were scored, and, for a
    run file, how many of its ids the dataset has."""

    label: str
    via: Via
    total: int
    failures: tuple[tuple[str, str], ...]
    """``(case id, reason)`` of every failed case, in dataset order."""
    scored: int
    answerable: int | None = None
    """Answerable cases (``None`` where answerability does not apply, e.g. answers)."""
    run_ids: int | None = None
    """Run files: how many distinct ids the run has (``None`` for live sources)."""
    shared_ids: int | None = None
    """Run files: how many of them are cases of the dataset."""
    dataset_sample: tuple[str, ...] = ()
    run_sample: tuple[str, ...] = ()

    def summary(self) -> str:
        """How the run went, in one line: cases, failed, scored."""
        unit = {"chat": "answers", "judge": "judgements"}.get(self.via, "cases")
        scored = (
            f"{self.scored} scored"
            if self.answerable is None
            else f"{self.scored} of {self.answerable} answerable scored"
        )
        return f"{self.total} {unit}, {len(self.failures)} failed, {scored}"

    @property
    def rate(self) -> float:
        return len(self.failures) / self.total if self.total else 0.0

    def problems(self, max_error_rate: float) -> list[str]:
        """Why this source fails the run (empty when it does not)."""
        out: list[str] = []
        if self.run_ids is not None and self.shared_ids == 0:
            what = "has no result at all" if self.run_ids == 0 else "shares no case id with the dataset"
            ids = f"its ids: {_sample(self.run_sample)}; " if self.run_sample else ""
            return [  # every other problem follows from this one
                f"the {_noun(self.via)} {what} ({ids}the dataset's: {_sample(self.dataset_sample)}); "
                "was it made for another --dataset or --split?"
            ]
        if self.failures and self.rate > max_error_rate:
            out.append(
                f"{len(self.failures)} of {self.total} cases failed ({self.rate:.1%}; --max-error-rate "
                f"allows {max_error_rate:.1%})"
            )
        if self.scored == 0:
            if self.answerable == 0:
                out.append(
                    "no case could be scored: no case of the dataset is answerable (none has a relevant "
                    "item at --relevance-threshold); check the threshold and the labels"
                )
            elif self.total == 0:
                out.append("no case could be scored: the dataset has no case")
            else:
                out.append(f"no case could be scored: every {_unit(self.via)} failed or is missing")
        return out


def _noun(via: Via) -> str:
    return {"run": "--run file", "report": "--report"}.get(via, via)


def _unit(via: Via) -> str:
    return {"chat": "answer", "judge": "judgement"}.get(via, "answerable case")


def _sample(ids: Sequence[str]) -> str:
    return ", ".join(repr(i) for i in ids[:3]) + (" ..." if len(ids) > 3 else "")


_HTTP = re.compile(r"\bHTTP (\d{3})\b")
_EXCEPTION = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning))\b")


def failure_kind(reason: str) -> str:
    """A short kind for a failure reason: ``HTTP 401``, ``timeout``, ``connection``, ``bad JSON``,
    ``malformed response``, ``no-tenant``, ``missing``, an exception type (``KeyError``), or ``other``
    (refines :func:`ragaudit.security.error_rate.classify_error`)."""
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
    chat = via in ("chat", "judge")
    url = "--judge-endpoint (or --endpoint)" if via == "judge" else "--endpoint"
    concurrency = "--answer-concurrency" if chat else "--concurrency"
    if kind in ("HTTP 401", "HTTP 403"):
        if chat:
            return "the service refused the credential: pass --api-key-env VAR (the env var holding the key)"
        return "the service refused the credential: pass --auth-env VAR (the env var holding the token)"
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


# -- building outcomes ------------------------------------------------------------------------------


def _field(case: Any, name: str) -> Any:
    return case.get(name) if isinstance(case, Mapping) else getattr(case, name, None)


def eval_outcome(
    per_case: Iterable[Any],
    label: str,
    via: Via,
    *,
    not_in_dataset: int = 0,
    run_sample: Sequence[str] = (),
) -> SourceOutcome:
    """The outcome of an evaluation from its per-case entries (:class:`CaseResult` objects or the
    ``per_case`` dicts of an eval report). A case fails when it errored (answerable or not) or, being
    answerable, is missing from the run. With ``via`` ``run``/``report`` the shared ids are counted
    (``not_in_dataset``: run ids that are not cases)."""
    total = scored = answerable = in_run = 0
    failures: list[tuple[str, str]] = []
    sample: list[str] = []
    for case in per_case:
        cid, status, error = str(_field(case, "id")), _field(case, "status"), _field(case, "error")
        total += 1
        if len(sample) < 3:
            sample.append(cid)
        answerable += status != "unanswerable"
        scored += status == "ok"
        present = status != "missing" and (
            status != "unanswerable" or bool(_field(case, "answered")) or error is not None
        )
        in_run += present
        if status == "missing":
            failures.append((cid, MISSING))
        elif error is not None:
            failures.append((cid, str(error)))
    from_file = via in ("run", "report")
    return SourceOutcome(
        label,
        via,
        total,
        tuple(failures),
        scored,
        answerable,
        in_run + not_in_dataset if from_file else None,
        in_run if from_file else None,
        tuple(sample),
        tuple(run_sample),
    )


def result_outcome(result: Any, label: str, via: Via, run_sample: Sequence[str] = ()) -> SourceOutcome:
    """:func:`eval_outcome` of an :class:`~ragaudit.evaluation.result.EvalResult`."""
    return eval_outcome(
        result.per_case, label, via, not_in_dataset=result.counts.not_in_dataset, run_sample=run_sample
    )


def report_outcome(report: Mapping[str, Any], label: str, via: Via) -> SourceOutcome:
    """:func:`eval_outcome` of an eval report dict (``EvalResult.to_dict()`` or its JSON, parsed)."""
    counts = report.get("counts")
    extra = counts.get("not_in_dataset", 0) if isinstance(counts, Mapping) else 0
    per_case = report.get("per_case")
    return eval_outcome(
        per_case if isinstance(per_case, list) else [], label, via, not_in_dataset=int(extra or 0)
    )


def failures_outcome(
    outcomes: Mapping[str, str | None] | Iterable[tuple[str, str | None]], label: str, via: Via
) -> SourceOutcome:
    """The outcome of ``(case id, error or None)`` pairs (answers, judgements, run cases): a case is
    scored when it has no error."""
    pairs = list(outcomes.items()) if isinstance(outcomes, Mapping) else list(outcomes)
    failures = tuple((cid, error) for cid, error in pairs if error is not None)
    return SourceOutcome(label, via, len(pairs), failures, len(pairs) - len(failures))


def run_outcome(run: Any, case_ids: Sequence[str], label: str, via: Via) -> SourceOutcome:
    """The outcome of a :class:`~ragaudit.data.run.Run` over ``case_ids`` (no relevance involved): a
    case fails when it errored or the run lacks it; with ``via`` ``run`` the shared ids are counted."""
    cases = run.cases
    pairs = [(cid, cases[cid].error if cid in cases else MISSING) for cid in case_ids]
    outcome = failures_outcome(pairs, label, via)
    if via != "run":
        return outcome
    wanted = set(case_ids)
    return SourceOutcome(
        label,
        via,
        outcome.total,
        outcome.failures,
        outcome.scored,
        run_ids=len(cases),
        shared_ids=sum(1 for cid in cases if cid in wanted),
        dataset_sample=tuple(case_ids[:3]),
        run_sample=tuple(list(cases)[:3]),
    )


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
        problems = outcome.problems(max_error_rate)
        if problems:
            failed = True
            for problem in problems:
                print(f"FAILED {outcome.label}: {problem}", file=out)
            if outcome.failures and outcome.run_ids != 0 and outcome.shared_ids != 0:
                print("\n".join(_details(outcome)), file=out)
        elif outcome.failures:
            print(
                f"note: {outcome.label}: {len(outcome.failures)} of {outcome.total} cases failed "
                f"({outcome.rate:.1%}), within --max-error-rate {max_error_rate:.1%}",
                file=out,
            )
            print("\n".join(_details(outcome)), file=out)
    if failed:
        print("exit 1: the run failed (the report, if asked for, was written all the same)", file=out)
    return 1 if failed else 0
