"""Merging a partial run into earlier results; notes written for another run."""

from typing import Any

import pytest

from benchmarks.update import latest_run, merge, notes_are_current


def run(
    started_at: str, marker: str, profile: str = "full", pyperf: str = "2.11"
) -> dict[str, Any]:
    return {
        "profile": profile,
        "command": f"python -m benchmarks ({marker})",
        "started_at": started_at,
        "machine": {
            "git_commit": marker,
            "load_average_at_start": [0.1, 0.1, 0.1],
            "packages": {"fastapi": "1", "pyperf": pyperf},
        },
        "elapsed_s": 1.0,
        "suites": {"serialization": {"mark": marker}, "keepalive": {"mark": marker}},
        "inprocess": [{"mark": marker}],
        "connection_cost": {"mark": marker},
    }


def test_only_the_suites_run_again_are_replaced_and_the_update_is_recorded() -> None:
    earlier = run("2026-01-01 10:00 UTC", "first")
    later = run("2026-01-01 11:00 UTC", "second", pyperf="2.12")
    merged = merge(earlier, later, {"keepalive", "connections"})
    assert merged["suites"]["serialization"] == {"mark": "first"}
    assert merged["inprocess"] == [{"mark": "first"}]
    assert merged["suites"]["keepalive"] == {"mark": "second"}
    assert merged["connection_cost"] == {"mark": "second"}
    assert merged["command"] == "python -m benchmarks (first)"
    (update,) = merged["updates"]
    assert update["suites"] == ["connections", "keepalive"]
    assert update["git_commit"] == "second"
    assert update["packages"] == {"pyperf": "2.12"}  # only what differs from the earlier run
    assert earlier["suites"]["keepalive"] == {"mark": "first"}  # the input is not changed


def test_profiles_do_not_mix() -> None:
    with pytest.raises(ValueError, match="cannot update full results with a quick run"):
        merge(run("a", "x"), run("b", "y", profile="quick"), {"keepalive"})


def test_notes_must_name_the_latest_run() -> None:
    merged = merge(
        run("2026-01-01 10:00 UTC", "1"), run("2026-01-01 11:00 UTC", "2"), {"inprocess"}
    )
    assert latest_run(merged) == "2026-01-01 11:00 UTC"
    assert notes_are_current("Full run of 2026-01-01 11:00 UTC: ...", merged)
    assert not notes_are_current("Full run of 2026-01-01 10:00 UTC: ...", merged)


def test_an_update_measured_again_is_no_longer_listed() -> None:
    first = merge(run("t0", "0"), run("t1", "1"), {"connections", "keepalive"})
    second = merge(first, run("t2", "2"), {"connections"})
    assert [(u["suites"], u["started_at"]) for u in second["updates"]] == [
        (["keepalive"], "t1"),
        (["connections"], "t2"),
    ]
    third = merge(second, run("t3", "3"), {"keepalive", "connections"})
    assert [u["started_at"] for u in third["updates"]] == ["t3"]
