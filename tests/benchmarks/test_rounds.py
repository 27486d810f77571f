"""The interleaving of the runs, spreads and paired per-round ratios."""

from collections import Counter

import pytest

from benchmarks.runner import Cell, interleave
from benchmarks.summary import Spread, paired_ratios


def test_every_config_runs_once_per_cell_and_round() -> None:
    runs = interleave(["a@c1", "b@c32", "b@c32+close"], ["x", "y", "z"], rounds=3)
    assert len(runs) == 27
    assert set(Counter(runs).values()) == {1}


def test_rounds_run_in_order_and_configs_of_a_cell_back_to_back() -> None:
    runs = interleave(["a", "b"], ["x", "y", "z"], rounds=2)
    assert [number for number, _, _ in runs] == [0] * 6 + [1] * 6
    assert [cell for _, cell, _ in runs[:6]] == ["a", "a", "a", "b", "b", "b"]


def test_config_order_rotates_each_round() -> None:
    runs = interleave(["a"], ["x", "y", "z"], rounds=4)
    orders = [[config for number, _, config in runs if number == n] for n in range(4)]
    assert orders == [["x", "y", "z"], ["y", "z", "x"], ["z", "x", "y"], ["x", "y", "z"]]


def test_cell_keys_name_body_concurrency_and_churn() -> None:
    assert Cell("tokens-65536", 32).key == "tokens-65536@c32"
    assert Cell("plain", 32, close=True, duration_s=1).key == "plain@c32+close"


def test_spread_is_median_min_and_max() -> None:
    assert Spread.of([3.0, 1.0, 10.0, 2.0, 4.0]) == Spread(3.0, 1.0, 10.0)
    with pytest.raises(ValueError, match="no measurements"):
        Spread.of([])


def test_paired_ratios_divide_round_by_round() -> None:
    # Round 1 ran on a slower machine for both: the pairing cancels it.
    ratios = paired_ratios({0: 200.0, 1: 100.0, 2: 220.0}, {0: 100.0, 1: 50.0, 2: 100.0})
    assert ratios == Spread(2.0, 2.0, 2.2)


def test_paired_ratios_use_only_rounds_both_measured_and_nonzero() -> None:
    ratios = paired_ratios({0: 10.0, 1: 30.0, 2: 5.0}, {0: 5.0, 2: 0.0, 3: 1.0})
    assert ratios == Spread(2.0, 2.0, 2.0)
    assert paired_ratios({0: 1.0}, {1: 1.0}) is None
