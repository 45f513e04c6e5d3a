"""Hostile input: every loader, fed generated files, loads or raises an error naming file:line and a fix.

Lines are drawn from plausible records (the format's own keys with values of any JSON type), raw
garbage, NaN / Infinity / 1e999, deep nesting, invalid UTF-8, NUL bytes, over-long lines (the limit is
lowered for the test), duplicated lines; files get a UTF-8 BOM or CRLF line ends at random. A loader
may accept the file or raise :class:`InputError` (``ValidationError``); any other exception, a
problem without a fix, or a line number outside the file fails the test.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ragaudit.data.lines as lines_module
from ragaudit.cli.main import main
from ragaudit.corpus.loading import load_corpus
from ragaudit.data.beir import import_beir, load_beir
from ragaudit.data.golden_jsonl import load_golden_jsonl
from ragaudit.data.loading import load_dataset, load_run
from ragaudit.data.run_jsonl import load_jsonl_run
from ragaudit.data.trec import load_qrels, load_trec_run
from ragaudit.errors import InputError, PermanentRetrievalError, Problem, ValidationError
from ragaudit.pipelines.config import load_pipeline_file, parse_pipeline
from ragaudit.retrieval.http import ResponseShape
from ragaudit.security.canaries import load_canaries

SMALL_LIMIT = 4096
"""Line-length limit while fuzzing, so "huge line" examples stay small."""
FUZZ = settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
)

scalars = st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.floats() | st.text(max_size=12)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
SPECIAL_LINES = [
    b"NaN",
    b'{"id": "x", "score": NaN}',
    b'{"id": "x", "score": Infinity}',
    b'{"id": "x", "query": "q", "relevance": {"d": 1e999}}',
    b"[" * 3000 + b"]" * 3000,
    b"[" * 1500 + b"]" * 1500,
    b'{"a": ' * 3000 + b"1" + b"}" * 3000,
    b"\xff\xfe\xfa not utf-8",
    b'{"id": "caf\xe9"}',
    b"\x00\x00\x00",
    b"x" * (SMALL_LIMIT + 10),
    b'{"id": "' + b"y" * (SMALL_LIMIT * 2) + b'"}',
    "\ufeff".encode() + b'{"id": "bom-in-the-middle"}',
    b"q1 Q0 d1 1 nan run",
    b"q1 Q0 d1 1 inf run",
    b"q1 0 d1 1e400",
    b"q1 0 d1",
    b"   ",
    b"9" * 5000,
]


def records(keys: list[str]) -> st.SearchStrategy[bytes]:
    """One JSON line with the format's keys (each optional) and values of any type."""
    return st.fixed_dictionaries({}, optional=dict.fromkeys(keys, json_values)).map(
        lambda d: json.dumps(d, allow_nan=True).encode()
    )


def files(line: st.SearchStrategy[bytes]) -> st.SearchStrategy[bytes]:
    """A whole file: some lines, repeated lines, BOM and CRLF at random."""
    any_line = line | st.sampled_from(SPECIAL_LINES) | st.binary(max_size=40)

    def build(parts: list[bytes], repeat: bool, bom: bool, crlf: bool) -> bytes:
        body = parts + parts[:1] if repeat else parts
        sep = b"\r\n" if crlf else b"\n"
        return (b"\xef\xbb\xbf" if bom else b"") + sep.join(p.replace(b"\n", b" ") for p in body) + sep

    return st.builds(build, st.lists(any_line, max_size=6), st.booleans(), st.booleans(), st.booleans())


@contextmanager
def small_line_limit() -> Iterator[None]:
    saved = lines_module.MAX_LINE_BYTES
    lines_module.MAX_LINE_BYTES = SMALL_LIMIT
    try:
        yield
    finally:
        lines_module.MAX_LINE_BYTES = saved


def raised(call: Callable[[], Any], kind: type[Exception]) -> Exception | None:
    """The ``kind`` exception ``call()`` raised, or ``None`` (anything else propagates: a test failure)."""
    try:
        call()
    except kind as exc:
        return exc
    return None


def problems_of(exc: Exception | None) -> list[Problem]:
    assert isinstance(exc, InputError)
    return exc.problems if isinstance(exc, ValidationError) else [exc.problem]


def assert_loads_or_explains(load: Callable[[Path], Any], path: Path, data: bytes | None = None) -> None:
    """``load(path)`` succeeds, or fails with problems that name the file (and a line in it) and a fix."""
    if data is not None:
        path.write_bytes(data)
    line_count = data.count(b"\n") + 1 if data is not None else 10**9
    with small_line_limit():
        try:
            load(path)
        except InputError as exc:
            for problem in problems_of(exc):
                assert problem.fix, problem
                assert str(path.parent) in problem.path or problem.path.startswith("["), problem
                assert problem.line is None or 1 <= problem.line <= line_count, problem
                assert "Traceback" not in str(problem)


