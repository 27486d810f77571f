"""Statistics of the wrk rounds: spreads and paired ratios."""

import pytest

from benchmarks.stats import Spread, paired_ratios


def test_spread_is_median_min_max_and_count() -> None:
    assert Spread.of([3.0, 1.0, 10.0, 2.0, 4.0]) == Spread(3.0, 1.0, 10.0, 5)


def test_spread_of_nothing_is_an_error() -> None:
    with pytest.raises(ValueError, match="no measurements"):
        Spread.of([])


def test_paired_ratios_divide_round_by_round() -> None:
    # Round 1 ran on a slower machine for both: the pairing cancels it.
    ratios = paired_ratios({0: 200.0, 1: 100.0, 2: 220.0}, {0: 100.0, 1: 50.0, 2: 100.0})
    assert ratios == Spread(2.0, 2.0, 2.2, 3)


def test_paired_ratios_use_only_rounds_both_measured_and_nonzero() -> None:
    ratios = paired_ratios({0: 10.0, 1: 30.0, 2: 5.0}, {0: 5.0, 2: 0.0, 3: 1.0})
    assert ratios == Spread(2.0, 2.0, 2.0, 1)
    assert paired_ratios({0: 1.0}, {1: 1.0}) is None
