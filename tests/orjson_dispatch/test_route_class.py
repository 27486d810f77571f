"""``DispatchRoute`` answers as FastAPI answers, with the returned values serialized by orjson.

Every behaviour is checked against FastAPI itself: one endpoint served by a plain ``APIRoute``
and by a ``DispatchRoute`` (the ``route_twin`` fixture). The behaviours ``@dispatch`` shares (the
parity cases, injected Response, background tasks, threads, empty bodies) are tested for both
entry points in ``test_route_answers.py``. That orjson does the serializing shows in
``route.dispatched``, in the debug line logged per route and in ``dispatched_routes(app)``; the
returned values themselves are in ``test_route_class_values.py``.
"""

import logging
from collections.abc import AsyncIterator, Iterator
from typing import Annotated, Any

import orjson
import pytest
from fastapi import APIRouter, Depends, FastAPI, HTTPException, Response
from fastapi.exceptions import ResponseValidationError
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse
from fastapi.routing import APIRoute
from orjson_dispatch._route import DispatchRoute  # the public name is typed `object` (see below)
from orjson_dispatch._serving import serving
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Route

import orjson_dispatch
from orjson_dispatch import _encoders, dispatch, dispatched_routes
from tests.orjson_dispatch.apps import Ask, Twin, make_endpoint, undecorated
from tests.orjson_dispatch.compare import assert_identical
from tests.orjson_dispatch.samples import ITEM, Account, Envelope, Item, openapi_endpoints
from tests.orjson_dispatch.versions import FASTAPI_STREAMS


def routes_of(owner: FastAPI | APIRouter) -> dict[str, APIRoute]:
    """The API routes of an app or router by path (an included router's are in the router)."""
    return {route.path: route for route in owner.routes if isinstance(route, APIRoute)}


def dispatched(owner: FastAPI | APIRouter, path: str) -> bool:
    """Whether the ``DispatchRoute`` at ``path`` serializes with orjson."""
    route = routes_of(owner)[path]
    assert isinstance(route, DispatchRoute)
    return route.dispatched


def test_public_name_is_the_route_class() -> None:
    from orjson_dispatch._route import DispatchRoute as defined

    assert orjson_dispatch.DispatchRoute is DispatchRoute is defined
    assert issubclass(DispatchRoute, APIRoute)


# --- routers, response classes, the OpenAPI document ------------------------------------------


def test_openapi_document_is_identical() -> None:
    plain, ours = FastAPI(title="t"), FastAPI(title="t")
    ours.router.route_class = DispatchRoute
    for method, path, endpoint, options in openapi_endpoints():
        for app in (plain, ours):
            app.add_api_route(path, endpoint, methods=[method], **options)
    assert orjson.dumps(ours.openapi(), option=orjson.OPT_SORT_KEYS) == orjson.dumps(
        plain.openapi(), option=orjson.OPT_SORT_KEYS
    )
    assert any(isinstance(route, DispatchRoute) and route.dispatched for route in ours.routes)


def _router_app(route_class: type[APIRoute]) -> FastAPI:
    router = APIRouter(route_class=route_class)

    @router.get("/greeting")
    async def greeting() -> str:
        return "h\u00e9llo"

    app = FastAPI()
    app.include_router(router, prefix="/text", default_response_class=PlainTextResponse)
    app.include_router(router, prefix="/json")
    return app


def test_router_included_twice_answers_with_each_inclusions_response_class(
    ask: Ask, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="orjson_dispatch")
    plain, ours = _router_app(APIRoute), _router_app(DispatchRoute)
    answers = {path: ask(ours, "GET", path) for path in ("/text/greeting", "/json/greeting")}
    for path, answer in answers.items():
        assert_identical(answer, ask(plain, "GET", path))
    assert answers["/text/greeting"].text == "h\u00e9llo"
    assert answers["/json/greeting"].json() == "h\u00e9llo"
    messages = [record.getMessage() for record in caplog.records]
    assert (
        "GET /text/greeting left to FastAPI: response_class=PlainTextResponse does not render JSON"
    ) in messages
    assert "GET /json/greeting serialized by orjson" in messages


@pytest.mark.parametrize(
    ("response_class", "orjson_serializes"),
    [(PlainTextResponse, False), (HTMLResponse, False), (JSONResponse, True)],
)
def test_app_default_response_class_is_honoured(
    response_class: type[Response], orjson_serializes: bool, ask: Ask
) -> None:
    def build(route_class: type[APIRoute]) -> FastAPI:
        app = FastAPI(default_response_class=response_class)
        app.router.route_class = route_class

        @app.get("/")
        async def read() -> str:
            return "<b>x</b>"

        return app

    ours = build(DispatchRoute)
    assert_identical(ask(ours, "GET", "/"), ask(build(APIRoute), "GET", "/"))
    assert dispatched(ours, "/") is orjson_serializes


