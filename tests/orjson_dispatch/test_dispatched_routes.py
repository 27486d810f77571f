"""``dispatched_routes`` tells which routes of an app are served with orjson, through inclusions."""

from __future__ import annotations

from collections.abc import AsyncIterator

from fastapi import APIRouter, FastAPI
from fastapi.responses import HTMLResponse, PlainTextResponse
from orjson_dispatch._route import DispatchRoute
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Route

from orjson_dispatch import dispatch, dispatched_routes
from tests.orjson_dispatch.versions import FASTAPI_STREAMS


async def values() -> dict[str, int]:
    return {"a": 1}


async def items() -> AsyncIterator[int]:
    yield 1


def test_routes_are_listed_with_prefixes_and_mounts_each_with_its_serializer() -> None:
    inner = APIRouter(route_class=DispatchRoute)
    inner.add_api_route("/deep", values, methods=["POST"])
    outer = APIRouter(route_class=DispatchRoute)
    outer.add_api_route("/json", values)
    outer.add_api_route("/text", values, response_class=PlainTextResponse)
    outer.include_router(inner, prefix="/inner")
    app = FastAPI(openapi_url=None)
    app.add_api_route("/plain", values)
    app.add_api_route("/decorated", dispatch(values))
    app.add_api_route("/decorated-html", dispatch(values), response_class=HTMLResponse)
    if FASTAPI_STREAMS:
        app.add_api_route("/decorated-stream", dispatch(items))
        app.router.add_api_route("/stream", items, route_class_override=DispatchRoute)
    app.include_router(outer, prefix="/v1")
    # Included a second time, as plain text: each inclusion is served with its own settings
    # (DispatchRoute leaves routes under a response class that does not render JSON to FastAPI).
    app.include_router(outer, prefix="/v2", default_response_class=PlainTextResponse)

    async def hello(request: Request) -> dict[str, str]:
        return {"hello": "world"}

    app.mount("/sub", Starlette(routes=[Route("/hello", dispatch(hello))]))
    assert dispatched_routes(app) == {
        "GET /plain": False,
        "GET /decorated": True,
        "GET /decorated-html": False,
        # Outside DispatchRoute, FastAPI streams a decorated generator endpoint itself.
        **({"GET /decorated-stream": False, "GET /stream": True} if FASTAPI_STREAMS else {}),
        "GET /v1/json": True,
        "GET /v1/text": False,
        "POST /v1/inner/deep": True,
        "GET /v2/json": False,
        "GET /v2/text": False,
        "POST /v2/inner/deep": False,
        "GET,HEAD /sub/hello": True,
    }
