"""Fixtures of the orjson_dispatch tests (the harness itself is in ``apps.py``).

* ``ask``: send one request to an ASGI app in process;
* ``twin``: a fresh FastAPI app serving each endpoint plain and under ``@dispatch``;
* ``route_twin``: the same, each endpoint served by an ``APIRoute`` and by a ``DispatchRoute``;
* ``live_server``: run an app on a real uvicorn server, stopped when the test ends;
* ``live``: one real uvicorn server per configuration (``live_streams.SERVERS``) for a module;
* ``fresh_endpoint_context``: FastAPI's cache of endpoint locations, empty for the test.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import fastapi.routing
import pytest
from orjson_dispatch._route import DispatchRoute

from tests.live_server import running_server
from tests.orjson_dispatch.apps import Ask, LiveServer, Twin
from tests.orjson_dispatch.apps import ask as ask_in_process
from tests.orjson_dispatch.live_streams import SERVERS, LiveApp


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
def route_twin() -> Twin:
    """A fresh app serving each endpoint by an ``APIRoute`` and by a ``DispatchRoute``."""
    return Twin(route_class=DispatchRoute)


@pytest.fixture
def live_server() -> Iterator[LiveServer]:
    """``live_server(app) -> base URL`` of a real uvicorn server on a free loopback port."""
    with contextlib.ExitStack() as servers:
        yield lambda app: servers.enter_context(running_server(app)).url


@pytest.fixture(scope="module", params=SERVERS, ids=["-".join(server) for server in SERVERS])
def live(request: pytest.FixtureRequest) -> Iterator[LiveApp]:
    """A running uvicorn server (httptools or h11, asyncio or uvloop); ``live.add`` routes."""
    with LiveApp(*request.param) as app:
        yield app
