"""The runner's tenant check reads an owner's ``via`` and an index's ``response_foreign`` through typed
Protocols (:mod:`ragaudit.runner.tenancy`): an owner that says how it was established is counted so,
one that does not is counted ``corpus``; an index without ``response_foreign`` reads no response."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ragaudit.data.run import RankedItem
from ragaudit.runner.tenancy import BY_CORPUS, check_chunks, response_leaks


@dataclass(frozen=True)
class Owner:
    owner: str

    @property
    def attributed(self) -> bool:
        return True

    @property
    def text_unfound(self) -> bool:
        return False

    def foreign_owners(self, caller: str) -> frozenset[str]:
        return frozenset({self.owner}) - {caller}


@dataclass(frozen=True)
class SemanticOwner(Owner):
    @property
    def via(self) -> str:
        return "semantic"


class Index:
    def attribute_item(self, item: RankedItem) -> Owner:
        owner = item.chunk_id.split("-")[0]
        return SemanticOwner(owner) if item.chunk_id.endswith("-summary") else Owner(owner)


class ResponseIndex(Index):
    def response_foreign(
        self, returned: object, caller: str, query: str
    ) -> Sequence[tuple[str, frozenset[str]]]:
        return [("$.debug[0]", frozenset({"globex"})), ("$.debug[1]", frozenset({"public"}))]


def test_each_owner_is_counted_by_how_it_was_established() -> None:
    items = [RankedItem("acme-doc"), RankedItem("acme-summary"), RankedItem("globex-summary")]
    found = check_chunks(items, "acme", Index())
    assert dict(found.methods) == {BY_CORPUS: 1, "semantic": 2}
    assert [(leak.chunk_id, leak.claimed_tenant) for leak in found.leaks] == [("globex-summary", "globex")]


def test_only_an_index_that_reads_responses_finds_leaks_beside_the_ranking() -> None:
    assert response_leaks({"debug": []}, "acme", "q", Index()) == []
    assert response_leaks({"debug": []}, "acme", "q", None) == []
    leaks = response_leaks({"debug": []}, "acme", "q", ResponseIndex(), shared=frozenset({"public"}))
    assert [(leak.chunk_id, leak.rank, leak.claimed_tenant) for leak in leaks] == [
        ("$.debug[0]", 0, "globex")
    ]
