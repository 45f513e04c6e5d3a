"""``ragaudit eval``'s owner check of an outside source reads the whole response, as the tenant audit does.

Each returned chunk is attributed as before (by id, content and every field; semantically with
``--attribute semantic``), and every value of the response beside the chunk list (an HTTP body's
``debug``, ``facets``, ``suggest``; a Python retriever's list attributes) is attributed by the audit's
own reader (:func:`ragaudit.security.response_fields.response_evidence`): a service that leaks another
tenant's document only in a ``debug`` field fails the run's isolation check, as it fails the audit.
It lives here, on the command floor, because the runner that calls it (through
:class:`ragaudit.runner.tenancy.ResponseOwnership`) may not import the security floor.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ragaudit.data.run import RankedItem
from ragaudit.security.ownership import OwnershipIndex
from ragaudit.security.response_fields import envelope_of, response_evidence


@dataclass(frozen=True)
class WholeResponseOwnership:
    """``chunks`` decides each returned chunk's owner; ``index`` the owners of the response's other values."""

    chunks: Any
    """An ``OwnershipIndex``, or a ``SemanticOwnership`` around it."""
    index: OwnershipIndex

    def attribute_item(self, item: RankedItem) -> Any:
        return self.chunks.attribute_item(item)

    def response_foreign(
        self, returned: object, caller: str, query: str
    ) -> Sequence[tuple[str, frozenset[str]]]:
        envelope = envelope_of(returned)
        if envelope is None:
            return ()
        evidence = response_evidence(self.index, envelope, query)
        return tuple((e.path, owners) for e in evidence if (owners := e.foreign(caller)))
