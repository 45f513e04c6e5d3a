"""compare says when its figures are not those of the reports it reads: two reports that asked for
different depths (``--top-k 3`` and ``--top-k 10``; part of a difference in a deeper metric is the depth,
and the same system looks like a significant regression of itself), and two reports that scored
different cases (the paired test and the means use the cases both scored)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import ragaudit
from ragaudit.gates.policy import load_policy
from ragaudit.gates.verdict import run_gates

GOLDEN = "".join(
    f'{{"id": "q{i}", "query": "x", "tenant_id": "acme", "relevance": {{"d{i % 9 + 1}": 1}}}}\n'
    for i in range(12)
)


class NineDeep:
    async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[dict[str, object]]:
        ids = [f"d{i}" for i in range(1, 10)]
        return [
            {"chunk_id": d, "score": 1.0 / r, "tenant_id": tenant_id} for r, d in enumerate(ids[:top_k], 1)
        ]


def _report(golden: Path, top_k: int, name: str) -> ragaudit.Evaluation:
    return asyncio.run(
        ragaudit.evaluate_retriever(NineDeep(), golden, metrics="nDCG@10,R@3", top_k=top_k, name=name)
    )


def test_reports_at_different_depths_carry_a_note(tmp_path: Path) -> None:
    golden = tmp_path / "golden.jsonl"
    golden.write_text(GOLDEN, encoding="utf-8")
    deep, shallow = _report(golden, 10, "deep"), _report(golden, 3, "shallow")
    notes = ragaudit.compare(deep, shallow).to_dict()["notes"]
    (note,) = [n for n in notes if "different depths" in n]
    assert note.startswith(
        "the reports asked for different depths (deep top_k 10, shallow top_k 3): nDCG@10 "
    )
    same_depth = ragaudit.compare(deep, _report(golden, 10, "again")).to_dict()["notes"]
    assert not [n for n in same_depth if "different depths" in n]
    only_shallow_metric = ragaudit.compare(deep, shallow, metrics="R@3").to_dict()["notes"]
    assert not [n for n in only_shallow_metric if "different depths" in n]


def test_reports_that_scored_different_cases_say_the_comparison_is_on_the_shared_ones(tmp_path: Path) -> None:
    golden = tmp_path / "golden.jsonl"
    golden.write_text(GOLDEN, encoding="utf-8")
    full = _report(golden, 10, "full").to_dict()
    cut = {**full, "per_case": [c for c in full["per_case"] if c["id"] not in ("q0", "q1", "q2")]}
    compared = ragaudit.compare(cut, {**full, "run": {**full["run"], "name": "again"}}, metrics="R@3")
    (note,) = [n for n in compared.to_dict()["notes"] if "scored different cases" in n]
    assert note.startswith(
        "again and full scored different cases (3 only in again, 0 only in full): compared on the 9"
    )
    same = ragaudit.compare(full, {**full, "run": {**full["run"], "name": "again"}}, metrics="R@3")
    assert not [n for n in same.to_dict()["notes"] if "scored different cases" in n]


def test_the_gate_notes_a_baseline_of_another_depth_even_under_the_same_name(tmp_path: Path) -> None:
    golden = tmp_path / "golden.jsonl"
    golden.write_text(GOLDEN, encoding="utf-8")
    shallow, deep = tmp_path / "shallow.json", tmp_path / "deep.json"
    _report(golden, 3, "same").write_json(shallow)
    _report(golden, 10, "same").write_json(deep)
    policy = tmp_path / "gates.toml"
    policy.write_text(
        '[quality]\nfloors = { "nDCG@10" = 0.1 }\n[security]\nallow_unverified = true\n', encoding="utf-8"
    )
    verdict = run_gates(deep, load_policy(policy), baseline_path=shallow, resamples=200)
    quality = next(g for g in verdict.gates if g.gate == "quality")
    assert any(
        n.startswith("the reports asked for different depths (same top_k 3, same top_k 10)")
        for n in quality.notes
    )
