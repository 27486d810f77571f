"""Every keepalive test starts from an environment without UVICORN_KEEPALIVE_* variables.

The package reads the environment once per process; the `environ` fixture sets variables and
has it read again, as a new process would.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator

import pytest

from uvicorn_keepalive import _settings, _socket

LOGGER = "uvicorn.error.keepalive"


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for variable in os.environ:
        if variable.startswith("UVICORN_KEEPALIVE_"):
            monkeypatch.delenv(variable)
    _settings.environment.cache_clear()
    _socket.plan.cache_clear()  # some tests hide or fake socket's constants
    yield
    _settings.environment.cache_clear()
    _socket.plan.cache_clear()


@pytest.fixture
def environ(monkeypatch: pytest.MonkeyPatch) -> Callable[..., None]:
    """Set UVICORN_KEEPALIVE_* variables by keyword, read again at the next use."""

    def setenv(**variables: str) -> None:
        for name, value in variables.items():
            monkeypatch.setenv(name, value)
        _settings.environment.cache_clear()

    return setenv


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """caplog, listening on the package's logger itself (uvicorn's default logging config, set
    up by any in-process server with it, stops propagation at "uvicorn"), and to it alone: its
    handler also sits on the root logger, where others' records arrive once another library's
    logging configuration (Litestar's, in the benchmark apps) lets them."""
    logger = logging.getLogger(LOGGER)
    logger.addHandler(caplog.handler)
    package_only = logging.Filter(LOGGER)
    caplog.handler.addFilter(package_only)
    propagate, logger.propagate = logger.propagate, False
    yield caplog
    logger.propagate = propagate
    caplog.handler.removeFilter(package_only)
    logger.removeHandler(caplog.handler)
