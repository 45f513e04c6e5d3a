"""Retrieval metrics: pure per-query functions, a vectorised bulk engine, and the name grammar."""

from ragaudit.metrics.names import DEFAULT_METRICS, MetricSpec, parse_metric, parse_metrics
from ragaudit.metrics.pure import (
    average_precision,
    dcg_at_k,
    hit_at_k,
    ndcg_at_k,
    precision_at_k,
    r_precision,
    recall_at_k,
    reciprocal_rank,
)

__all__ = [
    "DEFAULT_METRICS",
    "MetricSpec",
    "average_precision",
    "dcg_at_k",
    "hit_at_k",
    "ndcg_at_k",
    "parse_metric",
    "parse_metrics",
    "precision_at_k",
    "r_precision",
    "recall_at_k",
    "reciprocal_rank",
]
