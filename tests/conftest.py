"""The hypothesis profiles, the garbage collector's settings and the figures of FastAPI's suite
runs, for every test.

The hypothesis profiles (``hypothesis_runs.py``) are registered and loaded here, once for the
whole tree. The long tests run first, dealt among pytest-xdist's workers
(``pytest_collection_modifyitems``).

The figures of FastAPI's suite runs (tests/fastapi_suite) are printed at the end of the session.

Each test's lines travel in its teardown report (`user_properties`), so that they reach the
terminal summary of the process that prints it, with pytest-xdist's workers too. The hooks live
in this top-level conftest because the xdist controller, which prints the summary, loads only
the conftests of its arguments, not those of subdirectories.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from typing import Any

import pytest

# The garbage collector's full collections are put off (gc_plugin.py, shared with FastAPI's
# suite runs).
pytest_plugins = ["tests.fastapi_suite.gc_plugin"]

# The uvicorn floor environment (tests/uvicorn_keepalive/test_floor.py) runs server tests
# without hypothesis, which only the property tests need.
if importlib.util.find_spec("hypothesis") is not None:
    from tests.hypothesis_runs import register_profiles

    register_profiles()


#: A property test asking for this many examples or more is long (the largest take 10-15 s of
#: CPU each): left among the others, one of them could start when the others have all ended.
LONG_PROPERTY_TEST = 300


def is_long(item: pytest.Item) -> bool:
    """Whether ``item`` is marked ``slow`` or ``netns``, or is a long property test."""
    if any(map(item.get_closest_marker, ("slow", "netns"))):
        return True
    # The settings @settings attaches (hypothesis has no public accessor for them).
    chosen = getattr(getattr(item, "obj", None), "_hypothesis_internal_use_settings", None)
    return getattr(chosen, "max_examples", 0) >= LONG_PROPERTY_TEST


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Start each pytest-xdist worker on long tests (``is_long``), dealt in turn.

    A long test left for the end keeps one worker busy while the others have nothing left to
    run. ``--dist worksteal`` first hands each worker an equal run of this order, and a worker
    keeps the test after the one it runs (no other can take it): so each run starts with every
    n-th long test, then other tests in their order, and no long test waits behind another on
    one worker while the others are free. Without workers, the long tests simply come first.
    """
    workers = int(getattr(config, "workerinput", {}).get("workercount", 1))
    long_items = {item for item in items if is_long(item)}
    long = [item for item in items if item in long_items]
    others = [item for item in items if item not in long_items]
    ordered: list[pytest.Item] = []
    for worker in range(workers):
        # worksteal's first split: each worker an equal share of what the earlier ones left.
        share = (len(items) - len(ordered)) // (workers - worker)
        run = long[worker::workers]
        ordered += run + others[: max(share - len(run), 0)]
        del others[: max(share - len(run), 0)]
    items[:] = ordered + others


_PROPERTY = "fastapi-suite-summary"
_LINES: list[str] = []


@pytest.fixture
def summary(request: pytest.FixtureRequest) -> Iterator[list[str]]:
    """Lines to print in the terminal summary (FastAPI's suite runs)."""
    lines: list[str] = []
    yield lines
    request.node.user_properties.extend((_PROPERTY, line) for line in lines)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "teardown":
        _LINES.extend(str(value) for name, value in report.user_properties if name == _PROPERTY)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _LINES:
        terminalreporter.section("FastAPI's own test suite through orjson-dispatch")
        for line in _LINES:
            terminalreporter.write_line(line)
