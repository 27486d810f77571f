"""The interleaving of the runs, spreads and paired per-round ratios."""

from collections import Counter

import pytest

from benchmarks.runner import Cell, interleaved
from benchmarks.summary import Spread, paired_ratios

LABELS = {"x": "X", "y": "Y", "z": "Z"}


def runs(cells: list[str], rounds: int) -> list[tuple[int, str, str]]:
    """The runs ``interleaved`` makes, in order: (round, cell, configuration)."""
    found = interleaved("test", LABELS, cells, rounds, lambda cell, config: ({}, ""))
    return [(s["round"], s["cell"], s["config"]) for s in found["samples"]]


def test_every_config_runs_once_per_cell_and_round() -> None:
    made = runs(["a@c1", "b@c32", "b@c32+close"], rounds=3)
    assert len(made) == 27
    assert set(Counter(made).values()) == {1}


def test_rounds_run_in_order_and_configs_of_a_cell_back_to_back() -> None:
    made = runs(["a", "b"], rounds=2)
    assert [number for number, _, _ in made] == [0] * 6 + [1] * 6
    assert [cell for _, cell, _ in made[:6]] == ["a", "a", "a", "b", "b", "b"]


def test_config_order_rotates_each_round() -> None:
    made = runs(["a"], rounds=4)
    orders = [[config for number, _, config in made if number == n] for n in range(4)]
    assert orders == [["x", "y", "z"], ["y", "z", "x"], ["z", "x", "y"], ["x", "y", "z"]]


def test_each_sample_names_its_round_cell_and_configuration() -> None:
    found = interleaved("test", LABELS, ["a"], 2, lambda cell, config: ({"rps": 1.0}, ""))
    assert found["samples"][0] == {"round": 0, "cell": "a", "config": "x", "rps": 1.0}
    assert found["configs"][1] == {"name": "y", "label": "Y"}
    assert found["cells"] == [{"key": "a"}]


def test_cell_keys_name_body_concurrency_and_churn() -> None:
    assert Cell("tokens-65536", 32).key == "tokens-65536@c32"
    assert Cell("plain", 32, close=True).key == "plain@c32+close"


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