def test_dispatched_and_the_debug_line_tell_each_routes_serializer(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="orjson_dispatch")
    router = APIRouter(route_class=DispatchRoute)
    router.add_api_route("/json", make_endpoint(ITEM, annotation=Item), methods=["GET", "POST"])
    router.add_api_route("/html", make_endpoint("<p>"), response_class=HTMLResponse)
    router.add_api_route("/wrapped", dispatch(make_endpoint(ITEM, annotation=Item)))
    router.add_api_route("/response", make_endpoint(Response(), annotation=Response))
    router.add_api_route("/envelope", make_endpoint(ITEM), response_class=Envelope)
    router.add_api_route(
        "/selective", make_endpoint(ITEM, annotation=Item), response_model_exclude_defaults=True
    )
    router.add_api_route(
        "/no-nones", make_endpoint(ITEM, annotation=Item), response_model_exclude_none=True
    )
    app = FastAPI()
    app.include_router(router)
    paths = ("/json", "/html", "/wrapped", "/response", "/envelope")
    assert {path: dispatched(router, path) for path in paths} == {
        "/json": True,
        "/html": False,
        "/wrapped": True,
        "/response": True,  # what it returns besides a Response: see test_returned_values.py
        "/envelope": False,
    }
    messages = {record.getMessage() for record in caplog.records}
    assert {
        "GET,POST /json serialized by orjson",
        "GET /html left to FastAPI: response_class=HTMLResponse does not render JSON",
        "GET /wrapped serialized by orjson (dispatch answers it)",
        "GET /response serialized by orjson",
        "GET /envelope left to FastAPI: response_class=Envelope has an __init__ of its own",
        "GET /selective serialized by orjson; a setting pydantic applies (include, exclude, "
        "exclude_defaults)",
        "GET /no-nones serialized by orjson",
    } <= messages


def test_a_handler_built_again_reuses_the_encoder_of_its_response_field(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """FastAPI 0.137 to 0.141 build the handler of an included route for every request."""
    built: list[Any] = []
    build = _encoders._field_encoder

    def counted(*arguments: Any) -> Any:
        built.append(arguments)
        return build(*arguments)

    monkeypatch.setattr(_encoders, "_field_encoder", counted)
    route = DispatchRoute("/item", make_endpoint(ITEM, annotation=Item))
    for _ in range(3):
        route.get_route_handler()
    assert len(built) == 1


@pytest.mark.parametrize(
    ("options", "route_options"),
    [({}, {}), ({"exclude_none": True}, {"response_model_exclude_none": True})],
)
def test_endpoint_wrapped_in_dispatch_is_answered_once(
    options: dict[str, Any], route_options: dict[str, Any], ask: Ask
) -> None:
    def build(route_class: type[APIRoute], decorate: Any) -> FastAPI:
        app = FastAPI()
        app.router.route_class = route_class
        app.add_api_route("/", decorate(make_endpoint(ITEM, annotation=Item)), **route_options)
        return app

    wrap = dispatch(**options) if options else dispatch
    ours = build(DispatchRoute, wrap)
    fastapi = ask(build(APIRoute, undecorated), "GET", "/")
    assert_identical(ask(ours, "GET", "/"), fastapi)
    assert (b'"note":null' in fastapi.content) is not bool(options)
    route = routes_of(ours)["/"]
    assert serving(route).by == "dispatch"  # dispatch answers: serialized once, not twice


# --- dispatched_routes: which routes of an app orjson serves, through inclusions ---------------


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


# --- FastAPI's semantics -----------------------------------------------------------------------


@pytest.mark.usefixtures("fresh_endpoint_context")
@pytest.mark.parametrize("is_async", [True, False])
def test_response_validation_error_names_the_endpoint(
    is_async: bool, route_twin: Twin, ask: Ask
) -> None:
    route_twin.add("GET", "/me", make_endpoint({"id": "x"}, annotation=Account, is_async=is_async))

    def error(method: str, path: str) -> str:
        with pytest.raises(ResponseValidationError) as raised:
            ask(route_twin.app, method, path, raise_errors=True)
        return str(raised.value)

    fastapi, ours = route_twin.both("GET", "/me", via=error)
    assert ours == fastapi.replace("GET /fastapi/me", "GET /dispatch/me")
    assert dispatched(route_twin.app, "/dispatch/me")


def test_dependencies_with_yield_are_closed_as_fastapi_closes_them(route_twin: Twin) -> None:
    log: list[str] = []

    def session() -> Iterator[str]:
        log.append("open")
        try:
            yield "s1"
        except HTTPException as error:
            log.append(f"saw {error.status_code}")
            raise
        finally:
            log.append("close")

    async def endpoint(s: Annotated[str, Depends(session)], missing: bool = False) -> Item:
        log.append(f"endpoint {s}")
        if missing:
            raise HTTPException(404, "no such item")
        return ITEM

    route_twin.add("GET", "/i", endpoint)
    logs = []
    for query in ("", "?missing=true"):
        fastapi_log_start = len(log)
        fastapi, ours = route_twin.both("GET", f"/i{query}")
        assert_identical(ours, fastapi)
        middle = fastapi_log_start + (len(log) - fastapi_log_start) // 2
        logs.append((log[fastapi_log_start:middle], log[middle:]))
    for fastapi_log, ours_log in logs:
        assert ours_log == fastapi_log
    assert logs[1][0] == ["open", "endpoint s1", "saw 404", "close"]
    assert dispatched(route_twin.app, "/dispatch/i")
