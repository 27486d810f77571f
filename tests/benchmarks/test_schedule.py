"""The interleaving order of the load runs."""

from collections import Counter

from benchmarks.schedule import Cell, interleave


def test_every_config_runs_once_per_cell_and_round() -> None:
    cells = [Cell("a", 1), Cell("b", 32), Cell("b", 32, close=True)]
    runs = interleave(cells, ["x", "y", "z"], rounds=3)
    assert len(runs) == 27
    assert set(Counter((r.round, r.cell, r.config) for r in runs).values()) == {1}


def test_rounds_run_in_order_and_configs_of_a_cell_back_to_back() -> None:
    runs = interleave([Cell("a", 1), Cell("b", 1)], ["x", "y", "z"], rounds=2)
    assert [r.round for r in runs] == [0] * 6 + [1] * 6
    assert [r.cell.body for r in runs[:6]] == ["a", "a", "a", "b", "b", "b"]


def test_config_order_rotates_each_round() -> None:
    runs = interleave([Cell("a", 1)], ["x", "y", "z"], rounds=4)
    orders = [[r.config for r in runs if r.round == n] for n in range(4)]
    assert orders == [["x", "y", "z"], ["y", "z", "x"], ["z", "x", "y"], ["x", "y", "z"]]


def test_cell_keys_name_body_concurrency_and_churn() -> None:
    assert Cell("tokens-65536", 32).key == "tokens-65536@c32"
    assert Cell("plain", 32, close=True, duration_s=1).key == "plain@c32+close"
