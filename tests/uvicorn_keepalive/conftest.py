"""Every keepalive test starts from an environment without UVICORN_KEEPALIVE_* variables."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator

import pytest

LOGGER = "uvicorn.error.keepalive"


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in os.environ:
        if variable.startswith("UVICORN_KEEPALIVE_"):
            monkeypatch.delenv(variable)


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """caplog, listening on the package's logger itself: uvicorn's default logging config
    (set up by any in-process server with it) stops propagation at "uvicorn"."""
    logger = logging.getLogger(LOGGER)
    logger.addHandler(caplog.handler)
    propagate, logger.propagate = logger.propagate, False
    yield caplog
    logger.propagate = propagate
    logger.removeHandler(caplog.handler)