GOLDEN_KEYS = ["id", "query", "tenant_id", "relevant_chunk_ids", "relevance", "evidence", "answer", "tags"]
RUN_KEYS = ["id", "retrieved", "results", "error", "latency_ms", "attempts", "tenant_id", "leaks"]
CORPUS_KEYS = ["doc_id", "tenant_id", "title", "text", "metadata"]


@contextmanager
def scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as tmp:
        yield Path(tmp)


@FUZZ
@given(files(records(GOLDEN_KEYS)))
def test_golden_jsonl(data: bytes) -> None:
    with scratch() as tmp:
        assert_loads_or_explains(load_golden_jsonl, tmp / "golden.jsonl", data)
        assert_loads_or_explains(load_dataset, tmp / "golden.jsonl")


@FUZZ
@given(files(records(RUN_KEYS)), files(st.sampled_from([b"q1 Q0 d1 1 0.5 sys", b"q1 Q0 d1 1 0.5"])))
def test_runs_jsonl_and_trec(jsonl: bytes, trec: bytes) -> None:
    with scratch() as tmp:
        assert_loads_or_explains(load_jsonl_run, tmp / "run.jsonl", jsonl)
        assert_loads_or_explains(load_run, tmp / "run.jsonl")
        assert_loads_or_explains(load_trec_run, tmp / "run.trec", trec)
        assert_loads_or_explains(load_run, tmp / "run.trec")


@FUZZ
@given(files(st.sampled_from([b"q1 0 d1 2", b"q1\td1\t1", b"query-id\tcorpus-id\tscore", b"q2 0 d2 3"])))
def test_trec_qrels(data: bytes) -> None:
    with scratch() as tmp:
        assert_loads_or_explains(load_qrels, tmp / "qrels", data)
        assert_loads_or_explains(load_dataset, tmp / "qrels")


@FUZZ
@given(
    files(records(["_id", "text", "title", "metadata"])),
    files(records(["_id", "text"])),
    files(st.sampled_from([b"query-id\tcorpus-id\tscore", b"q1\td1\t1", b"q2\td2\t2"])),
)
def test_beir_folder(corpus: bytes, queries: bytes, qrels: bytes) -> None:
    with scratch() as tmp:
        root = tmp / "beir"
        (root / "qrels").mkdir(parents=True)
        (root / "corpus.jsonl").write_bytes(corpus)
        (root / "queries.jsonl").write_bytes(queries)
        (root / "qrels" / "test.tsv").write_bytes(qrels)
        assert_loads_or_explains(load_beir, root)
        assert_loads_or_explains(lambda p: import_beir(p, tmp / "out"), root)
        assert_loads_or_explains(lambda p: load_corpus(p, "beir"), root)


@FUZZ
@given(files(records(CORPUS_KEYS) | records(["doc_id", "tenant_id", "text"])))
def test_corpus_jsonl(data: bytes) -> None:
    with scratch() as tmp:
        assert_loads_or_explains(load_corpus, tmp / "corpus.jsonl", data)


@FUZZ
@given(files(records(["tenant_id", "doc_id", "secret"])))
def test_canaries(data: bytes) -> None:
    with scratch() as tmp:
        assert_loads_or_explains(load_canaries, tmp / "canaries.jsonl", data)


config_tables = st.fixed_dictionaries(
    {},
    optional={
        "name": json_values,
        "chunking": st.fixed_dictionaries(
            {}, optional={"strategy": json_values, "size": json_values, "overlap": json_values}
        )
        | json_values,
        "retriever": st.fixed_dictionaries(
            {"type": st.sampled_from(["bm25", "dense", "hybrid"]) | json_values},
            optional={
                "k1": json_values,
                "components": json_values,
                "weights": json_values,
                "depth": json_values,
            },
        )
        | json_values,
        "rerank": st.fixed_dictionaries(
            {"type": st.sampled_from(["bi-encoder", "llm"]) | json_values}, optional={"top_n": json_values}
        ),
        "rewrite": st.fixed_dictionaries(
            {"type": st.sampled_from(["synonyms", "rm3"]) | json_values},
            optional={"mapping": json_values, "fb_docs": json_values},
        ),
        "extra": json_values,
    },
)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value if v is not None) + "]"
    if isinstance(value, dict):
        return (
            "{"
            + ", ".join(f"{json.dumps(k)} = {_toml_value(v)}" for k, v in value.items() if v is not None)
            + "}"
        )
    return '""'


