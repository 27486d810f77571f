"""The hypothesis profiles, and the figures of FastAPI's suite runs, for every test.

The hypothesis profiles (``hypothesis_runs.py``) are registered and loaded here, once for the
whole tree. The long tests run first (``pytest_collection_modifyitems``).

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

# The uvicorn floor environment (tests/uvicorn_keepalive/test_floor.py) runs server tests
# without hypothesis, which only the property tests need.
if importlib.util.find_spec("hypothesis") is not None:
    from tests.hypothesis_runs import register_profiles

    register_profiles()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Put the long tests (marked ``slow`` or ``netns``) first, the others in their order: with
    pytest-xdist, a long test left for the end keeps one worker busy while the other has nothing
    left to run."""
    items.sort(key=lambda item: not any(map(item.get_closest_marker, ("slow", "netns"))))


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
