"""The fast files-to-averages path gives ``ragaudit.evaluate``'s numbers, to 1e-12, on awkward files."""

from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np
import pytest

from ragaudit.data import fast_qrels, fast_run
from ragaudit.data.fast_numbers import parse_scores
from ragaudit.data.fast_text import TextBlock, token_words, tokenize
from ragaudit.data.loading import qrels_dataset
from ragaudit.errors import InputError, ValidationError
from ragaudit.evaluation.evaluate import evaluate
from ragaudit.evaluation.fast_trec import FastResult, _query_blocks, evaluate_trec_files
from ragaudit.evaluation.result import EvalResult
from ragaudit.metrics.policy import Policy

METRICS = "nDCG@10,nDCG,R@5,R@100,P@5,MRR@10,MRR,MAP,MAP@10,Hit@3,RPrec"
PREFIXES = ("q", "Q", "query-", "é", "z")
DOC_PREFIXES = ("d", "D", "doc", "x" * 12, "ü", "d0")
SCORE_FORMATS = ("{:.4f}", "{!r}", "{:.1f}", "{:e}", "{}", "{:.17g}")


def write_collection(folder: Path, seed: int) -> tuple[Path, Path]:
    """Random qrels + run hitting every edge: ties, repeats, missing, grade-0-only and stray queries,
    ids whose string order is not their numeric order, mixed whitespace, CRLF, blank lines, many
    score spellings, shuffled or grouped lines."""
    rng = random.Random(seed)
    qids = [rng.choice(PREFIXES) + str(i) for i in range(rng.randint(1, 25))]
    docs = [rng.choice(DOC_PREFIXES) + str(i) for i in range(50)]
    qrels: list[str] = []
    for q in qids:
        if rng.random() < 0.1:
            continue  # in the run only
        only_zero = rng.random() < 0.15
        for doc in rng.sample(docs, rng.randint(1, 8)):
            grade = 0 if only_zero else rng.choice([0, 0, 1, 2, 3])
            qrels.append(f"{q} 0 {doc} {grade}")
            if rng.random() < 0.05:  # judged twice: the last grade wins
                qrels.append(f"{q} 0 {doc} {rng.randint(0, 3)}")
    if not qrels:
        qrels.append("q0 0 d0 1")
    run: list[str] = []
    for q in [q for q in qids if rng.random() < 0.85] + [f"stray{i}" for i in range(rng.randint(0, 2))]:
        items = []
        for _ in range(rng.randint(0, 25)):
            score = rng.choice(
                [round(rng.random() * 3, 1), rng.random(), float(rng.randint(0, 3)), -rng.random()]
            )
            items.append((rng.choice(docs), rng.choice(SCORE_FORMATS).format(score)))
        if rng.random() < 0.7:
            items.sort(key=lambda item: -float(item[1]))
        for rank, (doc, score) in enumerate(items, start=1):
            sep = rng.choice(["\t", "  "]) if rng.random() < 0.05 else " "
            run.append(sep.join([q, "Q0", doc, str(rank), score, "tag"]))
    if rng.random() < 0.2:
        rng.shuffle(run)
    if run and rng.random() < 0.1:
        run.insert(len(run) // 2, "   ")
    end = "\r\n" if rng.random() < 0.1 else "\n"
    qrels_path, run_path = folder / f"{seed}.qrels", folder / f"{seed}.run"
    qrels_path.write_text("".join(line + "\n" for line in qrels), encoding="utf-8")
    run_path.write_text("".join(line + end for line in run), encoding="utf-8")
    return qrels_path, run_path


def assert_same(fast: FastResult, ref: EvalResult) -> None:
    scored = [c for c in ref.per_case if c.status != "unanswerable"]
    assert fast.query_ids == tuple(c.id for c in scored)
    for name, value in ref.metrics.items():
        if math.isnan(value):
            assert math.isnan(fast.metrics[name])
            continue
        assert fast.metrics[name] == pytest.approx(value, abs=1e-12, rel=0)
        expected = np.array([c.metrics[name] for c in scored])
        np.testing.assert_allclose(fast.per_query[name], expected, rtol=0, atol=1e-12)
    counts = ref.counts
    assert (fast.counts.answerable, fast.counts.unanswerable, fast.counts.missing) == (
        counts.answerable,
        counts.unanswerable,
        counts.missing,
    )
    assert fast.counts.not_in_qrels == counts.not_in_dataset
    assert fast.counts.duplicates == sum(c.duplicates for c in scored)
    assert fast.answered.tolist() == [c.answered for c in scored]


def reference(qrels: Path, run: Path, policy: Policy, metrics: str = METRICS) -> EvalResult:
    return evaluate(qrels_dataset(qrels), str(run), metrics, policy)


@pytest.mark.parametrize("seed", range(40))
def test_random_files_score_exactly_like_evaluate(tmp_path: Path, seed: int) -> None:
    qrels, run = write_collection(tmp_path, seed)
    policy = Policy(gain=("exponential", "linear")[seed % 2], relevance_threshold=1 + (seed % 5 == 4))
    block = (64, 300, 1 << 20)[seed % 3]  # small blocks: queries and lines cross block edges
    fast = evaluate_trec_files(qrels, run, METRICS, policy, block_bytes=block, workers=1 + seed % 2)
    assert fast.mode in ("stream", "memory")
    assert_same(fast, reference(qrels, run, policy))


@pytest.mark.parametrize("seed", [3, 11])
def test_the_eval_result_form_matches_evaluate_case_by_case(tmp_path: Path, seed: int) -> None:
    qrels, run = write_collection(tmp_path, seed)
    ref = reference(qrels, run, Policy())
    result = evaluate_trec_files(qrels, run, METRICS).to_eval_result()
    assert result.counts == ref.counts
    assert [(c.id, c.status, c.answered, c.tenant_id) for c in result.per_case] == [
        (c.id, c.status, c.answered, c.tenant_id) for c in ref.per_case
    ]
    for mine, theirs in zip(result.per_case, ref.per_case, strict=True):
        assert mine.metrics == pytest.approx(theirs.metrics, abs=1e-12, rel=0)
    assert result.dataset["sha256"] == ref.dataset["sha256"]
    assert result.to_dict()["metrics"] == pytest.approx(ref.metrics, abs=1e-12, rel=0)


def test_a_run_not_grouped_by_query_is_detected_and_read_whole(tmp_path: Path) -> None:
    qrels = tmp_path / "q.qrels"
    qrels.write_text("a 0 d1 1\nb 0 d2 2\n", encoding="utf-8")
    run = tmp_path / "r.run"
    lines = [f"{q} Q0 d{i} {i} {1 / i} t" for i in range(1, 40) for q in ("a", "b")]
    run.write_text("\n".join(lines) + "\n", encoding="utf-8")
    fast = evaluate_trec_files(qrels, run, METRICS, block_bytes=100)
    assert fast.mode == "memory"
    assert any("not grouped" in note for note in fast.notes)
    assert_same(fast, reference(qrels, run, Policy()))


def test_grouped_runs_stream_in_blocks(tmp_path: Path) -> None:
    qrels = tmp_path / "q.qrels"
    qrels.write_text("".join(f"q{i} 0 d{i} {1 + i % 3}\n" for i in range(300)), encoding="utf-8")
    run = tmp_path / "r.run"
    run.write_text(
        "".join(f"q{i} Q0 d{j} {j} {10 - j % 4} t\n" for i in range(300) for j in range(i % 7 + 1)),
        encoding="utf-8",
    )
    fast = evaluate_trec_files(qrels, run, METRICS, block_bytes=512)
    assert fast.mode == "stream"
    assert_same(fast, reference(qrels, run, Policy()))


def test_ties_follow_python_string_order_of_doc_ids(tmp_path: Path) -> None:
    ids = [
        "d9",
        "d10",
        "d1",
        "D1",
        "é",
        "z",
        "e",
        "ab",
        "abc",
        "ab~",
        "ü1",
        "\u4e2d",
        "x" * 17,
        "x" * 16 + "y",
    ]
    qrels = tmp_path / "q.qrels"
    qrels.write_text("".join(f"q 0 {doc} {1 + i % 3}\n" for i, doc in enumerate(ids[::3])), encoding="utf-8")
    run = tmp_path / "r.run"
    run.write_text("".join(f"q Q0 {doc} 1 1.0 t\n" for doc in ids), encoding="utf-8")
    for gain in ("exponential", "linear"):
        fast = evaluate_trec_files(qrels, run, METRICS, Policy(gain=gain))
        assert fast.mode == "stream"
        assert_same(fast, reference(qrels, run, Policy(gain=gain)))


def test_repeated_doc_ids_keep_their_slot_and_count_once(tmp_path: Path) -> None:
    qrels = tmp_path / "q.qrels"
    qrels.write_text("q 0 x 1\nq 0 b 1\n", encoding="utf-8")
    run = tmp_path / "r.run"
    run.write_text("q Q0 x 1 3 t\nq Q0 x 2 2 t\nq Q0 b 3 1 t\nq Q0 x 4 0.5 t\n", encoding="utf-8")
    fast = evaluate_trec_files(qrels, run, "MRR,R@2,nDCG@3")
    assert fast.counts.duplicates == 2
    assert fast.metrics["R@2"] == 0.5  # the copy of x at rank 2 gains nothing
    assert_same(fast, reference(qrels, run, Policy(), "MRR,R@2,nDCG@3"))


def test_grade_zero_only_missing_and_stray_queries_are_counted(tmp_path: Path) -> None:
    qrels = tmp_path / "q.qrels"
    qrels.write_text("a 0 d1 1\nzero 0 d1 0\nmissing 0 d2 3\n", encoding="utf-8")
    run = tmp_path / "r.run"
    run.write_text("a Q0 d1 1 1 t\nzero Q0 d1 1 1 t\nstray Q0 d1 1 1 t\n", encoding="utf-8")
    fast = evaluate_trec_files(qrels, run, "R@1")
    assert fast.query_ids == ("a", "missing")
    assert fast.per_query_values("R@1") == {"a": 1.0, "missing": 0.0}
    counts = fast.counts
    assert (counts.queries, counts.answerable, counts.unanswerable, counts.missing, counts.not_in_qrels) == (
        3,
        2,
        1,
        1,
        1,
    )
    assert any("stray" in note for note in fast.notes)


def test_an_empty_run_scores_every_answerable_query_zero(tmp_path: Path) -> None:
    qrels = tmp_path / "q.qrels"
    qrels.write_text("a 0 d1 1\nb 0 d2 2\n", encoding="utf-8")
    run = tmp_path / "r.run"
    run.write_text("", encoding="utf-8")
    fast = evaluate_trec_files(qrels, run, METRICS)
    assert fast.counts.missing == 2 and set(fast.metrics.values()) == {0.0}
    assert_same(fast, reference(qrels, run, Policy()))


@pytest.mark.parametrize(
    ("qrels_text", "note"),
    [
        ("query-id\tcorpus-id\tscore\na\td1\t1\nb\td2\t0\n", "BEIR header"),
        ("a d1 1\nb d2 2\n", "three columns"),
        ("a 0 d1 1.0\nb 0 d2 2\n", "a grade written 1.0 (validated reader)"),
        ("\ufeffa 0 d1 1\r\nb 0 d2 2\r\n", "byte-order mark and CRLF"),
    ],
)
def test_qrels_variants(tmp_path: Path, qrels_text: str, note: str) -> None:
    qrels = tmp_path / "q.qrels"
    qrels.write_text(qrels_text, encoding="utf-8")
    run = tmp_path / "r.run"
    run.write_text("\ufeffa Q0 d1 1 1 t\na Q0 d3 2 0.5 t\nb Q0 d2 1 2 t\n", encoding="utf-8")
    assert_same(evaluate_trec_files(qrels, run, METRICS), reference(qrels, run, Policy()))


@pytest.mark.parametrize(
    "odd_line",
    [
        "a\u00a0Q0 d4 1 1 t",  # no-break space: str.split() splits there, a byte split does not
        "a Q0\x1fd4 1 1 t",  # unit separator: whitespace to Python
        "a Q0 d\x01x 1 1 t",  # a control byte inside an id
        "a Q0 d4 1 1_0 t",  # float() reads 10 from "1_0"
    ],
)
def test_input_only_the_validated_reader_can_decide_is_scored_by_it(tmp_path: Path, odd_line: str) -> None:
    qrels = tmp_path / "q.qrels"
    qrels.write_text("a 0 d1 1\na 0 d4 2\n", encoding="utf-8")
    run = tmp_path / "r.run"
    run.write_text(f"a Q0 d1 1 2 t\n{odd_line}\n", encoding="utf-8")
    fast = evaluate_trec_files(qrels, run, METRICS)
    assert_same(fast, reference(qrels, run, Policy()))


def test_bad_run_lines_are_reported_with_file_and_line(tmp_path: Path) -> None:
    qrels = tmp_path / "q.qrels"
    qrels.write_text("a 0 d1 1\n", encoding="utf-8")
    run = tmp_path / "r.run"
    good = "".join(f"a{i} Q0 d1 1 1 t\n" for i in range(200))
    run.write_text(good + "a Q0 d1 1 t\n" + good + "b Q0 d2 1 nan t\n", encoding="utf-8")
    with pytest.raises(ValidationError) as error:
        evaluate_trec_files(qrels, run, METRICS, block_bytes=256)
    assert f"{run}:201: expected 6 columns" in str(error.value)
    run.write_text(good + "a Q0 d1 1 high t\n", encoding="utf-8")
    with pytest.raises(ValidationError, match=r":201: score 'high' is not a number"):
        evaluate_trec_files(qrels, run, METRICS)


def test_bad_qrels_and_missing_files_are_input_errors(tmp_path: Path) -> None:
    qrels = tmp_path / "q.qrels"
    qrels.write_text("a 0 d1 1\na 0 d2 x\n", encoding="utf-8")
    run = tmp_path / "r.run"
    run.write_text("a Q0 d1 1 1 t\n", encoding="utf-8")
    with pytest.raises(ValidationError, match=r"q.qrels:2: grade 'x' is not an integer"):
        evaluate_trec_files(qrels, run)
    with pytest.raises(InputError, match="run file not found"):
        evaluate_trec_files(qrels, tmp_path / "nope.run")
    with pytest.raises(InputError, match="file not found"):
        evaluate_trec_files(tmp_path / "nope.qrels", run)


def test_the_qrels_errors_come_before_the_run_errors(tmp_path: Path) -> None:
    """The qrels are read before any block of the run: with a bad line in both, the qrels' line is
    the error reported."""
    qrels = tmp_path / "q.qrels"
    qrels.write_text("a 0 d1 1\na 0 d2 x\n", encoding="utf-8")
    run = tmp_path / "r.run"
    good = "".join(f"a{i} Q0 d1 1 1 t\n" for i in range(2000))
    run.write_text("a Q0 d1 1 t\n" + good, encoding="utf-8")
    with pytest.raises(ValidationError, match=r"q.qrels:2: grade 'x' is not an integer"):
        evaluate_trec_files(qrels, run, METRICS, block_bytes=256)


def test_hash_collisions_cost_time_never_correctness(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With a hash that maps most ids alike, every decision falls to the id words."""

    def weak(words: np.ndarray) -> np.ndarray:  # type: ignore[type-arg]
        return (words[:, 0] & np.uint64(3)) << np.uint64(62)

    monkeypatch.setattr(fast_run, "hash_rows", weak)
    monkeypatch.setattr(fast_qrels, "hash_rows", weak)
    qrels = tmp_path / "q.qrels"
    qrels.write_text(
        "".join(f"q{i} 0 d{j} {(i + j) % 4}\n" for i in range(20) for j in range(12)), encoding="utf-8"
    )
    run = tmp_path / "r.run"
    lines = [f"q{i} Q0 d{j % 15} {j} {j % 4} t" for i in range(20) for j in range(30)]
    run.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    fast = evaluate_trec_files(qrels, run, METRICS)
    assert fast.mode == "stream" and fast.counts.duplicates > 0
    assert_same(fast, reference(qrels, run, Policy()))
    qrels, run = write_collection(tmp_path, 7)
    assert_same(evaluate_trec_files(qrels, run, METRICS), reference(qrels, run, Policy()))


def test_scores_parse_exactly_like_float() -> None:
    rng = random.Random(3)
    texts = []
    for _ in range(3000):
        value = rng.random() * 10 ** rng.randint(-12, 12) * rng.choice([1, -1])
        spelling = rng.choice(
            ["{!r}", "{:.17g}", "{:.6f}", "{:.20f}", "{:e}", "{:.3E}", "{:+.2f}", "{:.0f}."]
        )
        texts.append(spelling.format(value))
    texts += [
        "0",
        "-0",
        "007",
        ".5",
        "5.",
        "-.25",
        "123456789012345",
        "1234567890123456",
        "1e308",
        "4.9e-324",
    ]
    line = "".join(f"{t}\n" for t in texts).encode()
    block = TextBlock.of(line)
    start, length = tokenize(block, (1,)).column(0)
    parsed = parse_scores(token_words(block, start, length), length)
    expected = np.array([float(t) for t in texts]) + 0.0
    assert parsed.tobytes() == expected.tobytes()


@pytest.mark.parametrize("block_bytes", [7, 40, 64, 1000])
def test_run_blocks_are_whole_queries_read_in_place(tmp_path: Path, block_bytes: int) -> None:
    """``_query_blocks`` reads each block into the buffer its array views: the blocks hold the file
    (a BOM dropped, a newline added at the end), each ends on a line break between two query ids,
    and the padding after each block is zero."""
    lines = [f"q{q} Q0 d{d} {d} 1.{d} t" for q in (1, 22, 3) for d in range(q + 2)]
    run = tmp_path / "r.run"
    run.write_bytes(b"\xef\xbb\xbf" + "\n".join(lines).encode())
    blocks = list(_query_blocks(str(run), block_bytes))
    assert b"".join(b.text() for b in blocks) == ("\n".join(lines) + "\n").encode()
    offsets = [b.offset for b in blocks]
    assert offsets == [3 + sum(b.size for b in blocks[:i]) for i in range(len(blocks))]
    for block in blocks:
        assert block.data[block.size - 1] == 0x0A and not block.data[block.size :].any()
        ids = {line.split()[0] for line in block.text().decode().splitlines()}
        assert all(
            not (ids & {line.split()[0] for line in other.text().decode().splitlines()})
            for other in blocks
            if other is not block
        )
