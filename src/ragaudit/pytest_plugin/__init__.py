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

The pieces: :mod:`.settings` (configuration), :mod:`.tenant_aliases`, :mod:`.session` (what is built
once), :mod:`.sources` (the system under test), :mod:`.runs` (evaluation and audit, and their reports),
:mod:`.fixtures`, :mod:`.assertions` and :mod:`.hooks`; this module gathers what pytest registers.
"""

from __future__ import annotations

from ragaudit.pytest_plugin.assertions import (
    assert_floor,
    assert_floors,
    assert_no_errors,
    assert_no_leaks,
    assert_tenant_audit_clean,
)
from ragaudit.pytest_plugin.fixtures import (
    eval_result,
    golden_dataset,
    ragaudit_settings,
    retriever,
    tenant_audit,
)
from ragaudit.pytest_plugin.hooks import (
    pytest_addoption,
    pytest_configure,
    pytest_pyfunc_call,
    pytest_unconfigure,
)
from ragaudit.pytest_plugin.settings import (
    DEMO_PREFIX,
    MARKERS,
    OPTIONS,
    PATH_KEYS,
    Settings,
    demo_file,
    resolve_settings,
)
from ragaudit.pytest_plugin.tenant_aliases import TenantAliasRetriever

__all__ = [
    "DEMO_PREFIX",
    "MARKERS",
    "OPTIONS",
    "PATH_KEYS",
    "Settings",
    "TenantAliasRetriever",
    "assert_floor",
    "assert_floors",
    "assert_no_errors",
    "assert_no_leaks",
    "assert_tenant_audit_clean",
    "demo_file",
    "eval_result",
    "golden_dataset",
    "pytest_addoption",
    "pytest_configure",
    "pytest_pyfunc_call",
    "pytest_unconfigure",
    "ragaudit_settings",
    "resolve_settings",
    "retriever",
    "tenant_audit",
]
