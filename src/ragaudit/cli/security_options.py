"""Tenant-isolation options shared by the commands that see returned chunks (``eval``, ``bench``,
``audit-tenants``): shared tenants, and (``eval``, ``audit-tenants``) semantic attribution."""

from __future__ import annotations

import argparse
from typing import Any

SHARED_HELP = (
    "a tenant whose documents may be returned to every tenant (e.g. a public help centre): its chunks "
    "are counted as shared, not as leaks; any other tenant's chunk still is one (repeatable)"
)


def add_shared_tenant_option(parser: argparse.ArgumentParser) -> None:
    """``--shared-tenant NAME`` (repeatable)."""
    parser.add_argument(
        "--shared-tenant",
        action="append",
        default=[],
        metavar="NAME",
        dest="shared_tenant",
        help=SHARED_HELP,
    )


def shared_tenants(args: argparse.Namespace) -> frozenset[str]:
    """The ``--shared-tenant`` names given (none: an empty set)."""
    return frozenset(name.strip() for name in getattr(args, "shared_tenant", None) or () if name.strip())


def add_attribute_options(parser: argparse.ArgumentParser) -> None:
    """``--attribute exact|semantic`` and ``--semantic-margin``."""
    parser.add_argument(
        "--attribute",
        choices=("exact", "semantic"),
        default="exact",
        help="exact (default): ids, shingles, titles, canaries; semantic: also place rewritten text "
        "(summaries, paraphrased abstracts) exact attribution leaves unattributed at its nearest corpus "
        "document with the dense embedder (needs the dense extra), reported apart",
    )
    parser.add_argument(
        "--semantic-margin",
        type=float,
        default=0.05,
        metavar="COSINE",
        help="--attribute semantic: the cosine lead the nearest document needs over the nearest document "
        "of another tenant (default 0.05)",
    )


def semantic_attributor(args: argparse.Namespace, documents: Any) -> Any:
    """The :class:`~ragaudit.security.semantic_attribution.SemanticAttributor` ``--attribute semantic``
    asks for over ``documents`` (``None`` for ``exact``); the embedder is loaded only then."""
    if getattr(args, "attribute", "exact") != "semantic":
        return None
    from ragaudit.cli.common import check_share
    from ragaudit.retrieval.embedder import Embedder
    from ragaudit.retrieval.embedding_cache import EmbeddingCache
    from ragaudit.security.semantic_attribution import SemanticAttributor

    check_share("--semantic-margin", args.semantic_margin)
    # through the embedding cache (as dense retrieval): the next run over the same corpus, or that sees
    # the same rewritten texts, embeds none of them again
    encoder = EmbeddingCache(Embedder(), progress=False)
    return SemanticAttributor.build(documents, margin=args.semantic_margin, encoder=encoder)
