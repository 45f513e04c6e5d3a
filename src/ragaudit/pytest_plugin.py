"""pytest plugin: retrieval evaluations and tenant-isolation checks as ordinary tests.

Registered as the ``pytest11`` entry point ``ragaudit`` (or ``-p ragaudit.pytest_plugin``). It adds:

Fixtures (built once per session for each distinct configuration)
    ``golden_dataset``  the golden set (:class:`~ragaudit.data.schema.Dataset`);
    ``retriever``       the system under test (:class:`~ragaudit.retrieval.protocol.Retriever`): a built-in
                        pipeline over a corpus, or your own ``module:factory``;
    ``eval_result``     every golden case run through ``retriever`` and scored
                        (:class:`~ragaudit.evaluation.result.EvalResult`);
    ``tenant_audit``    the full tenant audit of ``retriever`` over the corpus, as ``ragaudit
                        audit-tenants`` runs it (:class:`~ragaudit.security.tenant_audit.TenantAudit`).

Configuration, most specific last wins over earlier: ini options (``[tool.pytest.ini_options]``:
``ragaudit_dataset``, ``ragaudit_corpus``, ``ragaudit_pipeline``, ``ragaudit_retriever``,
``ragaudit_metrics``, ``ragaudit_top_k``, ``ragaudit_tenant``, ``ragaudit_tenant_aliases``,
``ragaudit_report``, ``ragaudit_history``), then a ``@pytest.mark.ragaudit(dataset=..., pipeline=..., ...)`` marker on the
test, class or module (``pytestmark``), then the command line (``--ragaudit-dataset`` ...). Relative
paths resolve against the ini file's folder, the test file's folder and the invocation folder
respectively; ``demo:NAME`` names a file of the bundled demo knowledge base (``demo:corpus.jsonl``,
``demo:golden.jsonl``).

``tenant_aliases`` maps the tenant ids your tests use to the ids in the indexed corpus
(``tenant_acme=acme``): the retriever is asked for ``acme``, and chunks owned by ``acme`` come back
labelled ``tenant_acme``; chunks of any other tenant keep their owner, so a leak still shows.

Markers
    ``security``        a tenant-isolation test (``pytest -m security``);
    ``retrieval_eval``  a retrieval-quality test on the golden set (``pytest -m retrieval_eval``);
    ``ragaudit(**options)`` per-test configuration, as above.

``async def`` tests run without pytest-asyncio: the plugin runs coroutine test functions on one
event loop per session (so a session-scoped retriever holding connections stays on its loop), unless
pytest-asyncio or anyio is installed and has claimed the test.

Assertion helpers whose failures read as a report: :func:`assert_floor`, :func:`assert_floors`,
:func:`assert_no_leaks`, :func:`assert_no_errors`, :func:`assert_tenant_audit_clean`.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

if TYPE_CHECKING:
    from ragaudit.corpus.loading import Corpus
    from ragaudit.data.schema import Dataset
    from ragaudit.evaluation.result import EvalResult
    from ragaudit.pipelines.sources import OpenedSource
    from ragaudit.retrieval.protocol import RetrievedChunk, Retriever
    from ragaudit.security.tenant_audit import TenantAudit

OPTIONS: dict[str, str] = {
    "dataset": "golden dataset: JSONL, BEIR folder or TREC qrels (demo:golden.jsonl = the bundled demo)",
    "corpus": "corpus JSONL or BEIR folder the pipeline indexes (demo:corpus.jsonl = the bundled demo)",
    "pipeline": "built-in pipeline over the corpus: bm25, dense, hybrid, hybrid-rerank:MODEL.json or a TOML file",
    "retriever": "your own retriever instead of a pipeline: module:factory",
    "metrics": "comma-separated metrics of eval_result (default nDCG@10,R@5,R@10,R@100,P@5,MRR@10,MAP@100,Hit@5)",
    "top_k": "results requested per query (default: the largest metric cut-off)",
    "tenant": "tenant for golden cases that name none",
    "tenant_aliases": "YOUR_TENANT=INDEX_TENANT pairs (one per line, or comma-separated)",
    "report": "write eval_result's JSON report here (then 'ragaudit gate' can read it)",
    "audit_report": "write tenant_audit's JSON report here (then 'ragaudit gate --audit' can read it: only "
    "the cross-tenant audit verifies isolation)",
    "history": "record eval_result in this run-history file ('auto': .ragaudit/history.sqlite at the git top-level)",
}
PATH_KEYS = ("dataset", "corpus", "report", "audit_report", "history")
MARKERS = (
    "security: a tenant-isolation test (select with -m security)",
    "retrieval_eval: a retrieval-quality test on the golden set (select with -m retrieval_eval)",
    "ragaudit(**options): configure ragaudit's fixtures for this test (dataset, corpus, pipeline, "
    "retriever, metrics, top_k, tenant, tenant_aliases, report, audit_report, history)",
)
DEMO_PREFIX = "demo:"


@dataclass(frozen=True)
class Settings:
    """Resolved configuration of the fixtures (paths absolute)."""

    dataset: str | None = None
    corpus: str | None = None
    pipeline: str | None = None
    retriever: str | None = None
    metrics: str | None = None
    top_k: int | None = None
    tenant: str | None = None
    tenant_aliases: tuple[tuple[str, str], ...] = ()
    report: str | None = None
    audit_report: str | None = None
    history: str | None = None


def _usage(message: str) -> NoReturn:
    pytest.fail(f"ragaudit: {message}", pytrace=False)


def demo_file(name: str) -> Path:
    """A file of the bundled demo knowledge base."""
    from importlib.resources import files

    path = Path(str(files("ragaudit") / "demo_data" / "kb" / name))
    if not path.exists():
        _usage(f"no demo file {name!r}; use demo:golden.jsonl or demo:corpus.jsonl")
    return path


def _path(value: str, base: Path) -> str:
    if value.startswith(DEMO_PREFIX):
        return str(demo_file(value[len(DEMO_PREFIX) :]))
    return str((base / Path(value).expanduser()).resolve())


def _aliases(value: object) -> tuple[tuple[str, str], ...]:
    if isinstance(value, Mapping):
        pairs = [(str(k), str(v)) for k, v in value.items()]
    else:
        items = value if isinstance(value, (list, tuple)) else str(value).replace(",", "\n").splitlines()
        pairs = []
        for item in items:
            text = str(item).strip()
            if not text:
                continue
            ours, eq, theirs = text.partition("=")
            if not eq or not ours.strip() or not theirs.strip():
                _usage(f"tenant alias {text!r} is not YOUR_TENANT=INDEX_TENANT, e.g. tenant_acme=acme")
            pairs.append((ours.strip(), theirs.strip()))
    targets = [theirs for _, theirs in pairs]
    if len(set(targets)) != len(targets) or len({o for o, _ in pairs}) != len(pairs):
        _usage(f"tenant aliases must map one-to-one (got {pairs})")
    return tuple(pairs)


def _apply(settings: Settings, values: Mapping[str, Any], base: Path, where: str) -> Settings:
    changes: dict[str, Any] = {}
    for key, value in values.items():
        if key not in OPTIONS:
            _usage(f"unknown option {key!r} in {where}; valid: {', '.join(OPTIONS)}")
        if value is None or value == "" or value == []:
            continue
        if key == "history" and value == "auto":
            changes[key] = "auto"
        elif key in PATH_KEYS or (key == "pipeline" and str(value).endswith(".toml")):
            changes[key] = _path(str(value), base)
        elif key == "top_k":
            try:
                changes[key] = int(value)
            except ValueError:
                _usage(f"top_k in {where} must be a positive integer (got {value!r})")
            if changes[key] < 1:
                _usage(f"top_k in {where} must be a positive integer (got {value!r})")
        elif key == "tenant_aliases":
            changes[key] = _aliases(value)
        else:
            changes[key] = str(value)
    return replace(settings, **changes)


def resolve_settings(request: pytest.FixtureRequest) -> Settings:
    """ini options, then the closest ``ragaudit`` marker, then command-line options."""
    config = request.config
    ini_base = config.inipath.parent if config.inipath else config.rootpath
    settings = _apply(
        Settings(), {k: config.getini(f"ragaudit_{k}") for k in OPTIONS}, ini_base, "the ini file"
    )
    marker = request.node.get_closest_marker("ragaudit")
    if marker is not None:
        if marker.args:
            _usage(
                "the ragaudit marker takes keyword options only, e.g. @pytest.mark.ragaudit(pipeline='bm25')"
            )
        settings = _apply(settings, marker.kwargs, request.node.path.parent, "@pytest.mark.ragaudit")
    cli = {k: config.getoption(f"ragaudit_{k}") for k in OPTIONS}
    return _apply(settings, cli, config.invocation_params.dir, "the command line")


@dataclass(frozen=True)
class _AliasedOwner:
    """An attribution whose caller is named by a tenant alias (``tenant_acme`` for the corpus's ``acme``)."""

    found: Any
    aliases: Mapping[str, str]

    @property
    def attributed(self) -> bool:
        return bool(self.found.attributed)

    @property
    def text_unfound(self) -> bool:
        return bool(self.found.text_unfound)

    def foreign_owners(self, caller: str) -> frozenset[str]:
        return frozenset(self.found.foreign_owners(self.aliases.get(caller, caller)))


@dataclass(frozen=True)
class _AliasedOwnership:
    """The corpus's ownership index, asked on behalf of callers named by ``tenant_aliases``."""

    index: Any
    aliases: Mapping[str, str]

    def attribute_item(self, item: Any) -> _AliasedOwner:
        return _AliasedOwner(self.index.attribute_item(item), self.aliases)


class TenantAliasRetriever:
    """Ask the index for the aliased tenant; label the caller's own chunks with the caller's tenant id."""

    def __init__(self, inner: Retriever, aliases: Mapping[str, str]) -> None:
        self.inner = inner
        self.aliases = dict(aliases)

    async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        index_tenant = self.aliases.get(tenant_id, tenant_id)
        chunks = await self.inner.search(tenant_id=index_tenant, query=query, top_k=top_k)
        if index_tenant == tenant_id:
            return chunks
        relabelled: list[RetrievedChunk] = []
        for chunk in chunks:
            if chunk.get("tenant_id") == index_tenant:
                chunk = {**chunk, "tenant_id": tenant_id}
            relabelled.append(chunk)
        return relabelled

    async def start_session(self, *, concurrency: int) -> None:
        """Pass the runner's session hooks through (an HTTP retriever sizes its pool there)."""
        start = getattr(self.inner, "start_session", None)
        if start is not None:
            await start(concurrency=concurrency)

    async def end_session(self) -> None:
        end = getattr(self.inner, "end_session", None)
        if end is not None:
            await end()


@dataclass
class _Session:
    """What the plugin builds once per test session."""

    loop: asyncio.AbstractEventLoop | None = None
    datasets: dict[str, Dataset] = field(default_factory=dict)
    corpora: dict[str, Corpus] = field(default_factory=dict)
    sources: dict[tuple[str, str | None], OpenedSource] = field(default_factory=dict)
    results: dict[Settings, EvalResult] = field(default_factory=dict)
    ownership: dict[tuple[str, str | None], Any] = field(default_factory=dict)
    audits: dict[Settings, TenantAudit] = field(default_factory=dict)

    def event_loop(self) -> asyncio.AbstractEventLoop:
        if self.loop is None or self.loop.is_closed():
            self.loop = asyncio.new_event_loop()
        return self.loop

    def close(self) -> None:
        if self.loop is not None and not self.loop.is_closed():
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            self.loop.close()


_SESSION = pytest.StashKey[_Session]()


def _session(config: pytest.Config) -> _Session:
    return config.stash.setdefault(_SESSION, _Session())


def _threshold() -> int:
    from ragaudit.metrics.policy import Policy

    return Policy().relevance_threshold


def _load_dataset(state: _Session, settings: Settings) -> Dataset:
    from ragaudit.data.loading import load_dataset

    if not settings.dataset:
        _usage(
            "no golden dataset configured; set ragaudit_dataset in the ini file, "
            "@pytest.mark.ragaudit(dataset=...) or --ragaudit-dataset"
        )
    if settings.dataset not in state.datasets:
        state.datasets[settings.dataset] = load_dataset(settings.dataset, threshold=_threshold())
    return state.datasets[settings.dataset]


def _opened(state: _Session, settings: Settings) -> OpenedSource:
    """The session's source for ``settings``: ``ragaudit_retriever`` if set, else the pipeline over the
    corpus (opened once per session by :func:`ragaudit.pipelines.sources.open_source`)."""
    from ragaudit.corpus.loading import load_corpus
    from ragaudit.pipelines.sources import SourceSpec, open_source

    if settings.retriever:
        key: tuple[str, str | None] = (settings.retriever, None)
        spec = SourceSpec(retriever=settings.retriever)
    elif settings.pipeline:
        if not settings.corpus:
            _usage(
                f"pipeline {settings.pipeline!r} needs a corpus; set ragaudit_corpus (e.g. demo:corpus.jsonl)"
            )
        key, spec = (settings.pipeline, settings.corpus), SourceSpec(pipeline=settings.pipeline)
    else:
        _usage(
            "no retriever configured; set ragaudit_retriever = module:factory, or ragaudit_pipeline "
            "(bm25, dense, hybrid, hybrid-rerank:MODEL.json or a TOML file) with ragaudit_corpus"
        )
    if key not in state.sources:
        corpus = None
        if spec.pipeline and settings.corpus:
            if settings.corpus not in state.corpora:
                state.corpora[settings.corpus] = load_corpus(settings.corpus)
            corpus = state.corpora[settings.corpus]
        state.sources[key] = open_source(spec, corpus=corpus)
    return state.sources[key]


def _retriever(state: _Session, settings: Settings) -> Retriever:
    inner = _opened(state, settings).retriever
    if settings.corpus:  # who owns a chunk comes from the corpus, never from the label the retriever attaches
        inner = _corpus_labeled(state, settings, inner)
    return TenantAliasRetriever(inner, dict(settings.tenant_aliases)) if settings.tenant_aliases else inner


def _corpus_labeled(state: _Session, settings: Settings, inner: Retriever) -> Retriever:
    from ragaudit.security.verified import CorpusLabeledRetriever

    return CorpusLabeledRetriever(inner, _ownership(state, settings))


def _ownership(state: _Session, settings: Settings) -> Any:
    """The ownership index over the configured corpus (and a built-in pipeline's chunks), once per session."""
    from ragaudit.corpus.loading import load_corpus
    from ragaudit.security.ownership import OwnershipIndex

    corpus_path = str(settings.corpus)
    if corpus_path not in state.corpora:
        state.corpora[corpus_path] = load_corpus(corpus_path)
    pipeline = settings.pipeline if settings.pipeline and not settings.retriever else None
    key = (corpus_path, pipeline)
    if key not in state.ownership:
        chunks = _opened(state, settings).chunks if pipeline else ()
        state.ownership[key] = OwnershipIndex.build(state.corpora[corpus_path].documents, chunks)
    return state.ownership[key]


def _evaluate(state: _Session, settings: Settings) -> EvalResult:
    from ragaudit.evaluation.live import RunOptions, evaluate_live, retrieval_depth
    from ragaudit.metrics.names import DEFAULT_METRICS, parse_metrics
    from ragaudit.metrics.policy import Policy

    if settings in state.results:
        return state.results[settings]
    golden = _load_dataset(state, settings)
    retriever = _retriever(state, settings)
    source = _opened(state, settings)
    dataset = source.scored_on(golden, _threshold())
    context, name = source.provenance(), source.label
    specs = parse_metrics(settings.metrics) if settings.metrics else DEFAULT_METRICS
    options = RunOptions(retrieval_depth(specs, settings.top_k), settings.tenant, progress=False)
    ownership = None
    if settings.corpus:  # every returned chunk's owner from the corpus (a label is only a claim)
        ownership = _AliasedOwnership(_ownership(state, settings), dict(settings.tenant_aliases))
    result = state.event_loop().run_until_complete(
        evaluate_live(
            dataset, retriever, specs, Policy(), options, name=name, context=context, ownership=ownership
        )
    )
    if settings.report:
        result.write_json(settings.report)
    if settings.history:
        from ragaudit.artifacts.history import record

        record(result.to_dict(), None if settings.history == "auto" else settings.history)
    state.results[settings] = result
    return result


def _audit(state: _Session, settings: Settings) -> TenantAudit:
    """The full tenant audit (``ragaudit audit-tenants`` with its defaults) of the configured source:
    probes made from every tenant's documents, asked as every other tenant, at several ``top_k`` values
    and concurrency levels, plus hostile tenant ids; each returned chunk's owner is read in the corpus."""
    from ragaudit.corpus.loading import load_corpus
    from ragaudit.security.ownership import OwnershipIndex
    from ragaudit.security.probes import generate_probes
    from ragaudit.security.tenant_audit import AuditOptions, audit_tenants

    if settings in state.audits:
        return state.audits[settings]
    if not settings.corpus:
        _usage(
            "the tenant audit needs the corpus the retriever serves (its owners decide what is a leak); "
            "set ragaudit_corpus"
        )
    source = _opened(state, settings)
    if settings.corpus not in state.corpora:
        state.corpora[settings.corpus] = load_corpus(settings.corpus)
    documents = state.corpora[settings.corpus].documents
    ownership = OwnershipIndex.build(documents, source.chunks)
    probes = generate_probes(documents)
    context = {
        "source": {"label": source.label, **source.context},
        "corpus": state.corpora[settings.corpus].info(),
    }
    audit = state.event_loop().run_until_complete(
        audit_tenants(source.retriever, ownership, probes, AuditOptions(progress=False), context=context)
    )
    if settings.audit_report:
        audit.write_json(settings.audit_report)
    state.audits[settings] = audit
    return audit


def _fixture_errors(build: Any) -> Any:
    """Run ``build``; a ragaudit input error becomes a short setup failure instead of a traceback."""
    from ragaudit.errors import RagauditError, ValidationError

    try:
        return build()
    except ValidationError as exc:
        _usage("; ".join(str(p) for p in exc.problems[:5]))
    except RagauditError as exc:
        _usage(str(exc))


@pytest.fixture
def ragaudit_settings(request: pytest.FixtureRequest) -> Settings:
    """The configuration this test's ragaudit fixtures use."""
    return resolve_settings(request)


@pytest.fixture
def golden_dataset(request: pytest.FixtureRequest, ragaudit_settings: Settings) -> Dataset:
    """The configured golden dataset (loaded once per session)."""
    state = _session(request.config)
    result: Dataset = _fixture_errors(lambda: _load_dataset(state, ragaudit_settings))
    return result


@pytest.fixture
def retriever(request: pytest.FixtureRequest, ragaudit_settings: Settings) -> Retriever:
    """The configured retriever: a built-in pipeline over the corpus, or your ``module:factory``."""
    state = _session(request.config)
    result: Retriever = _fixture_errors(lambda: _retriever(state, ragaudit_settings))
    return result


@pytest.fixture
def eval_result(request: pytest.FixtureRequest, ragaudit_settings: Settings) -> EvalResult:
    """Every golden case run through the retriever and scored (once per session and configuration)."""
    state = _session(request.config)
    result: EvalResult = _fixture_errors(lambda: _evaluate(state, ragaudit_settings))
    return result


@pytest.fixture
def tenant_audit(request: pytest.FixtureRequest, ragaudit_settings: Settings) -> TenantAudit:
    """The full tenant audit of the retriever over the corpus (once per session and configuration)."""
    state = _session(request.config)
    result: TenantAudit = _fixture_errors(lambda: _audit(state, ragaudit_settings))
    return result


def assert_tenant_audit_clean(audit: TenantAudit, *, max_error_rate: float = 0.0) -> None:
    """Fail unless the audit's verdict is ``clean``: no foreign chunk served to any tenant, and every
    request answered (within ``max_error_rate``); the message is the audit's own summary."""
    verdict = audit.verdict(max_error_rate)
    if verdict != "clean":
        from ragaudit.report.terminal import render_terminal

        summary = render_terminal(audit.to_dict(max_error_rate))
        raise AssertionError(f"tenant audit: {verdict}\n{summary}")


def _metric_values(
    result: EvalResult | Mapping[str, Any], metric: str
) -> tuple[float | None, dict[str, float]]:
    from ragaudit.evaluation.result import EvalResult

    if isinstance(result, EvalResult):
        return result.metrics.get(metric), result.per_case_values(metric)
    from ragaudit.evaluation.compare import LoadedReport

    value = result.get("metrics", {}).get(metric)
    return value, LoadedReport("report", "<report>", result).per_case(metric)


def _floor_message(result: EvalResult | Mapping[str, Any], metric: str, floor: float) -> str | None:
    from ragaudit.gates.checks import floor_failure
    from ragaudit.metrics.names import parse_metric

    name = parse_metric(metric).name
    value, per_case = _metric_values(result, name)
    if value is None and not per_case:
        return f"{name} was not computed; add it to ragaudit_metrics"
    return floor_failure(name, value, floor, per_case)


def _report_floor_messages(report: Mapping[str, Any], floors: Mapping[str, float]) -> list[str]:
    """The quality gate's findings on a report dict with these floors: each missed floor, a mean that is
    not its cases' mean, case records that do not account for the run (a report edited by hand).
    IN-SAMPLE is told by :func:`_in_sample`, so the gate sees the report without that section."""
    from ragaudit.evaluation.compare import LoadedReport
    from ragaudit.gates.checks import quality_gate
    from ragaudit.gates.policy import GatePolicy
    from ragaudit.metrics.names import parse_metric

    data = {key: value for key, value in report.items() if key != "in_sample"}
    policy = GatePolicy(floors={parse_metric(m).name: float(f) for m, f in floors.items()})
    return list(quality_gate(LoadedReport("report", "<report>", data), policy).findings)


def _run_failed(result: EvalResult | Mapping[str, Any], max_error_rate: float) -> list[str]:
    """Why the run behind ``result`` failed (the rule of ``ragaudit eval``'s exit code,
    :mod:`ragaudit.evaluation.outcome`): failed cases (errors, and cases with no result) above
    ``max_error_rate``, nothing scored, or no case shared with the dataset. Empty when it did not."""
    from ragaudit.evaluation.outcome import report_outcome, result_outcome
    from ragaudit.evaluation.result import EvalResult
    from ragaudit.gates.checks import WORST

    outcome = (
        result_outcome(result, "eval_result", "pipeline")
        if isinstance(result, EvalResult)
        else report_outcome(result, "report", "report")
    )
    problems = outcome.problems(max_error_rate, "max_error_rate")
    if problems and outcome.failures:
        shown = "; ".join(f"{cid}: {reason}" for cid, reason in outcome.failures[:WORST])
        problems.append(f"first failures: {shown} (a floor met by a run whose cases failed is not earned)")
    return problems


def assert_floor(
    result: EvalResult | Mapping[str, Any], metric: str, floor: float, *, max_error_rate: float = 0.0
) -> None:
    """Fail with ``"nDCG@10 0.61 < floor 0.70; worst queries: ..."`` when the mean misses ``floor``, and
    when the run failed: more failed cases than ``max_error_rate`` tolerates (default 0), or nothing
    scored (as ``ragaudit eval`` exits 1 then)."""
    __tracebackhide__ = True
    assert_floors(result, {metric: floor}, max_error_rate=max_error_rate)


def assert_floors(
    result: EvalResult | Mapping[str, Any], floors: Mapping[str, float], *, max_error_rate: float = 0.0
) -> None:
    """Check several floors at once; the failure lists every metric that missed its floor, and why the
    run failed when it did (:func:`assert_floor`)."""
    __tracebackhide__ = True
    if isinstance(result, Mapping):  # a report's floors are checked as 'ragaudit gate' checks them
        messages = _report_floor_messages(result, floors)
    else:
        messages = [m for metric, floor in floors.items() if (m := _floor_message(result, metric, floor))]
    messages += _run_failed(result, max_error_rate)
    messages += _in_sample(result)
    if messages:
        raise AssertionError("\n".join(messages))


def _in_sample(result: EvalResult | Mapping[str, Any]) -> list[str]:
    """Why floors met by an IN-SAMPLE result are not earned (a fitted stage scored on the cases it was
    fitted on; ``ragaudit gate`` calls its quality gate NOT VERIFIED then), or nothing."""
    from ragaudit.artifacts.in_sample import in_sample_line, is_in_sample
    from ragaudit.evaluation.result import EvalResult

    report = result.context if isinstance(result, EvalResult) else result
    if not is_in_sample(report):
        return []
    return [
        f"{in_sample_line(report) or 'IN-SAMPLE'} (a floor met on the cases a stage was fitted on is not earned)"
    ]


def assert_no_leaks(
    result: EvalResult | Mapping[str, Any], *, allow_unverified: bool = False, max_error_rate: float = 0.0
) -> None:
    """Fail when any retrieved chunk belonged to another tenant than the one that asked, when the run
    failed (more failed cases than ``max_error_rate`` tolerates, or nothing scored: a service that did
    not answer showed no leak because it showed nothing; ``allow_unverified`` does not waive that), and
    when some returned chunk's owner could not be established from the corpus (e.g. no corpus was
    given: a response's ``tenant_id`` is a claim) unless ``allow_unverified``: no leak found is not no leak.

    Passing says "no leak seen on these own-tenant queries", not that tenants are isolated: that takes
    the cross-tenant audit (the ``tenant_audit`` fixture, :func:`assert_tenant_audit_clean`)."""
    __tracebackhide__ = True
    from ragaudit.evaluation.result import EvalResult
    from ragaudit.gates.checks import WORST, describe_leak
    from ragaudit.runner.tenancy import every_chunk_checked
    from ragaudit.verdict import isolation_of

    leaks = (
        result.leaks() if isinstance(result, EvalResult) else result.get("security", {}).get("records", [])
    )
    if not isinstance(result, EvalResult):
        from ragaudit.evaluation.integrity import leak_inconsistency

        if hidden := leak_inconsistency(result):  # a report edited by hand: its leak count is no evidence
            raise AssertionError(f"leaks NOT COUNTED: {hidden}")
    if leaks:
        shown = "; ".join(describe_leak(leak) for leak in leaks[:WORST])
        raise AssertionError(f"CRITICAL LEAK: {len(leaks)} cross-tenant chunk(s) returned: {shown}")
    if failed := _run_failed(result, max_error_rate):
        raise AssertionError("leaks NOT CHECKED: the run failed: " + "\n".join(failed))
    verdict = result.tenant_isolation() if isinstance(result, EvalResult) else isolation_of(result)
    if not allow_unverified and (verdict is None or not every_chunk_checked(verdict)):
        why = verdict.reason if verdict is not None else "the report has no security section"
        raise AssertionError(
            f"tenant isolation NOT VERIFIED: {why} (pass allow_unverified=True to accept that)"
        )


def assert_no_errors(result: EvalResult) -> None:
    """Fail when any golden case got no answer (an exception or a timeout)."""
    __tracebackhide__ = True
    from ragaudit.gates.checks import WORST

    if result.errors:
        shown = "; ".join(f"{c.id}: {c.error}" for c in result.errors[:WORST])
        raise AssertionError(f"{len(result.errors)} of {result.counts.cases} case(s) failed: {shown}")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ragaudit", "ragaudit retrieval evaluation")
    for key, help_text in OPTIONS.items():
        if key == "tenant_aliases":
            parser.addini(f"ragaudit_{key}", help_text, type="linelist")
        else:
            parser.addini(f"ragaudit_{key}", help_text, type="string")
        group.addoption(
            f"--ragaudit-{key.replace('_', '-')}", dest=f"ragaudit_{key}", default=None, help=help_text
        )


def pytest_configure(config: pytest.Config) -> None:
    for line in MARKERS:
        config.addinivalue_line("markers", line)


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(_SESSION, None)
    if state is not None:
        state.close()


def _claimed_by_other_plugin(item: pytest.Function) -> bool:
    manager = item.config.pluginmanager
    if item.get_closest_marker("anyio") and manager.has_plugin("anyio"):
        return True
    if manager.has_plugin("asyncio"):  # pytest-asyncio: marked tests, or every test in auto mode
        try:
            auto = item.config.getini("asyncio_mode") == "auto"
        except ValueError:
            auto = False
        return auto or item.get_closest_marker("asyncio") is not None
    return False


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Run ``async def`` tests on the session's event loop (no pytest-asyncio needed)."""
    function = pyfuncitem.obj
    if not inspect.iscoroutinefunction(function) or _claimed_by_other_plugin(pyfuncitem):
        return None
    arguments = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    _session(pyfuncitem.config).event_loop().run_until_complete(function(**arguments))
    return True
