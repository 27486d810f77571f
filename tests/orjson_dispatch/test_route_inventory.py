"""``dispatched_routes`` reports what orjson actually serves, route by route.

Every endpoint returns (or yields) a value that only orjson writes as ``"x":null``: an untyped
NaN (FastAPI's ``json.dumps(allow_nan=False)`` fails) or a model written with
``ser_json_inf_nan="constants"`` (pydantic writes ``NaN``). Each route is served, and whether
its body holds ``"x":null`` is compared with what ``dispatched_routes`` says of it, for every
kind of route both entry points meet: plain, under ``dispatch``, on a ``DispatchRoute``
router, under a response class that renders something else, declaring a Response, and
generator endpoints.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Annotated, Any

from fastapi import APIRouter, FastAPI, WebSocket
from fastapi.responses import HTMLResponse, Response
from orjson_dispatch._route import DispatchRoute
from pydantic import BaseModel, ConfigDict
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Route, WebSocketRoute

from orjson_dispatch import dispatch, dispatched_routes
from tests.orjson_dispatch.apps import get_all
from tests.orjson_dispatch.versions import FASTAPI_STREAMS


class Reading(BaseModel):
    """A model pydantic writes NaN for (``NaN``, not JSON), and orjson_dispatch writes null."""

    model_config = ConfigDict(ser_json_inf_nan="constants")
    x: float


NAN = float("nan")


async def untyped():  # type: ignore[no-untyped-def]
    return {"x": NAN}


async def typed() -> Reading:
    return Reading(x=NAN)


async def response() -> Response:
    return {"x": NAN}  # type: ignore[return-value] # a value FastAPI encodes: so does orjson


async def annotated_response() -> Annotated[Response, "or a value"]:
    return {"x": NAN}  # type: ignore[return-value]


async def items() -> AsyncIterator[Reading]:
    yield Reading(x=NAN)


class Items:
    """A callable object whose ``__call__`` is an async generator: a generator endpoint."""

    async def __call__(self) -> AsyncIterator[Reading]:
        yield Reading(x=NAN)


Endpoint = tuple[str, Callable[..., Any], dict[str, Any]]

ENDPOINTS: list[Endpoint] = [
    ("/untyped", untyped, {}),
    ("/typed", typed, {}),
    ("/dispatch-untyped", dispatch(untyped), {}),
    ("/dispatch-typed", dispatch(typed), {}),
    ("/html-untyped", untyped, {"response_class": HTMLResponse}),
    ("/html-dispatch-untyped", dispatch(untyped), {"response_class": HTMLResponse}),
    ("/html-dispatch-typed", dispatch(typed), {"response_class": HTMLResponse}),
    ("/response", response, {}),
    ("/dispatch-response", dispatch(response), {}),
    ("/annotated-response", annotated_response, {"response_model": None}),
    ("/dispatch-annotated-response", dispatch(annotated_response), {"response_model": None}),
]
if FASTAPI_STREAMS:
    ENDPOINTS += [
        ("/items", items, {}),
        ("/dispatch-items", dispatch(items), {}),
        ("/dispatch-items-object", dispatch(Items()), {}),
    ]


def orjson_wrote(body: bytes) -> bool:
    return b'"x":null' in body


def assert_reported_as_served(app: Any, paths: list[str]) -> None:
    answers = get_all(app, *paths)
    observed = {
        path: orjson_wrote(answer.content) for path, answer in zip(paths, answers, strict=True)
    }
    reported = {route.split(" ")[1]: served for route, served in dispatched_routes(app).items()}
    assert {route: reported[route] for route in observed} == observed
    assert any(observed.values()), observed
    assert not all(observed.values()), observed


def test_dispatched_routes_agrees_with_what_orjson_writes_on_each_route() -> None:
    plain = APIRouter()
    ours = APIRouter(route_class=DispatchRoute)
    for path, endpoint, options in ENDPOINTS:
        plain.add_api_route(path, endpoint, methods=["GET"], **options)
        ours.add_api_route(path, endpoint, methods=["GET"], **options)
    app = FastAPI()
    app.include_router(plain, prefix="/plain")
    app.include_router(ours, prefix="/route")
    paths = [f"{prefix}{path}" for prefix in ("/plain", "/route") for path, _, _ in ENDPOINTS]
    assert_reported_as_served(app, paths)


def test_dispatched_routes_agrees_on_a_starlette_app() -> None:
    async def values(request: Request):  # type: ignore[no-untyped-def]
        return {"x": NAN}

    async def page(request: Request) -> Response:
        return {"x": NAN}  # type: ignore[return-value]

    app = Starlette(
        routes=[
            Route("/values", dispatch(values)),
            Route("/page", dispatch(page)),
            Route("/plain", values),
        ]
    )
    assert_reported_as_served(app, ["/values", "/page", "/plain"])


def test_websocket_routes_are_not_listed() -> None:
    """Only HTTP routes answer with returned values: a websocket route has no methods."""

    async def socket(websocket: WebSocket) -> None:
        await websocket.close()

    app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
    app.router.route_class = DispatchRoute
    app.add_api_route("/values", lambda: {"x": 1})
    app.add_api_websocket_route("/socket", socket)
    app.mount("/sub", Starlette(routes=[WebSocketRoute("/socket", socket)]))
    assert dispatched_routes(app) == {"GET /values": True}