def to_toml(raw: dict[str, Any]) -> bytes:
    """A rough TOML rendering: tables become inline tables; may be invalid TOML, which is fine."""
    return "\n".join(f"{json.dumps(k)} = {_toml_value(v)}" for k, v in raw.items() if v is not None).encode()


@FUZZ
@given(config_tables, st.booleans(), st.booleans(), st.binary(max_size=20))
def test_pipeline_configs(raw: dict[str, Any], bom: bool, crlf: bool, noise: bytes) -> None:
    error = raised(lambda: parse_pipeline(raw, "fuzz.toml"), InputError)
    assert error is None or all(p.fix for p in problems_of(error))
    text = to_toml(raw)
    text = text.replace(b"\n", b"\r\n") if crlf else text
    with scratch() as tmp:
        assert_loads_or_explains(load_pipeline_file, tmp / "p.toml", (b"\xef\xbb\xbf" if bom else b"") + text)
        assert_loads_or_explains(load_pipeline_file, tmp / "noise.toml", text + noise)


DEEP = (b"[" * 1500 + b"]" * 1500, b'{"a": ' * 3000 + b"1" + b"}" * 3000)
SHALLOW_SPECIALS = [line for line in SPECIAL_LINES if line[:20] not in {d[:20] for d in DEEP}]


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    st.binary(max_size=60)
    | json_values.map(lambda v: json.dumps(v).encode())
    | st.sampled_from(SHALLOW_SPECIALS)
)
def test_endpoint_responses_fail_with_a_typed_error(body: bytes) -> None:
    shape = ResponseShape.build(None, None)
    error = raised(lambda: shape.parse(body), PermanentRetrievalError)
    if error is not None:
        assert str(error)
    else:
        assert all(isinstance(c["chunk_id"], str) and c["chunk_id"] for c in shape.parse(body))


@pytest.mark.parametrize("body", DEEP)
def test_deeply_nested_response_is_a_typed_error(body: bytes) -> None:
    with pytest.raises(PermanentRetrievalError):
        ResponseShape.build(None, None).parse(body)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    st.lists(
        st.fixed_dictionaries(
            {}, optional=dict.fromkeys(("chunk_id", "score", "content", "tenant_id", "metadata"), json_values)
        ),
        max_size=3,
    )
)
def test_endpoint_chunks_of_any_shape(items: list[dict[str, Any]]) -> None:
    shape = ResponseShape.build(None, None)
    body = json.dumps({"results": items}, allow_nan=True).encode()
    error = raised(lambda: shape.parse(body), PermanentRetrievalError)
    if error is not None:
        assert "result #" in str(error) or "not valid JSON" in str(error)
    else:
        assert len(shape.parse(body)) == len(items)


# ------------------------------------------------------------------------------------- fixed cases


def test_each_special_line_is_named_with_its_line(tmp_path: Path) -> None:
    """Every special line, put on line 2 after a valid case, is reported on line 2 (never a traceback)."""
    good = b'{"id": "ok", "query": "q", "relevant_chunk_ids": ["d"]}'
    for number, special in enumerate(SPECIAL_LINES):
        if not special.strip():
            continue
        path = tmp_path / f"g{number}.jsonl"
        path.write_bytes(good + b"\n" + special + b"\n")
        with small_line_limit():
            error = raised(lambda path=path: load_golden_jsonl(path), InputError)
        assert error is not None, f"accepted {special[:40]!r}"
        assert [p.line for p in problems_of(error)] == [2], (special[:40], problems_of(error))


def test_huge_line_is_reported_without_reading_it_whole(tmp_path: Path) -> None:
    path = tmp_path / "huge.jsonl"
    with path.open("wb") as out:
        out.write(b'{"id": "a", "query": "q", "relevant_chunk_ids": ["d"]}\n')
        out.write(b'{"id": "' + b"z" * 3_000_000 + b'"}\n')
        out.write(b'{"id": "b", "query": "q", "relevant_chunk_ids": ["d"]}\n')
    with small_line_limit():
        seen = list(lines_module.iter_lines(path))
    assert [n for n, _ in seen] == [1, 2, 3]
    error = seen[1][1]
    assert isinstance(error, InputError) and "over the 4,096-byte limit" in str(error)
    assert "3,000,011 bytes" in str(error)


