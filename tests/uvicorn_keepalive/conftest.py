"""Every keepalive test starts from a fresh process-wide state and a clean environment."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from uvicorn_keepalive._settings import ENVIRONMENT_VARIABLES

import uvicorn_keepalive
from uvicorn_keepalive import _listener, _log, _protocol, _socket

LOGGER = "uvicorn.error.keepalive"


@pytest.fixture(autouse=True)
def fresh_state(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Forget what this process cached: plans, warnings, classes, settings, listeners."""
    for variable in ENVIRONMENT_VARIABLES.values():
        monkeypatch.delenv(variable, raising=False)
    for cls in (_protocol.Protocol, _protocol.H11Protocol):
        monkeypatch.setattr(cls, "keepalive", None)
        monkeypatch.setattr(cls, "_keepalive_plan", None)
    for name in ("Protocol", "H11Protocol"):
        # The package caches them once looked up; the lookup is the startup hook.
        monkeypatch.delitem(vars(uvicorn_keepalive), name, raising=False)
    # uvicorn's default logging config turns propagation off; caplog listens at the root.
    monkeypatch.setattr(logging.getLogger("uvicorn"), "propagate", True)
    _clear_caches()
    yield
    _clear_caches()


def _clear_caches() -> None:
    _socket.plan_for.cache_clear()
    _protocol.configured_class.cache_clear()
    _log._warned.clear()
    _log._announced.clear()
    _listener._servers.clear()
