"""The figures of FastAPI's suite runs, printed at the end of the session."""

from __future__ import annotations

from typing import Any

import pytest

SUMMARY = pytest.StashKey[list[str]]()


@pytest.fixture
def summary(request: pytest.FixtureRequest) -> list[str]:
    """Lines to print in the terminal summary."""
    return request.config.stash.setdefault(SUMMARY, [])


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    lines = config.stash.get(SUMMARY, [])
    if lines:
        terminalreporter.section("FastAPI's own test suite through orjson-dispatch")
        for line in lines:
            terminalreporter.write_line(line)
