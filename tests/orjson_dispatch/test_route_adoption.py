"""Putting an app on ``DispatchRoute``: the two silent mistakes warn, and one call converts an app.

``app.router.route_class = DispatchRoute`` set after routes are added, and a plain
``APIRouter()`` included into an app that has the route class, leave routes on FastAPI's path:
the app's first request served by a ``DispatchRoute`` logs a warning naming them.
``use_dispatch_routes(app)`` puts a finished app (its included routers too) on ``DispatchRoute``,
answering as the same app under FastAPI.
"""

from __future__ import annotations

import logging
import re
from typing import Annotated, Any

import pytest
from fastapi import APIRouter, Depends, FastAPI, Header, Response
from fastapi.responses import HTMLResponse
from fastapi.routing import APIRoute
from orjson_dispatch._route import DispatchRoute

from orjson_dispatch import dispatched_routes, use_dispatch_routes
from tests.orjson_dispatch.apps import ask
from tests.orjson_dispatch.compare import assert_identical
from tests.orjson_dispatch.samples import ITEM, Item


async def item() -> Item:
    return ITEM


async def values() -> dict[str, Any]:
    return {"a": [1, 2.5, None], "b": "h\u00e9"}


async def listed() -> list[int]:
    return [1, 2]


async def page() -> str:
    return "<p>x</p>"


def user(x_user: Annotated[str, Header()] = "anon") -> str:
    return x_user


class OwnRoute(APIRoute):
    """A route class of the app's own: kept as it is."""


def build() -> FastAPI:
    """An app whose routers are made before it, each with its own settings."""
    models = APIRouter(prefix="/models", dependencies=[Depends(user)])
    models.add_api_route("/item", item, methods=["GET"], response_model_exclude_none=True)
    models.add_api_route("/values", values, methods=["POST"], status_code=201)
    inner = APIRouter()
    inner.add_api_route("/page", page, methods=["GET"], response_class=HTMLResponse)
    inner.add_api_route("/own", listed, methods=["GET"], route_class_override=OwnRoute)
    models.include_router(inner, prefix="/inner")
    app = FastAPI()
    app.add_api_route("/item", item, methods=["GET"])
    app.include_router(models, prefix="/v1")
    return app


PATHS = ["/item", "/v1/models/item", "/v1/models/inner/page", "/v1/models/inner/own"]


def test_use_dispatch_routes_answers_as_fastapi_with_every_api_route_on_dispatch_route() -> None:
    ours, fastapi = build(), build()
    ask(ours, "GET", "/openapi.json")  # the app has served already: its routes are rebuilt
    use_dispatch_routes(ours)
    for path in PATHS:
        assert_identical(ask(ours, "GET", path), ask(fastapi, "GET", path))
    headers = {"x-user": "ann"}
    assert_identical(
        ask(ours, "POST", "/v1/models/values", headers=headers),
        ask(fastapi, "POST", "/v1/models/values", headers=headers),
    )
    assert ask(ours, "GET", "/openapi.json").json() == ask(fastapi, "GET", "/openapi.json").json()
    served = dispatched_routes(ours)
    assert served["GET /item"]
    assert served["GET /v1/models/item"]
    assert served["POST /v1/models/values"]
    assert not served["GET /v1/models/inner/page"]  # HTMLResponse: left to FastAPI
    assert not served["GET /v1/models/inner/own"]  # a route class of the app's own
    assert not any(dispatched_routes(fastapi).values())


def test_use_dispatch_routes_gives_the_app_the_route_class_for_later_routes() -> None:
    app = build()
    use_dispatch_routes(app)
    app.add_api_route("/later", item, methods=["GET"])
    assert dispatched_routes(app)["GET /later"]


@pytest.mark.parametrize(
    ("app", "route_class", "message"),
    [
        (object(), DispatchRoute, "use_dispatch_routes() takes a FastAPI app or an APIRouter"),
        (FastAPI(), APIRoute, "use_dispatch_routes(route_class=...) takes DispatchRoute"),
    ],
)
def test_use_dispatch_routes_refuses_what_it_cannot_convert(
    app: Any, route_class: Any, message: str
) -> None:
    with pytest.raises(TypeError, match=message.replace("(", r"\(").replace(")", r"\)")):
        use_dispatch_routes(app, route_class)


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "orjson_dispatch" and r.levelno == logging.WARNING
    ]


def test_route_class_set_after_the_routes_warns_at_the_first_request_naming_them(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = FastAPI()
    app.add_api_route("/a", item, methods=["GET"])
    app.add_api_route("/b", values, methods=["POST"])
    app.router.route_class = DispatchRoute
    app.add_api_route("/later", item, methods=["GET"])
    assert not _warnings(caplog)  # nothing runs when the attribute is set
    ask(app, "GET", "/later")
    ask(app, "GET", "/later")
    (message,) = _warnings(caplog)  # once per app
    assert "2 route(s) GET /a, POST /b are served by FastAPI's APIRoute" in message
    assert "use_dispatch_routes(app)" in message
    assert not dispatched_routes(app)["GET /a"]


def dispatch_route_app() -> FastAPI:
    """An app whose router makes ``DispatchRoute`` routes (set before any), serving ``GET /a``."""
    app = FastAPI()
    app.router.route_class = DispatchRoute
    app.add_api_route("/a", item, methods=["GET"])
    return app


def test_plain_router_included_into_a_dispatch_route_app_warns_naming_its_routes(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = dispatch_route_app()
    router = APIRouter()
    router.add_api_route("/c", item, methods=["GET"])
    inner = APIRouter()
    inner.add_api_route("/d", item, methods=["GET"])
    router.include_router(inner, prefix="/i")
    app.include_router(router, prefix="/p")
    ask(app, "GET", "/a")
    (message,) = _warnings(caplog)
    # FastAPI before 0.137 copies the included routes, prefixed, into the app's router.
    assert re.search(
        r"2 route\(s\) GET (/p)?/c, GET (/p/i)?/d are served by FastAPI's APIRoute", message
    )
    assert not dispatched_routes(app)["GET /p/c"]


def test_route_class_set_in_time_and_dispatch_route_routers_do_not_warn(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = dispatch_route_app()
    router = APIRouter(route_class=DispatchRoute)
    router.add_api_route("/c", item, methods=["GET"])
    app.include_router(router, prefix="/p")
    plain = APIRouter()  # a plain router of its own in an app without the route class: as chosen
    plain.add_api_route("/e", item, methods=["GET"])
    other = FastAPI()
    other.include_router(plain)
    other.include_router(router, prefix="/p")
    for served, path in ((app, "/a"), (app, "/p/c"), (other, "/p/c"), (other, "/e")):
        assert ask(served, "GET", path).status_code == 200
    assert not _warnings(caplog)
    assert dispatched_routes(app) == {**dispatched_routes(app), "GET /a": True, "GET /p/c": True}


def test_a_route_returning_a_response_sends_it_as_it_is() -> None:
    async def finished() -> Response:
        return Response(b"done")

    app = FastAPI()
    app.add_api_route("/done", finished, methods=["GET"])
    use_dispatch_routes(app)
    assert ask(app, "GET", "/done").content == b"done"
