"""In-sample is named everywhere (issue 23 item 4): a fitted stage scored on the cases it was fitted on
is marked IN-SAMPLE in the terminal, JSON, Markdown and HTML, kept out of the history, and the quality
gate will not pass a floor on it; ``fit-fusion --holdout`` fits on one part and leaves the other to
score on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import KB
from ragaudit.artifacts.history import query_runs
from ragaudit.artifacts.in_sample import case_fingerprint, fitted_cases, in_sample_section
from ragaudit.artifacts.provenance import sha256_of
from ragaudit.cli.main import main
from ragaudit.data.loading import load_dataset
from ragaudit.experiments.fusion_fit import split_holdout
from ragaudit.retrieval.fusion_features import FEATURES
from ragaudit.retrieval.learned_fusion import FusionModel

GOLDEN = KB / "golden.jsonl"
CORPUS = str(KB / "corpus.jsonl")


def _stage(cases: dict[str, str] | None, sha: str = "a" * 64) -> dict[str, object]:
    fitted: dict[str, object] = {"dataset": {"path": "golden.jsonl", "sha256": sha}}
    if cases is not None:
        fitted["cases"] = cases
    return {"stage": "reranker", "name": "learned fusion (m.json)", "fitted_on": fitted}


def test_the_section_names_full_partial_held_out_and_unknown_overlap() -> None:
    scored = {"q1": case_fingerprint("t", "a"), "q2": case_fingerprint("t", "b")}
    full = in_sample_section([_stage(dict(scored))], "x" * 64, scored)
    assert full is not None and full["state"] == "in_sample" and full["overlap"] == 2
    assert full["text"].startswith("IN-SAMPLE: all 2 answerable cases")
    partial = in_sample_section([_stage({"q1": scored["q1"]})], "x" * 64, scored)
    assert partial is not None and partial["text"].startswith("IN-SAMPLE: 1 of 2 answerable cases")
    # the same id with another query (another golden set reusing ids) is not an overlap
    other = in_sample_section([_stage({"q1": case_fingerprint("t", "zzz")})], "x" * 64, scored)
    assert other is not None and other["state"] == "held_out" and other["text"].startswith("held out")
    # a model that records no ids: in-sample when fitted on this very dataset, else unknown
    same = in_sample_section([_stage(None, "x" * 64)], "x" * 64, scored)
    assert same is not None and same["state"] == "in_sample" and same["overlap"] == 2
    unknown = in_sample_section([_stage(None)], "x" * 64, scored)
    assert unknown is not None and unknown["state"] == "unknown"
    assert in_sample_section([], "x" * 64, scored) is None


def test_holdout_keeps_questions_whole_disjoint_seeded_and_per_tenant() -> None:
    dataset = load_dataset(str(GOLDEN))
    fit, held = split_holdout(dataset, 0.3, seed=0)
    assert {c.id for c in fit.cases}.isdisjoint(c.id for c in held.cases)
    assert len(fit.cases) + len(held.cases) == len(dataset.cases)
    assert {c.tenant_id for c in held.cases} == {c.tenant_id for c in dataset.cases}
    assert 0.2 < len(held.cases) / len(dataset.cases) < 0.4
    asked = {(c.tenant_id, " ".join(c.query.lower().split())) for c in fit.cases}
    assert not any((c.tenant_id, " ".join(c.query.lower().split())) in asked for c in held.cases)
    again = split_holdout(dataset, 0.3, seed=0)[1]
    assert [c.id for c in again.cases] == [c.id for c in held.cases]
    assert [c.id for c in split_holdout(dataset, 0.3, seed=1)[1].cases] != [c.id for c in held.cases]


def _model(path: Path, fitted_ids: set[str]) -> Path:
    """A hand-made fusion model that says it was fitted on ``fitted_ids`` of the demo golden set."""
    dataset = load_dataset(str(GOLDEN))
    cases = fitted_cases(c for c in dataset.cases if c.id in fitted_ids)
    info = {"fitted_on": {"dataset": dataset.info(), "cases": cases}}
    weights = tuple(-1.0 if name == "dense_log_rank" else 0.0 for name in FEATURES)
    FusionModel(weights, (0.0,) * len(FEATURES), (1.0,) * len(FEATURES), candidates=20, info=info).write(path)
    return path


@pytest.mark.slow
def test_eval_on_fitted_cases_is_in_sample_everywhere_out_of_history_and_not_a_gate_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    history = tmp_path / "h.sqlite"
    monkeypatch.setenv("RAGAUDIT_HISTORY", str(history))
    lines = GOLDEN.read_text(encoding="utf-8").splitlines()
    golden = tmp_path / "golden.jsonl"
    golden.write_text("\n".join(lines[:20]) + "\n", encoding="utf-8")
    ids = [json.loads(line)["id"] for line in lines[:20]]
    model = _model(tmp_path / "m.json", set(ids[:10]))
    out = tmp_path / "learned.json"
    argv = ["eval", "--dataset", str(golden), "--corpus", CORPUS, "--pipeline", f"hybrid-rerank:{model}",
            "--metrics", "nDCG@10,R@5", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("IN-SAMPLE: ")
    assert "run not recorded in the history" in printed and not history.exists()
    report = json.loads(out.read_text(encoding="utf-8"))
    section = report["in_sample"]
    answerable = report["counts"]["answerable"]
    fitted_answerable = sum(1 for c in report["per_case"][:10] if c["answerable"])
    assert section["state"] == "in_sample" and section["overlap"] == fitted_answerable
    assert section["text"].startswith(f"IN-SAMPLE: {fitted_answerable} of {answerable} answerable cases")
    for fmt in ("md", "html"):
        page = tmp_path / f"r.{fmt}"
        assert main(["report", str(out), "--format", fmt, "--out", str(page)]) == 0
        assert "IN-SAMPLE" in page.read_text(encoding="utf-8")
    policy = tmp_path / "gates.toml"
    # isolation is not this test's subject (an eval alone never verifies it: docs/security.md)
    policy.write_text(
        '[quality]\nfloors = { "nDCG@10" = 0.1 }\n[security]\nallow_unverified = true\n', encoding="utf-8"
    )
    capsys.readouterr()
    assert main(["gate", str(out), "--policy", str(policy)]) == 1
    gate_text = capsys.readouterr().out
    assert "NOT VERIFIED" in gate_text and "IN-SAMPLE" in gate_text
    # the other ten cases, which the model never saw: held out, recorded, and the floor can pass
    rest = tmp_path / "rest.jsonl"
    rest.write_text("\n".join(lines[10:20]) + "\n", encoding="utf-8")
    argv[2], argv[-1] = str(rest), str(tmp_path / "rest.json")
    assert main(argv) == 0
    assert capsys.readouterr().out.startswith("held out: none of the")
    assert json.loads((tmp_path / "rest.json").read_text())["in_sample"]["state"] == "held_out"
    assert (
        main(["report", str(tmp_path / "rest.json"), "--format", "md", "--out", str(tmp_path / "rest.md")])
        == 0
    )
    held_md = (tmp_path / "rest.md").read_text(encoding="utf-8")
    assert "_held out: none of the" in held_md and "IN-SAMPLE" not in held_md and "⚠️ IN-SAMPLE" not in held_md
    assert len(query_runs(history)) == 1
    assert main(["gate", str(tmp_path / "rest.json"), "--policy", str(policy)]) == 0


@pytest.mark.slow
def test_bench_names_the_in_sample_pipeline_first(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = GOLDEN.read_text(encoding="utf-8").splitlines()[:8]
    golden = tmp_path / "golden.jsonl"
    golden.write_text("\n".join(lines) + "\n", encoding="utf-8")
    model = _model(tmp_path / "m.json", {json.loads(line)["id"] for line in lines})
    code = main(["bench", "--dataset", str(golden), "--corpus", CORPUS, "--pipelines", f"bm25,hybrid-rerank:{model}",
                 "--metrics", "nDCG@10", "--resamples", "200", "--out-dir", str(tmp_path / "b"), "--no-history"])  # fmt: skip
    assert code == 0
    report = json.loads((tmp_path / "b" / "benchmark.json").read_text(encoding="utf-8"))
    assert report["in_sample"]["state"] == "in_sample"
    assert report["in_sample"]["text"].startswith("IN-SAMPLE: pipeline hybrid-rerank: all ")
    assert "IN-SAMPLE: pipeline hybrid-rerank" in capsys.readouterr().out
    # compare names the in-sample system too
    out = tmp_path / "compare.json"
    b = tmp_path / "b"
    assert (
        main(
            [
                "compare",
                str(b / "bm25.json"),
                str(b / "hybrid-rerank.json"),
                "--out",
                str(out),
                "--resamples",
                "200",
            ]
        )
        == 0
    )
    compared = json.loads(out.read_text(encoding="utf-8"))
    assert compared["in_sample"]["text"].startswith("IN-SAMPLE: hybrid-rerank: all ")
    assert capsys.readouterr().out.startswith("IN-SAMPLE: hybrid-rerank")


@pytest.mark.slow
def test_eval_reranker_on_fitted_cases_is_in_sample(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = GOLDEN.read_text(encoding="utf-8").splitlines()[:8]
    golden = tmp_path / "golden.jsonl"
    golden.write_text("\n".join(lines) + "\n", encoding="utf-8")
    model = _model(tmp_path / "m.json", {json.loads(line)["id"] for line in lines})
    out = tmp_path / "rr.json"
    code = main(["eval-reranker", "--dataset", str(golden), "--corpus", CORPUS, "--pipeline",
                 f"hybrid-rerank:{model}", "--out", str(out), "--no-progress", "--resamples", "200"])  # fmt: skip
    assert code == 0
    assert capsys.readouterr().out.startswith("IN-SAMPLE: all ")
    assert json.loads(out.read_text())["in_sample"]["state"] == "in_sample"


@pytest.mark.slow
def test_fit_fusion_holdout_writes_the_cases_it_never_saw_and_scoring_there_is_held_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("sklearn")  # the fusion extra (also in dev)
    out = tmp_path / "fusion.json"
    code = main(["fit-fusion", "--dataset", str(GOLDEN), "--corpus", CORPUS, "--out", str(out), "--folds", "2",
                 "--resamples", "200", "--objective", "uniform", "--c", "1", "--holdout", "0.3"])  # fmt: skip
    assert code == 0
    printed = capsys.readouterr().out
    held = tmp_path / "fusion.holdout.jsonl"
    assert f"written to {held}" in printed
    model = json.loads(out.read_text(encoding="utf-8"))
    fitted = set(model["fitted_on"]["cases"])
    held_ids = {json.loads(line)["id"] for line in held.read_text(encoding="utf-8").splitlines()}
    assert fitted and held_ids and fitted.isdisjoint(held_ids)
    assert model["fitted_on"]["holdout"]["cases"] == len(held_ids)
    assert model["fitted_on"]["dataset"]["sha256"] == sha256_of(GOLDEN)
    report = tmp_path / "learned.json"
    assert main(["eval", "--dataset", str(held), "--corpus", CORPUS, "--pipeline", f"hybrid-rerank:{out}",
                 "--metrics", "nDCG@10", "--out", str(report), "--no-history"]) == 0  # fmt: skip
    assert json.loads(report.read_text())["in_sample"]["state"] == "held_out"
