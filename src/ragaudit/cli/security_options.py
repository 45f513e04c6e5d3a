"""Tenant-isolation options shared by the commands that see returned chunks (``eval``, ``bench``,
``audit-tenants``): shared tenants, and (``audit-tenants``) how unattributed chunks are judged."""

from __future__ import annotations

import argparse

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
