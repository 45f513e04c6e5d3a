"""Every learned-fusion variant tried for issue 13 (item 4), cross-validated the same way, so that
nobody repeats them and the reader sees the selection behind the shipped model.

Two steps. ``collect`` runs the ``hybrid`` preset over a set once and keeps, per answerable case, the
RRF top 100 with the 14 format-1 features, the grades, and the query / candidate / title embeddings
(through the embedding cache)::

    .venv/bin/python bench/fusion_variants.py collect kb msmarco dbpedia

``run`` then cross-validates each variant on the collected evidence (5 folds by case, seed 0; the
same fold plan, metric and randomization test as ``ragaudit fit-fusion``) and prints its nDCG@10
against RRF per set::

    .venv/bin/python bench/fusion_variants.py run kb,msmarco,dbpedia

A variant is a feature set on top of the 14 format-1 features, a pair weighting (``none``: every pair
1; ``lambda``: |Δgain| · |Δ discount| at the RRF positions; ``lambda10``: the same with the discount
cut at rank 10; ``iters`` > 1 recomputes the positions from the previous fit), whether each query's
pairs weigh 1 in total (``perquery``), L2 strength ``C`` (or ``nested``: chosen per training set by an
inner 4-fold cross-validation), and optionally extra training sets (``pooled``). The shipped model is
the ``nested`` variant with ``prf3, bprf3, qtitle`` (``SHIPPED``), which reproduces what
``fit-fusion`` estimates. docs/benchmarks.md (*Fusion on BEIR*) records every figure this prints.
"""

from __future__ import annotations

import asyncio
import math
import os
import pickle
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
DATA = HERE / "_data"
BEIR = Path(os.environ.get("RAGAUDIT_SHARED_DATA", HERE.parents[1] / "shared" / "data")) / "beir"
KB = HERE.parent / "src" / "ragaudit" / "demo_data" / "kb"
GRID = [{"weighting": w, "C": c} for w in ("none", "lambda") for c in (0.1, 1.0)]
SHIPPED: dict[str, Any] = {"tag": "SHIPPED: nested{none,lambda}x{C 0.1,1} perq +prf3 +bprf3 +qtitle",
                           "perquery": True, "feats": ["prf3", "bprf3", "qtitle"], "nested": GRID}  # fmt: skip