def test_bom_and_crlf_are_transparent(tmp_path: Path) -> None:
    case = {"id": "c1", "query": "q", "relevant_chunk_ids": ["d"]}
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(case).encode() + b"\r\n")
    assert load_golden_jsonl(path).cases[0].id == "c1"
    config = tmp_path / "bom.toml"
    config.write_bytes(b'\xef\xbb\xbfname = "x"\r\n[retriever]\r\ntype = "bm25"\r\n')
    assert load_pipeline_file(config).retriever.type == "bm25"


def test_duplicate_ids_are_errors_with_both_lines(tmp_path: Path) -> None:
    golden = tmp_path / "g.jsonl"
    golden.write_text('{"id": "a", "query": "q", "relevant_chunk_ids": []}\n' * 2, encoding="utf-8")
    with pytest.raises(ValidationError, match=r"g\.jsonl:2: duplicate case id 'a' \(first on line 1\)"):
        load_golden_jsonl(golden)
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"doc_id": "d", "tenant_id": "t", "text": "x"}\n' * 2, encoding="utf-8")
    with pytest.raises(ValidationError, match=r"c\.jsonl:2: duplicate doc id 'd'"):
        load_corpus(corpus)
    root = tmp_path / "beir"
    (root / "qrels").mkdir(parents=True)
    (root / "queries.jsonl").write_text(
        '{"_id": "q1", "text": "a"}\n{"_id": "q1", "text": "b"}\n', encoding="utf-8"
    )
    (root / "qrels" / "test.tsv").write_text("q1\td1\t1\n", encoding="utf-8")
    with pytest.raises(
        ValidationError, match=r"queries\.jsonl:2: duplicate query id 'q1' \(first on line 1\)"
    ):
        load_beir(root)


def test_config_parameter_types_are_checked(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text(
        '[retriever]\ntype = "bm25"\nk1 = "high"\n[rerank]\ntype = "bi-encoder"\ntop_n = -3\n',
        encoding="utf-8",
    )
    with pytest.raises(ValidationError) as info:
        load_pipeline_file(path)
    messages = [p.message for p in info.value.problems]
    assert any("k1" in m for m in messages) and any("top_n" in m for m in messages)
    with pytest.raises(ValidationError, match="unknown or missing type"):
        parse_pipeline({"retriever": {"type": ["bm25"]}})


@pytest.mark.parametrize(
    ("argv_tail", "files_"),
    [
        (
            ["--dataset", "{d}/g.jsonl", "--run", "{d}/r.trec"],
            {"g.jsonl": b'{"id": 1, "query": NaN}\n', "r.trec": b"q1 Q0 d 1 1 s\n"},
        ),
        (
            ["--dataset", "{d}/g.jsonl", "--run", "{d}/r.trec"],
            {
                "g.jsonl": b'{"id": "1", "query": "q", "relevant_chunk_ids": ["d"]}\n',
                "r.trec": b"q1 Q0 d 1 nan s\n\xff\n",
            },
        ),
        (
            ["--dataset", "{d}/g.jsonl", "--pipeline", "{d}/p.toml", "--corpus", "{d}/g.jsonl"],
            {
                "g.jsonl": b'{"id": "1", "query": "q", "relevant_chunk_ids": ["d"]}\n',
                "p.toml": b"[retriever\n",
            },
        ),
    ],
)
def test_cli_reports_file_line_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv_tail: list[str], files_: dict[str, bytes]
) -> None:
    for name, data in files_.items():
        (tmp_path / name).write_bytes(data)
    code = main(["eval", *(a.format(d=tmp_path) for a in argv_tail)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err and f"{tmp_path}/" in err and (":1:" in err or ":2:" in err), err


def test_endpoint_faults_become_case_errors() -> None:
    """Malformed bodies from a live service are recorded per case with a reason, never raised."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from ragaudit.data.schema import GoldenCase
    from ragaudit.retrieval.http import HttpRetriever
    from ragaudit.retry import NO_RETRY
    from ragaudit.runner.execute import run_cases
    from servers import LocalServer, Reply, Request

    bodies = {f"q{i}": body for i, body in enumerate(SPECIAL_LINES[:9])}

    def handle(request: Request) -> Reply:
        return Reply(body=bodies[request.json()["query"]])

    cases = [GoldenCase(q, q, ("x",), tenant_id="t") for q in bodies]
    with LocalServer(handle) as server:
        run = asyncio.run(run_cases(HttpRetriever(server.url), cases, 3, retry=NO_RETRY, progress=False))
    assert set(run.cases) == set(bodies)
    assert all(c.error for c in run.cases.values()), {k: c.error for k, c in run.cases.items()}
    assert not any("Traceback" in (c.error or "") for c in run.cases.values())
