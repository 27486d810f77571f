"""How long runs last and when a run is skipped."""

from benchmarks.runner import Cell, LoadSettings

SETTINGS = LoadSettings(
    rounds=3, duration_s=2, max_duration_s=6, min_requests=15, drain_budget_s=15
)
ONE = Cell("b", 1)


def test_fast_configurations_run_the_shortest_duration() -> None:
    assert SETTINGS.duration_for(ONE, 0.001) == 2


def test_slow_configurations_run_long_enough_for_min_requests_up_to_the_cap() -> None:
    assert SETTINGS.duration_for(ONE, 0.2) == 3  # 15 x 0.2 s
    assert SETTINGS.duration_for(ONE, 0.8) == 6


def test_runs_whose_leftover_work_exceeds_the_budget_are_skipped() -> None:
    assert SETTINGS.duration_for(Cell("b", 32), 0.2) == 3  # 31 x 0.2 s = 6.2 s
    reason = SETTINGS.duration_for(Cell("b", 256), 0.2)  # 255 x 0.2 s = 51 s
    assert isinstance(reason, str)
    assert "~51 s" in reason
    assert "budget 15 s" in reason


def test_timeout_outlasts_any_allowed_queue() -> None:
    assert SETTINGS.timeout_s > SETTINGS.drain_budget_s + SETTINGS.max_duration_s