VARIANTS: list[dict[str, Any]] = [
    {"tag": "base (format 1: 14 features, pairs 1, C=1)"},
    {"tag": "lambda", "weighting": "lambda"},
    {"tag": "lambda perq", "weighting": "lambda", "perquery": True},
    {"tag": "lambda10 perq", "weighting": "lambda10", "perquery": True},
    {"tag": "none perq", "perquery": True},
    {"tag": "lambda10 perq iters3", "weighting": "lambda10", "perquery": True, "iters": 3},
    {"tag": "+prf3", "feats": ["prf3"]},
    {"tag": "+prf1,3,5", "feats": ["prf1", "prf3", "prf5"]},
    {"tag": "+qtitle", "feats": ["qtitle"]},
    {"tag": "+zcos,zbm25", "feats": ["zcos", "zbm25"]},
    {"tag": "+titlein,queryin,titlecov", "feats": ["titlein", "queryin", "titlecov"]},
    {"tag": "lambda perq +prf1,3,5", "weighting": "lambda", "perquery": True, "feats": ["prf1", "prf3", "prf5"]},
    {"tag": "lambda perq +prf1,3,5 +qtitle", "weighting": "lambda", "perquery": True, "feats": ["prf1", "prf3", "prf5", "qtitle"]},
    {"tag": "lambda10 perq iters3 +prf1,3,5 +qtitle", "weighting": "lambda10", "perquery": True, "iters": 3, "feats": ["prf1", "prf3", "prf5", "qtitle"]},
    {"tag": "none perq +prf1,3,5 +qtitle", "perquery": True, "feats": ["prf1", "prf3", "prf5", "qtitle"]},
    {"tag": "lambda perq +prf3 +qtitle", "weighting": "lambda", "perquery": True, "feats": ["prf3", "qtitle"]},
    {"tag": "lambda perq +prf1,3,5 +qtitle, C nested", "weighting": "lambda", "perquery": True, "feats": ["prf1", "prf3", "prf5", "qtitle"], "nested": [0.01, 0.1, 1.0, 10.0]},
    {"tag": "lambda perq +prf1,3,5 +qtitle +bprf3", "weighting": "lambda", "perquery": True, "feats": ["prf1", "prf3", "prf5", "qtitle", "bprf3"]},
    {"tag": "lambda perq +prf1,3,5 +qtitle +clus10", "weighting": "lambda", "perquery": True, "feats": ["prf1", "prf3", "prf5", "qtitle", "clus10"]},
    {"tag": "lambda perq +prfq +qtitle", "weighting": "lambda", "perquery": True, "feats": ["prfq", "qtitle"]},
    {"tag": "lambda perq +prf1,3,5,10 +qtitle", "weighting": "lambda", "perquery": True, "feats": ["prf1", "prf3", "prf5", "prf10", "qtitle"]},
    {"tag": "lambda perq +prf1,3,5 +qtitle C=0.1", "weighting": "lambda", "perquery": True, "feats": ["prf1", "prf3", "prf5", "qtitle"], "C": 0.1},
    {"tag": "lambda perq +prf1,3,5 +qtitle +bprf3, C nested", "weighting": "lambda", "perquery": True, "feats": ["prf1", "prf3", "prf5", "qtitle", "bprf3"], "nested": [0.01, 0.1, 1.0, 10.0]},
    {"tag": "lambda perq +prf1,3,5 +qtitle +bprf3 +qlen interactions", "weighting": "lambda", "perquery": True, "feats": ["prf1", "prf3", "prf5", "qtitle", "bprf3", "qlen_x_zcos", "qlen_x_bm25"]},
    {"tag": "lambda perq +prf1,3,5 +qtitle +bprf3 +per-query z of all 14", "weighting": "lambda", "perquery": True, "feats": ["prf1", "prf3", "prf5", "qtitle", "bprf3", "zall"]},
    {"tag": "lambda perq +prf3 +bprf3 +qtitle (the dev-set pick)", "weighting": "lambda", "perquery": True, "feats": ["prf3", "bprf3", "qtitle"]},
    {"tag": "lambda perq +prfq +bprf3 +qtitle", "weighting": "lambda", "perquery": True, "feats": ["prfq", "bprf3", "qtitle"]},
    {"tag": "none perq +prf3 +bprf3 +qtitle", "perquery": True, "feats": ["prf3", "bprf3", "qtitle"]},
    {"tag": "pooled: base", "pooled": True},
    {"tag": "pooled: lambda perq", "pooled": True, "weighting": "lambda", "perquery": True},
    {"tag": "pooled: lambda perq +prf1,3,5 +qtitle", "pooled": True, "weighting": "lambda", "perquery": True, "feats": ["prf1", "prf3", "prf5", "qtitle"]},
    {"tag": "pooled: lambda perq +prf1,3,5 +qtitle +zcos,zbm25", "pooled": True, "weighting": "lambda", "perquery": True, "feats": ["prf1", "prf3", "prf5", "qtitle", "zcos", "zbm25"]},
    SHIPPED,
    {**SHIPPED, "tag": "pooled: the shipped variant", "pooled": True},
]  # fmt: skip


