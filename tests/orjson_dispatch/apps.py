"""The HTTP harness: endpoints returning a given value, apps built from them, requests to them.

Apps run in process behind httpx's ASGI transport; an exception in the app becomes the 500
answer Starlette's ServerErrorMiddleware sends, as under a server; the ``live_server`` fixture
runs an app on a real uvicorn server (``tests.live_server``) for what only shows on the wire
(HEAD, 204/304). The fixtures in
``conftest.py`` hand these to the tests; the hypothesis tests, which cannot take function-scoped
fixtures, call ``serve`` directly.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
from collections.abc import Callable
from typing import Any, Protocol, TypeVar, overload

import httpx
import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute
from orjson_dispatch._route import DispatchRoute
from starlette.types import ASGIApp

from orjson_dispatch import dispatch, dispatched_routes

Reply = TypeVar("Reply")

UNTYPED = object()
"""Marker: the endpoint has no return annotation."""


def make_endpoint(
    value: Any, *, annotation: Any = UNTYPED, is_async: bool = True
) -> Callable[[], Any]:
    """A fresh endpoint function returning ``value``, declared ``-> annotation``."""
    endpoint: Callable[[], Any]
    if is_async:

        async def async_endpoint() -> Any:
            return value

        endpoint = async_endpoint
    else:

        def sync_endpoint() -> Any:
            return value

        endpoint = sync_endpoint
    return declare(endpoint, annotation)


def declare(endpoint: Callable[..., Any], annotation: Any) -> Callable[..., Any]:
    """``endpoint``, its return annotation set to ``annotation`` (removed for ``UNTYPED``)."""
    if annotation is UNTYPED:
        del endpoint.__annotations__["return"]
    else:
        endpoint.__annotations__["return"] = annotation
    return endpoint


class Ask(Protocol):
    """The type of ``ask`` (the ``ask`` fixture)."""

    def __call__(
        self, app: ASGIApp, method: str, path: str, *, raise_errors: bool = False, **kwargs: Any
    ) -> httpx.Response: ...


LiveServer = Callable[[ASGIApp], str]
"""The type of the ``live_server`` fixture: run an app, get its base URL."""


def ask(
    app: ASGIApp, method: str, path: str, *, raise_errors: bool = False, **kwargs: Any
) -> httpx.Response:
    """Send one request to ``app`` in process and return the answer.

    Args:
        raise_errors: Raise the app's exception instead of answering Starlette's 500.
        kwargs: Passed to ``httpx.AsyncClient.request``.
    """

    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=raise_errors)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
            return await c.request(method, path, **kwargs)

    return asyncio.run(go())


@dataclasses.dataclass(frozen=True)
class Route:
    """One route of a parity app (``options`` may hold ``route_class_override=DispatchRoute``)."""

    path: str
    endpoint: Callable[..., Any]
    options: dict[str, Any] = dataclasses.field(default_factory=dict)


def serve(*routes: Route) -> dict[str, httpx.Response]:
    """Build a FastAPI app with ``routes``, GET each one once and return the responses by path."""
    app = FastAPI()
    for route in routes:
        app.router.add_api_route(route.path, route.endpoint, methods=["GET"], **route.options)
    paths = [route.path for route in routes]
    return dict(zip(paths, get_all(app, *paths), strict=True))


def serve_both(
    value: Any, annotation: Any = UNTYPED, **route: Any
) -> tuple[httpx.Response, httpx.Response]:
    """FastAPI's and dispatch's answers, in that order, for an endpoint returning ``value``."""
    twin = Twin()
    twin.add("GET", "", make_endpoint(value, annotation=annotation), **route)
    return twin.both("GET", "")


def get_all(app: ASGIApp, *paths: str) -> list[httpx.Response]:
    """GET each path in turn through one client; an exception in the app answers 500."""
    return asyncio.run(_get_all(app, paths))


async def _get_all(app: ASGIApp, paths: tuple[str, ...]) -> list[httpx.Response]:
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        return [await client.get(path) for path in paths]


Decorate = Callable[[Callable[..., Any]], Callable[..., Any]]
"""How an app builder wraps each endpoint: ``undecorated`` for FastAPI's side, ``dispatch``."""


def undecorated(endpoint: Callable[..., Any]) -> Callable[..., Any]:
    """``endpoint`` itself: the ``Decorate`` of FastAPI's side."""
    return endpoint


def built_both(build: Callable[[Decorate], ASGIApp]) -> tuple[ASGIApp, ASGIApp]:
    """The app ``build`` makes as FastAPI runs it, and the same app with ``@dispatch``."""
    return build(undecorated), build(dispatch)


BOTH_ENTRY_POINTS = pytest.mark.parametrize(
    "twin", [None, DispatchRoute], indirect=True, ids=["dispatch", "DispatchRoute"]
)
"""Runs a test once with ``@dispatch`` and once with ``DispatchRoute`` on the ``twin`` fixture."""


@dataclasses.dataclass
class Twin:
    """The comparison harness: one FastAPI app serving each endpoint twice, as FastAPI runs it
    and under orjson-dispatch.

    ``add`` registers an endpoint at ``/fastapi{path}`` and, decorated, at ``/dispatch{path}``
    (or, with ``route_class`` set, undecorated in a route of that class, e.g. ``DispatchRoute``);
    ``both`` requests the two and returns ``(fastapi, ours)``: in process by default, or by any
    other client (``via``: over a real uvicorn, or message by message through the ASGI
    interface, ``streams_harness.both``).
    """

    app: FastAPI = dataclasses.field(default_factory=FastAPI)
    route_class: type[APIRoute] | None = None

    def add(
        self, methods: str | list[str], path: str, endpoint: Callable[..., Any], **route: Any
    ) -> None:
        """Register ``endpoint`` plain and under ``@dispatch``, with the same route options."""
        methods = [methods] if isinstance(methods, str) else methods
        self.app.add_api_route(f"/fastapi{path}", endpoint, methods=methods, **route)
        if self.route_class is None:
            self.app.add_api_route(f"/dispatch{path}", dispatch(endpoint), methods=methods, **route)
        else:
            self.app.router.add_api_route(
                f"/dispatch{path}",
                endpoint,
                methods=methods,
                route_class_override=self.route_class,
                **route,
            )

    @overload
    def both(
        self, method: str, path: str, *, via: None = None, **kwargs: Any
    ) -> tuple[httpx.Response, httpx.Response]: ...

    @overload
    def both(
        self, method: str, path: str, *, via: Callable[..., Reply], **kwargs: Any
    ) -> tuple[Reply, Reply]: ...

    def both(
        self, method: str, path: str, *, via: Callable[..., Any] | None = None, **kwargs: Any
    ) -> tuple[Any, Any]:
        """The answers of ``/fastapi{path}`` and ``/dispatch{path}``, in that order.

        Args:
            via: ``via(method, url, **kwargs)`` sends one request, e.g. an ``httpx.Client``'s
                ``request`` on a live server; by default ``ask`` sends it to ``app`` in process.
            kwargs: Passed to ``via`` with each request.
        """
        send = via or functools.partial(ask, self.app)
        return send(method, f"/fastapi{path}", **kwargs), send(method, f"/dispatch{path}", **kwargs)

    def served(self, path: str) -> bool:
        """Whether orjson serves ``/dispatch{path}`` (``dispatched_routes``); never ``/fastapi``."""
        served = {key.split(" ")[1]: value for key, value in dispatched_routes(self.app).items()}
        assert not served[f"/fastapi{path}"]
        return served[f"/dispatch{path}"]
