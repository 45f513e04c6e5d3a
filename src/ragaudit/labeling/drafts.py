"""Drafts of unanswerable probes: questions about entities no document of the tenant mentions.

The lesson's "Unanswerable Inquiry Probes": a golden set needs questions the tenant's documents cannot
answer, so that a system that always answers is caught. Drafted here from other tenants' rare names
and codes (the tenant audit's ``entity`` probes, :mod:`ragaudit.security.probes`: words only one
tenant's documents use), which doubles as a leak probe: a retriever that answers one from another
tenant's documents leaks. Each draft is checked against every document of the asking tenant (no
mention, after the same text normalisation) and is only a draft: pooled like any query, it enters the
golden set only if the annotator marks it unanswerable in the workbench (``U``); otherwise
``label merge`` drops it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from types import MappingProxyType

from ragaudit.corpus.model import Document
from ragaudit.data.schema import GoldenCase
from ragaudit.security.probes import generate_probes
from ragaudit.text.words import normalize_text

TEMPLATE = "What does {entity} cover, and what are its terms?"


def unanswerable_drafts(documents: Iterable[Document], per_tenant: int = 3) -> list[GoldenCase]:
    """Up to ``per_tenant`` drafted probes per tenant, asked about other tenants' entities."""
    docs = list(documents)
    texts: dict[str, list[str]] = defaultdict(list)
    for doc in docs:
        texts[doc.tenant_id].append(normalize_text(f"{doc.title} {doc.text}"))
    entities: dict[str, list[str]] = defaultdict(list)
    for probe in generate_probes(docs, per_tenant=48, generic=()):
        if probe.kind == "entity" and probe.tenant_id is not None:
            entities[probe.tenant_id].append(probe.text)
    drafts: list[GoldenCase] = []
    tenants = sorted(texts)
    for tenant in tenants:
        others = [entities[t] for t in tenants if t != tenant]
        picked: list[str] = []
        for round_ in range(max((len(o) for o in others), default=0)):
            for queue in others:
                if len(picked) >= per_tenant or round_ >= len(queue):
                    continue
                entity = queue[round_]
                needle = normalize_text(entity)
                if needle and entity not in picked and not any(needle in t for t in texts[tenant]):
                    picked.append(entity)
        drafts += [
            GoldenCase(
                f"draft-unanswerable-{tenant}-{n}",
                TEMPLATE.format(entity=entity),
                None,
                MappingProxyType({}),
                tenant,
                tags=("unanswerable", "draft"),
            )
            for n, entity in enumerate(picked, start=1)
        ]
    return drafts
