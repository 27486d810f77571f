"""Hypothesis profiles and the HTTP fixtures of the orjson_dispatch tests.

``HYPOTHESIS_PROFILE=thorough`` multiplies every parity test's example count by ten and draws
new examples on every run (for a long local run that explores); the default profile is what CI
runs, derandomized so that a run's outcome depends only on the code (every run draws the same
examples); ``floor`` takes a quarter of the examples, also derandomized, for the run on the
lowest supported versions (``scripts/test-versions lowest``). Example counts are
per test (see ``tests.orjson_dispatch.strategies.examples``); the profiles set what every test
shares.

Fixtures (the harness itself is in ``apps.py``):

* ``ask``: send one request to an ASGI app in process;
* ``twin``: a fresh FastAPI app serving each endpoint plain and under ``@dispatch``;
* ``live_server``: run an app on a real uvicorn server, stopped when the test ends;
* ``fresh_endpoint_context``: FastAPI's cache of endpoint locations, empty for the test.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import fastapi.routing
import pytest
from hypothesis import HealthCheck, settings

from tests.orjson_dispatch.apps import Ask, LiveServer, Twin, uvicorn_server
from tests.orjson_dispatch.apps import ask as ask_in_process

_SHARED = {
    "deadline": None,
    # Generated model classes and whole FastAPI apps per example are slow and large by design.
    "suppress_health_check": [
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
        HealthCheck.large_base_example,
    ],
    "print_blob": True,
}
settings.register_profile("default", **_SHARED, derandomize=True)  # type: ignore[arg-type]
settings.register_profile("thorough", **_SHARED)  # type: ignore[arg-type]
settings.register_profile("floor", **_SHARED, derandomize=True)  # type: ignore[arg-type]
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture
def fresh_endpoint_context(monkeypatch: pytest.MonkeyPatch) -> None:
    """Empty FastAPI's cache of endpoint locations (file, line, function) for this test.

    FastAPI (0.124+, ``fastapi.routing._extract_endpoint_context``) caches them by ``id()`` of
    the endpoint, and CPython reuses the id of a freed function: an endpoint of an earlier test
    would lend its location to this test's.
    """
    monkeypatch.setattr(fastapi.routing, "_endpoint_context_cache", {}, raising=False)


@pytest.fixture
def ask() -> Ask:
    """``ask(app, method, path, *, raise_errors=False, **httpx_kwargs) -> httpx.Response``."""
    return ask_in_process


@pytest.fixture
def twin(request: pytest.FixtureRequest) -> Twin:
    """A fresh app: ``twin.add(method, path, endpoint, **route)``, ``twin.both(method, path)``.

    Parametrized indirectly, the parameter is the route class of the dispatched routes (None:
    ``@dispatch``).
    """
    return Twin(route_class=getattr(request, "param", None))


@pytest.fixture
def live_server() -> Iterator[LiveServer]:
    """``live_server(app) -> base URL`` of a real uvicorn server on a free loopback port."""
    with contextlib.ExitStack() as servers:
        yield lambda app: servers.enter_context(uvicorn_server(app))