def _plain(o: Any) -> Any:
    if isinstance(o, Mapping):
        return {k: _plain(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_plain(v) for v in o]
    return o


def collect(name: str) -> None:
    from ragaudit.corpus.loading import load_corpus
    from ragaudit.data.loading import load_dataset
    from ragaudit.metrics.policy import Policy
    from ragaudit.pipelines.config import preset
    from ragaudit.pipelines.prepare import prepare_pipeline
    from ragaudit.retrieval.fusion_features import FEATURES_V1, candidate_features
    from ragaudit.retrieval.learned_fusion import dense_encoder, hybrid_components
    from ragaudit.retrieval.rerank import candidate

    if name == "kb":
        dataset, corpus, gain = (
            load_dataset(KB / "golden.jsonl"),
            load_corpus(KB / "corpus.jsonl"),
            "exponential",
        )
    else:
        dataset, corpus, gain = load_dataset(BEIR / name), load_corpus(BEIR / name), "linear"
    policy = Policy(gain=gain)
    prepared = prepare_pipeline(dataset, corpus, preset("hybrid"), threshold=policy.relevance_threshold)
    hybrid = prepared.pipeline.retriever
    components, depth = hybrid_components(hybrid)
    encoder = dense_encoder(hybrid)
    out: list[dict[str, Any]] = []

    async def run() -> None:
        for case in prepared.dataset.cases:
            if not case.is_answerable(policy.relevance_threshold):
                continue
            tenant = case.tenant_id or "default"
            raw = await asyncio.gather(
                *(r.search(tenant_id=tenant, query=case.query, top_k=100) for r in hybrid.retrievers)
            )
            kept = [[c for c in results if c.get("tenant_id", tenant) == tenant] for results in raw]
            fused = hybrid.fuse_results(kept, 100)
            views = [candidate(c, i) for i, c in enumerate(fused, start=1)]
            grades = case.grades()
            out.append({
                "id": case.id, "query": case.query, "tenant": tenant,
                "rel": set(case.relevant_set(policy.relevance_threshold)), "gr": dict(grades),
                "ids": [c["chunk_id"] for c in fused],
                "lists": tuple([(c["chunk_id"], c.get("score")) for c in kept[p]] for p in components),
                "feats": candidate_features(case.query, views, components, depth + 1, names=FEATURES_V1),
                "grades": np.array([float(max(grades.get(c["chunk_id"], 0), 0)) for c in fused]),
                "views": [{"text": v.text, "title": v.title} for v in views],
            })  # fmt: skip

    asyncio.run(run())
    queries = encoder.encode([c["query"] for c in out])
    for i, c in enumerate(out):
        c["qvec"] = queries[i]
        c["dvec"] = encoder.encode([v["text"] for v in c["views"]])
        c["tvec"] = encoder.encode([v["title"] or " " for v in c["views"]])
    DATA.mkdir(parents=True, exist_ok=True)
    with open(DATA / f"collect_{name}.pkl", "wb") as f:
        pickle.dump({"cases": out, "gain": gain}, f)
    print(f"{name}: {len(out)} answerable cases collected", flush=True)


class _Case:
    def __init__(self, d: dict[str, Any]) -> None:
        self.d, self.id, self.query = d, d["id"], d["query"]

    def relevant_set(self, threshold: int) -> set[str]:
        return set(self.d["rel"])

    def grades(self) -> dict[str, int]:
        return dict(self.d["gr"])


def _unit(m: Any) -> Any:
    m = np.asarray(m, dtype=np.float64)
    n = np.linalg.norm(m, axis=-1, keepdims=True)
    n[n == 0] = 1
    return m / n


def _extra(d: dict[str, Any], which: Sequence[str]) -> Any:
    from ragaudit.text.words import content_words, normalize_text

    base = d["feats"]
    n = len(base)
    q, docs, titles = _unit(d["qvec"]), _unit(d["dvec"][:n]), _unit(d["tvec"][:n])
    cos = docs @ q
    has_title = np.array([bool(v["title"]) for v in d["views"][:n]])

    def feedback(rank_col: int, missing_col: int, k: int) -> Any:
        ranks = np.where(base[:, missing_col] > 0, np.inf, np.exp(base[:, rank_col]))
        top = [i for i in np.argsort(ranks, kind="stable")[:k] if np.isfinite(ranks[i])]
        return docs @ _unit(docs[top].mean(axis=0)) if top else np.zeros(n)

    cols: list[Any] = []
    for w in which:
        if w == "qtitle":
            cols.append(np.where(has_title, titles @ q, 0.0))
        elif w == "prfq":  # Rocchio query: q + mean of the dense top 3
            ranks = np.exp(base[:, 5])
            cols.append(docs @ _unit(q + docs[np.argsort(ranks)[:3]].mean(axis=0)))
        elif w.startswith("prf"):
            cols.append(feedback(5, 6, int(w[3:])))
        elif w.startswith("bprf"):
            cols.append(feedback(1, 2, int(w[4:])))
        elif w.startswith("clus"):  # mean cosine to the RRF top k
            k = int(w[4:])
            inside = np.arange(n) < k
            cols.append(((docs[:k] @ docs.T).sum(0) - inside) / (k - inside))
        elif w == "zcos":
            cols.append((cos - cos.mean()) / (cos.std() + 1e-9))
        elif w == "zbm25":
            cols.append((base[:, 0] - base[:, 0].mean()) / (base[:, 0].std() + 1e-9))
        elif w == "zall":
            cols.append((base - base.mean(0)) / (base.std(0) + 1e-9))
        elif w in ("qlen_x_zcos", "qlen_x_bm25"):
            ql = math.log1p(len(content_words(d["query"])))
            z = (cos - cos.mean()) / (cos.std() + 1e-9) if w == "qlen_x_zcos" else base[:, 0]
            cols.append(ql * z)
        elif w == "titlein":  # the normalised title inside the query
            qn = f" {normalize_text(d['query'])} "
            cols.append(
                np.array(
                    [
                        float(bool(v["title"]) and f" {normalize_text(v['title'])} " in qn)
                        for v in d["views"][:n]
                    ]
                )
            )
        elif w == "queryin":  # the query inside the title
            qn = f" {normalize_text(d['query'])} "
            cols.append(
                np.array(
                    [
                        float(bool(v["title"]) and qn in f" {normalize_text(v['title'])} ")
                        for v in d["views"][:n]
                    ]
                )
            )
        elif w == "titlecov":  # share of the title's content words in the query
            qw = content_words(d["query"])
            cols.append(
                np.array(
                    [
                        len(content_words(v["title"]) & qw) / max(1, len(content_words(v["title"])))
                        for v in d["views"][:n]
                    ]
                )
            )
        else:
            raise KeyError(w)
    cols = [c if c.ndim == 2 else c[:, None] for c in cols]
    return np.hstack([base, *cols])


def load(name: str) -> tuple[list[Any], Any]:
    from ragaudit.experiments.fusion_fit import CaseData
    from ragaudit.metrics.policy import Policy
    from ragaudit.text.words import normalize_text

    with open(DATA / f"collect_{name}.pkl", "rb") as f:
        raw = pickle.load(f)
    cases = []
    for d in raw["cases"]:
        c = CaseData(_Case(d), f"{d['tenant']}\x00{normalize_text(d['query'])}", d["feats"], d["grades"], d["ids"], d["lists"])  # type: ignore[arg-type]  # fmt: skip
        c.raw = d  # type: ignore[attr-defined]
        cases.append(c)
    return cases, Policy(gain=raw["gain"])


def _disc(r: Any) -> Any:
    return 1.0 / np.log2(1.0 + r)


def fit(
    cases: Sequence[Any],
    c_value: float,
    gain: str,
    weighting: str = "none",
    perquery: bool = False,
    iters: int = 1,
    seed: int = 0,
) -> Any:
    from sklearn.linear_model import LogisticRegression

    rows = np.vstack([c.X for c in cases])
    mean, scale = rows.mean(0), rows.std(0)
    scale[scale < 1e-12] = 1.0
    coef = None
    for _ in range(iters):
        rng = np.random.default_rng(seed)
        diffs, weights = [], []
        for c in cases:
            g = c.grades
            s = (c.X - mean) / scale
            bi, wi = np.nonzero(g[:, None] > g[None, :])
            if bi.size > 2000:
                keep = rng.choice(bi.size, 2000, replace=False)
                bi, wi = bi[keep], wi[keep]
            if bi.size == 0:
                continue
            ranks = np.arange(1, len(g) + 1, dtype=np.float64)
            if coef is not None and weighting != "none":
                order = np.argsort(-(s @ coef), kind="stable")
                ranks[order] = np.arange(1, len(order) + 1)
            gains = 2.0**g - 1 if gain == "exponential" else g
            if weighting == "none":
                w = np.ones(bi.size)
            elif weighting == "lambda":
                w = np.abs(gains[bi] - gains[wi]) * np.abs(_disc(ranks[bi]) - _disc(ranks[wi]))
            else:  # lambda10
                cut = lambda r: np.where(r <= 10, _disc(r), 0.0)  # noqa: E731
                w = np.abs(gains[bi] - gains[wi]) * np.abs(cut(ranks[bi]) - cut(ranks[wi]))
            if w.sum() <= 0:
                continue
            diffs.append(s[bi] - s[wi])
            weights.append(w / w.sum() if perquery else w)
        d, w = np.vstack(diffs), np.concatenate(weights)
        w = w * (len(w) / w.sum())
        model = LogisticRegression(C=c_value, fit_intercept=False, max_iter=2000)
        model.fit(np.vstack([d, -d]), np.r_[np.ones(len(d)), np.zeros(len(d))], sample_weight=np.r_[w, w])
        coef = model.coef_[0]
    return mean, scale, coef


def _ranking(c: Any, model: Any) -> list[str]:
    mean, scale, coef = model
    scores = ((c.X - mean) / scale) @ coef
    return [c.rrf[i] for i in sorted(range(len(scores)), key=lambda i: -scores[i])] + c.rrf[len(scores) :]


def cross_validate(
    cases: Sequence[Any], policy: Any, variant: Mapping[str, Any], extra: Sequence[Any] = (), seed: int = 0
) -> tuple[Any, Any, list[Any]]:
    from ragaudit.experiments.fusion_fit import assign_folds, score_rankings
    from ragaudit.metrics.names import parse_metrics

    specs = parse_metrics("nDCG@10")
    kw = {k: variant[k] for k in ("weighting", "perquery", "iters") if k in variant}
    fold_of = assign_folds(cases, 5, seed)
    rankings: list[list[str]] = [[] for _ in cases]
    chosen = []

    def setting(option: Any) -> tuple[float, dict[str, Any]]:
        if isinstance(option, Mapping):
            return float(option["C"]), {**kw, "weighting": option["weighting"]}
        return float(option), kw

    for f in range(5):
        train = [cases[i] for i, k in enumerate(fold_of) if k != f]
        c_value, fkw = float(variant.get("C", 1.0)), kw
        if variant.get("nested"):
            inner = assign_folds(train, 4, seed + 1)
            best: tuple[float, Any] | None = None
            for option in variant["nested"]:
                oc, okw = setting(option)
                got: list[list[str]] = [[] for _ in train]
                for g in range(4):
                    model = fit(
                        [t for t, k in zip(train, inner, strict=True) if k != g] + list(extra),
                        oc,
                        policy.gain,
                        seed=seed,
                        **okw,
                    )
                    for i, k in enumerate(inner):
                        if k == g:
                            got[i] = _ranking(train[i], model)
                value = float(score_rankings(train, got, specs, policy)["nDCG@10"].mean())
                if best is None or value > best[0] + 1e-12:
                    best = (value, option)
            assert best is not None
            chosen.append(best[1])
            c_value, fkw = setting(best[1])
        model = fit(train + list(extra), c_value, policy.gain, seed=seed, **fkw)
        for i, k in enumerate(fold_of):
            if k == f:
                rankings[i] = _ranking(cases[i], model)
    learned = score_rankings(cases, rankings, specs, policy)["nDCG@10"]
    rrf = score_rankings(cases, [c.rrf for c in cases], specs, policy)["nDCG@10"]
    return learned, rrf, chosen


def run(sets: Sequence[str], tags: Sequence[str] = ()) -> None:
    from ragaudit.stats.paired import randomization_test

    data = {
        name: load(name) for name in ("kb", "msmarco", "dbpedia") if (DATA / f"collect_{name}.pkl").exists()
    }
    for variant in VARIANTS:
        if tags and not any(t in variant["tag"] for t in tags):
            continue
        for name in sets:
            for other in data:
                for c in data[other][0]:
                    c.X = _extra(c.raw, variant.get("feats", []))
            cases, policy = data[name]
            extra = (
                [c for other in data if other != name for c in data[other][0]]
                if variant.get("pooled")
                else []
            )
            learned, rrf, chosen = cross_validate(cases, policy, variant, extra)
            d = learned - rrf
            p = randomization_test(rrf, learned, n_resamples=10_000)
            picks = f"  inner picks: {chosen}" if chosen else ""
            print(
                f"{name:8s} {variant['tag']:66s} Δ {d.mean():+.4f}  {(d > 0).sum()}/{(d < 0).sum()}  p {p:.3f}{picks}",
                flush=True,
            )


if __name__ == "__main__":
    os.environ.setdefault("RAGAUDIT_CACHE_DIR", str(DATA / "dense_cache"))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if len(sys.argv) > 2 and sys.argv[1] == "collect":
        for set_name in sys.argv[2:]:
            collect(set_name)
    elif len(sys.argv) > 2 and sys.argv[1] == "run":
        run(sys.argv[2].split(","), sys.argv[3:])
    else:
        print(__doc__)
