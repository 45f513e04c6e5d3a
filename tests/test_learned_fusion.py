"""Learned fusion on the demo knowledge base: features from the hybrid's real BM25 and MiniLM lists,
``ragaudit fit-fusion`` (cross-validated estimates only, a JSON model, decided exit codes), and the
fitted model as a pipeline stage (``[rerank] type = "learned"``, ``hybrid-rerank:MODEL.json``)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import KB, write_lines
from ragaudit.cli.main import main
from ragaudit.corpus.loading import Corpus, load_corpus
from ragaudit.errors import InputError
from ragaudit.experiments.fusion_fit import (
    CONVEX_GRID,
    CaseData,
    Setting,
    assign_folds,
    fit_linear,
    pair_weights,
    pick_weight,
    settings_grid,
)
from ragaudit.pipelines.build import ComponentCache, build_pipeline
from ragaudit.pipelines.config import PRESETS, parse_pipeline, preset
from ragaudit.retrieval.fusion_features import (
    FEATURES,
    FEATURES_V1,
    VECTOR_FEATURES,
    candidate_features,
    query_entities,
)
from ragaudit.retrieval.learned_fusion import FusionModel, dense_encoder, load_model
from ragaudit.retrieval.rerank import candidate

pytestmark = pytest.mark.slow
GOLDEN = str(KB / "golden.jsonl")
CORPUS = str(KB / "corpus.jsonl")


@pytest.fixture(scope="module")
def kb() -> Corpus:
    return load_corpus(KB / "corpus.jsonl")


@pytest.fixture(scope="module")
def shared() -> ComponentCache:
    return ComponentCache()


@pytest.fixture(scope="module")
def fitted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """``ragaudit fit-fusion`` on the whole demo golden set, 3 folds: the model file and what it printed."""
    import contextlib
    import io

    pytest.importorskip("sklearn")  # the fusion extra (also in dev)
    out = tmp_path_factory.mktemp("fit") / "fusion.json"
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = main(["fit-fusion", "--dataset", GOLDEN, "--corpus", CORPUS, "--out", str(out),
                     "--folds", "3", "--resamples", "2000"])  # fmt: skip
    assert code == 0
    return out, buffer.getvalue()


def hand_model(path: Path, **weights: float) -> Path:
    """A model file with the given feature weights (others 0), mean 0, scale 1."""
    values = [weights.get(name, 0.0) for name in FEATURES]
    FusionModel(tuple(values), (0.0,) * len(FEATURES), (1.0,) * len(FEATURES), candidates=50).write(path)
    return path


def search(retriever: Any, query: str, tenant: str, k: int) -> list[Any]:
    return list(asyncio.run(retriever.search(tenant_id=tenant, query=query, top_k=k)))


def test_features_read_the_hybrids_lists_and_the_documents(kb: Corpus, shared: ComponentCache) -> None:
    hybrid = build_pipeline(preset("hybrid"), kb, cache=shared).retriever
    query = "What is the monthly API limit for the Professional plan?"
    results = search(hybrid, query, "acme", 30)
    views = [candidate(c, i) for i, c in enumerate(results, start=1)]
    encoder = dense_encoder(hybrid)
    x = candidate_features(query, views, encoder=encoder)
    assert x.shape == (30, len(FEATURES)) and np.isfinite(x).all()
    assert np.array_equal(candidate_features(query, views, names=FEATURES_V1), x[:, : len(FEATURES_V1)])
    with pytest.raises(ValueError, match="need the dense retriever's encoder"):
        candidate_features(query, views)  # the embedding features cannot be computed without it
    col = {name: x[:, i] for i, name in enumerate(FEATURES)}
    by_id = {c["chunk_id"]: i for i, c in enumerate(results)}
    for i, c in enumerate(results):  # ranks and scores are the sub-retrievers' own
        b_rank, d_rank = c["metadata"]["fusion"]["ranks"]
        assert col["bm25_log_rank"][i] == pytest.approx(np.log(b_rank or 101))
        assert col["dense_log_rank"][i] == pytest.approx(np.log(d_rank or 101))
        assert col["rrf"][i] == pytest.approx(60 * c["score"])  # RRF k=60, equal weights
        if d_rank is not None:
            assert col["dense_cosine"][i] == pytest.approx(c["metadata"]["fusion"]["scores"][1])
    v3, v2 = by_id["acme-pricing-professional-v3"], by_id["acme-pricing-professional-v2"]
    assert col["superseded"][v2] == 1.0 and col["superseded"][v3] == 0.0  # metadata status
    assert col["latest_version"][v2] == 0.0 and col["latest_version"][v3] == 1.0  # v2 < v3, same source
    assert col["entity_overlap"][v3] == 1.0  # "API", "Professional"
    assert query_entities(query) == {"api", "professional"}
    assert query_entities("pro plan api limit for GPT-4 in 2024") == {"gpt 4", "2024"}
    # the embedding features, recomputed from the model's own vectors (what the dense index embedded)
    docs = np.asarray(encoder.encode([f"{v.title}\n{v.content}" if v.title else v.content for v in views]))
    q = np.asarray(encoder.encode([query]))[0]  # from the cache, as the stage gets it
    alone = np.asarray(encoder.encoder.encode([query]))[0]  # type: ignore[attr-defined]  # as dense searched
    assert np.allclose(docs @ alone, col["dense_cosine"], atol=1e-5)  # the same vectors the index holds
    for name, position in (("dense_prf3", 1), ("bm25_prf3", 0)):
        ranks = [c["metadata"]["fusion"]["ranks"][position] for c in results]
        top = sorted((r, i) for i, r in enumerate(ranks) if r is not None)[:3]
        centroid = docs[[i for _, i in top]].mean(axis=0)
        assert np.allclose(col[name], docs @ (centroid / np.linalg.norm(centroid)), atol=1e-5)
    title = np.asarray(encoder.encode([views[v3].title]))[0]
    assert col["title_cosine"][v3] == pytest.approx(float(title @ q), abs=1e-5)
    assert col["title_cosine"][v3] > 0.3  # "Professional plan pricing" is about the question


def test_learned_stage_orders_by_the_model_and_keeps_the_candidates(
    kb: Corpus, shared: ComponentCache, tmp_path: Path
) -> None:
    model = hand_model(tmp_path / "title.json", title_overlap=1.0, dense_log_rank=-0.01)
    staged = build_pipeline(preset(f"hybrid-rerank:{model}"), kb, cache=shared)
    assert staged.models["reranker"].startswith("learned fusion (title.json sha256:")
    hybrid = build_pipeline(preset("hybrid"), kb, cache=shared).retriever
    query = "Globex returns policy for opened items"
    first = search(hybrid, query, "globex", 100)
    got = search(staged.retriever, query, "globex", 100)
    assert sorted(c["chunk_id"] for c in got) == sorted(c["chunk_id"] for c in first)
    scores = load_model(model).score(
        candidate_features(
            query, [candidate(c, i) for i, c in enumerate(first, 1)], encoder=dense_encoder(hybrid)
        )
    )
    want = [first[i]["chunk_id"] for i in sorted(range(len(first)), key=lambda i: -scores[i])]
    assert [c["chunk_id"] for c in got] == want
    assert all(c["tenant_id"] == "globex" for c in got)
    assert got[0]["metadata"]["first_stage_rank"] == 1 + [c["chunk_id"] for c in first].index(want[0])


def test_learned_stage_maps_components_whatever_their_order(
    kb: Corpus, shared: ComponentCache, tmp_path: Path
) -> None:
    model = str(hand_model(tmp_path / "m.json", bm25_score=2.0, dense_log_rank=-1.0, text_overlap=0.5))
    learned = {"type": "learned", "model": model}
    flipped = {"type": "hybrid", "components": [{"type": "dense"}, {"type": "bm25"}]}
    a = build_pipeline(preset(f"hybrid-rerank:{model}"), kb, cache=shared).retriever
    b = build_pipeline(parse_pipeline({"retriever": flipped, "rerank": learned}), kb, cache=shared).retriever
    query = "How long is the warranty on a gateway?"
    assert [c["chunk_id"] for c in search(a, query, "acme", 20)] == [
        c["chunk_id"] for c in search(b, query, "acme", 20)
    ]


def test_learned_stage_reorders_as_many_candidates_as_it_was_fitted_on(
    kb: Corpus, shared: ComponentCache, tmp_path: Path
) -> None:
    model = hand_model(tmp_path / "m.json", rrf=1.0)  # fitted on 50 candidates
    config = parse_pipeline(
        {**PRESETS["hybrid"], "name": "x", "rerank": {"type": "learned", "model": str(model)}}
    )
    staged = build_pipeline(config, kb, cache=shared).retriever
    assert staged.top_n == 50
    with_top_n = parse_pipeline(
        {**PRESETS["hybrid"], "rerank": {"type": "learned", "model": str(model), "top_n": 7}}
    )
    assert build_pipeline(with_top_n, kb, cache=shared).retriever.top_n == 7


def test_learned_stage_refuses_what_it_cannot_use(kb: Corpus, shared: ComponentCache, tmp_path: Path) -> None:
    model = hand_model(tmp_path / "m.json", rrf=1.0)
    over_bm25 = parse_pipeline(
        {"name": "x", "retriever": {"type": "bm25"}, "rerank": {"type": "learned", "model": str(model)}}
    )
    with pytest.raises(InputError, match="needs a hybrid first stage of BM25 and dense"):
        build_pipeline(over_bm25, kb, cache=shared)
    with pytest.raises(InputError, match="no such fusion model file"):
        build_pipeline(preset(f"hybrid-rerank:{tmp_path / 'absent.json'}"), kb, cache=shared)
    other = json.loads(model.read_text())
    other["features"] = other["features"][:-1]
    (tmp_path / "old.json").write_text(json.dumps(other))
    with pytest.raises(InputError, match="features differ"):
        load_model(tmp_path / "old.json")
    other = json.loads(model.read_text())
    other["format_version"] = 3
    (tmp_path / "future.json").write_text(json.dumps(other))
    with pytest.raises(InputError, match=r"unsupported model version/kind 3/'linear' \(this ragaudit reads"):
        load_model(tmp_path / "future.json")
    (tmp_path / "pickle.json").write_bytes(b"\x80\x04K\x01.")
    with pytest.raises(InputError, match="not a readable JSON fusion model"):
        load_model(tmp_path / "pickle.json")


def test_a_format_1_model_still_loads_and_scores_its_14_features(
    kb: Corpus, shared: ComponentCache, tmp_path: Path
) -> None:
    """Files written before the embedding features existed keep working, without an encoder."""
    weights = [0.0] * len(FEATURES_V1)
    weights[FEATURES_V1.index("title_overlap")], weights[FEATURES_V1.index("dense_log_rank")] = 1.0, -0.01
    old = {"format": "ragaudit-fusion-model", "format_version": 1, "kind": "linear",
           "features": list(FEATURES_V1), "weights": weights, "mean": [0.0] * 14, "scale": [1.0] * 14,
           "candidates": 100, "trainer": {"C": 1.0}}  # fmt: skip
    path = tmp_path / "v1.json"
    path.write_text(json.dumps(old))
    model = load_model(path)
    assert model.features == FEATURES_V1 and not model.needs_encoder and model.info["trainer"] == {"C": 1.0}
    staged = build_pipeline(preset(f"hybrid-rerank:{path}"), kb, cache=shared).retriever
    assert staged.reranker.encoder is None  # nothing embedded at query time for a format-1 model
    hybrid = build_pipeline(preset("hybrid"), kb, cache=shared).retriever
    query = "Globex returns policy for opened items"
    first = search(hybrid, query, "globex", 100)
    scores = model.score(
        candidate_features(query, [candidate(c, i) for i, c in enumerate(first, 1)], names=FEATURES_V1)
    )
    want = [first[i]["chunk_id"] for i in sorted(range(len(first)), key=lambda i: -scores[i])]
    assert [c["chunk_id"] for c in search(staged, query, "globex", 100)] == want
    model.write(tmp_path / "again.json")  # written back as what it is: format 1, 14 features
    assert json.loads((tmp_path / "again.json").read_text())["format_version"] == 1
    new = json.loads(hand_model(tmp_path / "v2.json", rrf=1.0).read_text())
    assert new["format_version"] == 2 and new["features"][-3:] == list(VECTOR_FEATURES)


def test_pair_weights_count_every_query_the_same_and_lambda_follows_dcg() -> None:
    grades = np.array([0.0, 2.0, 1.0, 0.0])
    better, worse = np.nonzero(grades[:, None] > grades[None, :])
    assert pair_weights(grades, better, worse, "uniform", "linear").tolist() == [1.0] * len(better)
    lam = pair_weights(grades, better, worse, "lambda", "linear")
    disc = 1 / np.log2(np.arange(2, 6))
    for b, w, value in zip(better, worse, lam, strict=True):
        assert value == pytest.approx(abs(grades[b] - grades[w]) * abs(disc[b] - disc[w]))
    exp = pair_weights(grades, better, worse, "lambda", "exponential")
    pair = next(k for k, (b, w) in enumerate(zip(better, worse, strict=True)) if (b, w) == (1, 0))
    assert exp[pair] == pytest.approx(3.0 * (disc[0] - disc[1]))  # 2^2 - 1 = 3

    def case(values: list[float], good: int) -> CaseData:
        x = np.zeros((len(values), len(FEATURES)))
        x[:, 0] = values
        g = np.zeros(len(values))
        g[good] = 1.0
        return CaseData(None, "t\x00q", x, g, [str(i) for i in range(len(values))], ([], []))  # type: ignore[arg-type]

    # one query's 2 pairs say "feature 0 up", another's 4 pairs say "down", by the same margin:
    # counted per pair, "down" would win 4 to 2; with every query weighing the same, they cancel out
    model = fit_linear([case([0, 0, 1], 2), case([0, 1, 1, 1, 1], 0)], 100, 1.0, 0, "uniform", "linear")
    assert model is not None and abs(model.weights[0]) < 1e-6
    with pytest.raises(ValueError, match="unknown objective"):
        settings_grid(["listwise"], [1.0])
    assert settings_grid(["uniform", "lambda"], [0.1, 1]) == [
        Setting("uniform", 0.1), Setting("uniform", 1.0), Setting("lambda", 0.1), Setting("lambda", 1.0)
    ]  # fmt: skip


def test_folds_keep_a_question_together_and_spread_every_tenant() -> None:
    def case(tenant: str, query: str) -> CaseData:
        return CaseData(None, f"{tenant}\x00{query}", np.zeros((0, 1)), np.zeros(0), [], ([], []))  # type: ignore[arg-type]

    cases = [case(t, f"q{i}") for t in ("a", "b") for i in range(6)] + [case("a", "q0"), case("b", "q5")]
    folds = assign_folds(cases, 3, seed=1)
    assert folds[12] == folds[0] and folds[13] == folds[11]  # same tenant + question: same fold
    for tenant in ("a", "b"):
        mine = [f for c, f in zip(cases[:12], folds, strict=False) if c.group.startswith(tenant)]
        assert sorted(mine) == [0, 0, 1, 1, 2, 2]
    assert assign_folds(cases, 3, seed=1) == folds  # seeded: the same plan every run


def test_convex_weight_is_the_best_on_training_cases_ties_nearest_half() -> None:
    table = np.zeros((3, len(CONVEX_GRID)))
    table[:, CONVEX_GRID.index(0.8)] = 1.0
    table[2, CONVEX_GRID.index(0.2)] = 5.0
    assert pick_weight(table, [0, 1]) == 0.8
    assert pick_weight(table, [2]) == 0.2
    assert pick_weight(np.zeros((2, len(CONVEX_GRID))), [0, 1]) == 0.5


def test_fit_fusion_reports_cross_validated_estimates_and_writes_a_usable_model(
    fitted: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, printed = fitted
    assert "3-fold cross-validated estimates over 75 answerable cases" in printed
    raw = json.loads(path.read_text())
    assert raw["format"] == "ragaudit-fusion-model" and raw["features"] == list(FEATURES)
    assert raw["format_version"] == 2
    trainer = raw["trainer"]
    assert (trainer["objective"], trainer["C"]) in {
        ("uniform", 0.1),
        ("uniform", 1.0),
        ("lambda", 0.1),
        ("lambda", 1.0),
    }
    assert len(trainer["chosen_from"]) == 4 and set(trainer["inner_cv_means"]) == {
        "uniform C=0.1", "uniform C=1", "lambda C=0.1", "lambda C=1"
    }  # fmt: skip
    per_fold = [f["learned"] for f in raw["cross_validation"]["fold_plan"]]
    assert len(per_fold) == 3 and all(f["objective"] in ("uniform", "lambda") for f in per_fold)
    assert "learned objective and C per fold (inner cross-validation on its training cases): " in printed
    cv = raw["cross_validation"]
    assert cv["folds"] == 3 and cv["cases"] == 75 and sum(f["cases"] for f in cv["fold_plan"]) == 75
    means = cv["means"]
    for method in ("rrf", "convex", "learned"):
        assert f"{method} " in printed and 0 < means[method]["nDCG@10"] <= 1
    rows = {(c["method"], c["metric"]): c for c in cv["comparisons"]}
    learned = rows[("learned", "nDCG@10")]
    assert learned["delta"] == pytest.approx(means["learned"]["nDCG@10"] - means["rrf"]["nDCG@10"])
    assert learned["p_value"] <= learned["p_value_holm"] <= 1
    assert f"{learned['delta']:+.4f}" in printed
    assert raw["fitted_on"]["dataset"]["cases"] == 84 and raw["trainer"]["library"].startswith("scikit-learn")
    w = raw["convex"]["dense_weight"]
    assert 0 <= w <= 1 and raw["convex"]["weights"] == [
        round(1 - w, 2),
        w,
    ]  # [bm25, dense] in the hybrid preset
    assert f'method = "weighted", normalize = "minmax", weights = {raw["convex"]["weights"]}' in printed
    load_model(path)  # JSON, readable without scikit-learn
    report = tmp_path / "eval.json"
    code = main(["eval", "--dataset", GOLDEN, "--corpus", CORPUS, "--pipeline", f"hybrid-rerank:{path}",
                 "--out", str(report), "--no-history", "--no-progress"])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    assert json.loads(report.read_text())["pipeline"]["models"]["reranker"].startswith("learned fusion")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--folds", "5"], "too few for 5 folds"),
        (["--folds", "1"], "at least 2 folds"),
        (["--pipeline", "bm25"], "needs a hybrid first stage"),
        (["--metrics", "nDCG@ten"], "nDCG@ten"),
        (["--objective", "listwise"], "expected uniform and/or lambda"),
        (["--c", "0"], "must be a number > 0"),
    ],
)
def test_fit_fusion_bad_input_exits_2(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = (KB / "golden.jsonl").read_text().splitlines()[:6]  # 6 cases: enough for 3 folds, not 5
    golden = write_lines(tmp_path / "golden.jsonl", lines)
    out = tmp_path / "fusion.json"
    code = main(["fit-fusion", "--dataset", str(golden), "--corpus", CORPUS, "--out", str(out), *args])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err
    assert not out.exists()


def test_eval_reranker_measures_the_learned_stage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = hand_model(tmp_path / "m.json", superseded=-1.0, dense_log_rank=-1.0)
    golden = write_lines(tmp_path / "golden.jsonl", (KB / "golden.jsonl").read_text().splitlines()[:6])
    out = tmp_path / "rr.json"
    code = main(["eval-reranker", "--dataset", str(golden), "--corpus", CORPUS, "--pipeline",
                 f"hybrid-rerank:{model}", "--out", str(out), "--no-progress", "--resamples", "500"])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    report = json.loads(out.read_text())
    assert report["reranker"].startswith("learned fusion (m.json") and report["top_n"] == 100


def test_fit_fusion_with_nothing_relevant_among_the_candidates_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = [json.loads(line) for line in (KB / "golden.jsonl").read_text().splitlines()[:6]]
    for case in cases:  # labels that point at no indexed document: nothing to learn from
        case.update(relevant_chunk_ids=["no-such-doc"], relevance={"no-such-doc": 3}, evidence=[])
    golden = write_lines(tmp_path / "golden.jsonl", [json.dumps(c) for c in cases])
    out = tmp_path / "fusion.json"
    code = main(
        ["fit-fusion", "--dataset", str(golden), "--corpus", CORPUS, "--out", str(out), "--folds", "3"]
    )
    err = capsys.readouterr().err
    assert code == 2 and "no training case has a relevant candidate" in err and not out.exists()


def test_fit_fusion_unreadable_dataset_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = write_lines(tmp_path / "golden.jsonl", ['{"id": "x", "query": '])
    code = main(["fit-fusion", "--dataset", str(bad), "--corpus", CORPUS, "--out", str(tmp_path / "f.json")])
    assert code == 2 and "golden.jsonl" in capsys.readouterr().err


def test_fitting_without_scikit_learn_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from ragaudit.errors import MissingDependencyError
    from ragaudit.experiments.fusion_fit import sklearn_logistic

    monkeypatch.setitem(sys.modules, "sklearn.linear_model", None)  # as if not installed
    with pytest.raises(MissingDependencyError, match=r"pip install 'ragaudit\[fusion\]'"):
        sklearn_logistic()


def test_bare_hybrid_rerank_is_refused_with_the_fit_command(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["eval", "--dataset", GOLDEN, "--corpus", CORPUS, "--pipeline", "hybrid-rerank", "--no-history"]
    )
    err = capsys.readouterr().err
    assert code == 2 and "ragaudit fit-fusion --dataset D --corpus C --out fusion.json" in err


def test_one_objective_and_one_c_fix_the_setting(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("sklearn")
    golden = write_lines(tmp_path / "golden.jsonl", (KB / "golden.jsonl").read_text().splitlines()[:12])
    out = tmp_path / "fusion.json"
    code = main(["fit-fusion", "--dataset", str(golden), "--corpus", CORPUS, "--out", str(out), "--folds", "3",
                 "--objective", "lambda", "--c", "0.5", "--resamples", "200"])  # fmt: skip
    printed = capsys.readouterr().out
    assert code == 0
    assert "learned objective and C per fold (fixed by --objective and --c): lambda C=0.5, " in printed
    trainer = json.loads(out.read_text())["trainer"]
    assert (trainer["objective"], trainer["C"], trainer["inner_cv_means"]) == ("lambda", 0.5, {})
