from __future__ import annotations

import pytest

from ragaudit.errors import MetricNameError
from ragaudit.metrics.measure import Measure
from ragaudit.metrics.measures import MEASURES
from ragaudit.metrics.names import EXAMPLES, MetricSpec, parse_metric, parse_metrics


@pytest.mark.parametrize("name", [*EXAMPLES, "nDCG", "R@5", "P@1", "Hit@100", "MAP@10"])
def test_canonical_names_round_trip(name: str) -> None:
    assert parse_metric(name).name == name
    assert str(parse_metric(name)) == name


@pytest.mark.parametrize(
    ("alias", "canonical"),
    [
        ("ndcg@10", "nDCG@10"),
        ("recall@5", "R@5"),
        ("precision@5", "P@5"),
        ("success@3", "Hit@3"),
        ("map@100", "MAP@100"),
        ("mrr", "MRR"),
        ("r-prec", "RPrec"),
        (" NDCG@10 ", "nDCG@10"),
    ],
)
def test_aliases_print_canonically(alias: str, canonical: str) -> None:
    assert parse_metric(alias).name == canonical


def test_unknown_name_lists_valid_ones_and_suggests_the_closest() -> None:
    with pytest.raises(MetricNameError) as info:
        parse_metric("nDGC@5")
    message = str(info.value)
    assert "did you mean 'nDCG@5'" in message
    assert all(example in message for example in EXAMPLES)


@pytest.mark.parametrize(
    ("bad", "hint"),
    [
        ("R", "needs a cut-off"),
        ("P@0", "positive integer"),
        ("nDCG@x", "positive integer"),
        ("RPrec@5", "takes no cut-off"),
        ("", "unknown metric"),
    ],
)
def test_malformed_names_explain_the_fix(bad: str, hint: str) -> None:
    with pytest.raises(MetricNameError, match=hint):
        parse_metric(bad)


def test_metric_name_error_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="unknown metric"):
        parse_metric("bogus")


def test_parse_metrics_keeps_order_and_drops_repeats() -> None:
    assert parse_metrics("nDCG@10, R@5,ndcg@10,,MRR") == (
        MetricSpec("nDCG", 10),
        MetricSpec("R", 5),
        MetricSpec("MRR", None),
    )
    with pytest.raises(MetricNameError, match="no metric"):
        parse_metrics(" , ")


@pytest.mark.parametrize("measure", MEASURES, ids=lambda m: m.family)
def test_every_registered_family_parses_its_examples_and_spellings(measure: Measure) -> None:
    assert measure.examples and all(parse_metric(e).name == e for e in measure.examples)
    k = "" if measure.cutoff == "none" else "@7"
    for spelling in measure.spellings:
        assert parse_metric(spelling + k).family == measure.family
    assert set(measure.examples) <= set(EXAMPLES)


def test_unknown_name_message_is_built_from_the_registered_examples() -> None:
    with pytest.raises(MetricNameError) as info:
        parse_metric("nDGC@5")
    assert str(info.value) == (
        "unknown metric 'nDGC@5'; did you mean 'nDCG@5'?; valid metrics: "
        + ", ".join(EXAMPLES)
        + " (any positive cut-off after @)"
    )
    assert EXAMPLES[:9] == ("nDCG@10", "R@100", "P@5", "MRR", "MRR@10", "MAP", "MAP@100", "Hit@5", "RPrec")
