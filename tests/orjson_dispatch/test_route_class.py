"""``DispatchRoute`` answers as FastAPI answers, with the returned values serialized by orjson.

Every behaviour is checked against FastAPI itself: one endpoint served by a plain ``APIRoute``
and by a ``DispatchRoute`` (``Twin(route_class=DispatchRoute)``, the ``parity_cases`` apps built
with ``route_class=DispatchRoute``, hypothesis over typed and untyped returned values). That
orjson does the serializing shows in ``route.dispatched``, in the debug line logged per route,
and in the numpy values FastAPI cannot serialize, which a ``DispatchRoute`` answers.
"""

import dataclasses
import functools
import logging
import threading
from collections.abc import Iterator
from typing import Annotated, Any

import httpx
import numpy as np
import orjson
import pytest
from fastapi import APIRouter, BackgroundTasks, Depends, FastAPI, HTTPException, Response
from fastapi.datastructures import DefaultPlaceholder
from fastapi.exceptions import ResponseValidationError
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse
from fastapi.routing import APIRoute
from hypothesis import event, given, note, settings
from hypothesis import strategies as st
from orjson_dispatch._rendering import reads_content, renders_json
from orjson_dispatch._route import DispatchRoute  # the public name is typed `object` (see below)

import orjson_dispatch
from orjson_dispatch import _responder, dispatch
from tests.orjson_dispatch.apps import UNTYPED, Ask, LiveServer, Route, Twin, make_endpoint, serve
from tests.orjson_dispatch.compare import assert_identical, assert_same_answer
from tests.orjson_dispatch.oracles import (
    deliberate_untyped_body,
    denumpy,
    same_json_or_held,
    typed_since_0130,
)
from tests.orjson_dispatch.parity_cases import CASES, Case
from tests.orjson_dispatch.samples import ITEM, Account, Item
from tests.orjson_dispatch.strategies import examples
from tests.orjson_dispatch.strategies.http_cases import ROUTE_FLAGS, TypedCase, describe
from tests.orjson_dispatch.strategies.http_cases import typed_cases as typed_http_cases
from tests.orjson_dispatch.strategies.untyped import untyped_values
from tests.orjson_dispatch.test_openapi import _openapi_endpoints
from tests.orjson_dispatch.versions import FASTAPI_DUMPS_JSON

OURS = {"route_class_override": DispatchRoute}


@pytest.fixture
def route_twin() -> Twin:
    """A fresh app serving each endpoint by an ``APIRoute`` and by a ``DispatchRoute``."""
    return Twin(route_class=DispatchRoute)


def routes_of(owner: FastAPI | APIRouter) -> dict[str, APIRoute]:
    """The API routes of an app or router by path (an included router's are in the router)."""
    return {route.path: route for route in owner.routes if isinstance(route, APIRoute)}


def dispatched(owner: FastAPI | APIRouter, path: str) -> bool:
    """Whether the ``DispatchRoute`` at ``path`` serializes with orjson."""
    route = routes_of(owner)[path]
    assert isinstance(route, DispatchRoute)
    return route.dispatched


def _unchanged(endpoint: Any) -> Any:
    return endpoint


def test_public_name_is_the_route_class() -> None:
    from orjson_dispatch._route import DispatchRoute as defined

    assert orjson_dispatch.DispatchRoute is DispatchRoute is defined
    assert issubclass(DispatchRoute, APIRoute)


# --- the parity examples ------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_parity_case_answers_like_fastapi(case: Case, ask: Ask) -> None:
    ours_app = case.build(_unchanged, route_class=DispatchRoute)
    fastapi = ask(case.build(_unchanged), case.method, case.path, **case.request)
    ours = ask(ours_app, case.method, case.path, **case.request)
    case.check(ours, fastapi)
    (route,) = routes_of(ours_app).values()
    response_class = route.response_class
    if isinstance(response_class, DefaultPlaceholder):
        response_class = response_class.value
    # JSON routes are orjson's; HTML, plain text and own-__init__ ones stay FastAPI's.
    assert dispatched(ours_app, "/") is renders_json(response_class)


@pytest.mark.parametrize("annotation", [UNTYPED, Any])
def test_numpy_value_fastapi_cannot_serialize_is_answered(
    annotation: Any, route_twin: Twin
) -> None:
    value = {"ids": np.arange(3, dtype=np.int64), "score": np.float64(0.5)}
    route_twin.add("GET", "/np", make_endpoint(value, annotation=annotation))
    fastapi, ours = route_twin.both("GET", "/np")
    assert fastapi.status_code == 500  # FastAPI's encoders do not know numpy: orjson does
    assert ours.status_code == 200
    assert ours.json() == {"ids": [0, 1, 2], "score": 0.5}


# --- hypothesis: returned values ------------------------------------------------------------------


@settings(max_examples=examples(150))
@given(value=untyped_values(numpy=True), is_async=st.booleans(), flags=st.just({}) | ROUTE_FLAGS)
def test_untyped_value_answers_like_fastapi(
    value: Any, is_async: bool, flags: dict[str, bool]
) -> None:
    plain = denumpy(value)
    answers = serve(
        Route("/fastapi", make_endpoint(value, annotation=UNTYPED, is_async=is_async), flags),
        Route(
            "/ours",
            make_endpoint(value, annotation=UNTYPED, is_async=is_async),
            {**flags, **OURS},
        ),
        Route("/plain", make_endpoint(plain, annotation=UNTYPED, is_async=is_async), flags),
    )
    fastapi, ours = answers["/plain"], answers["/ours"]
    note(f"FastAPI: {fastapi.status_code} {fastapi.content[:300]!r}")
    note(f"DispatchRoute: {ours.status_code} {ours.content[:300]!r}")
    if fastapi.status_code != 500:
        event("untyped: FastAPI 200")
        assert ours.status_code == fastapi.status_code, ours.content
        assert ours.headers.get("content-type") == fastapi.headers.get("content-type")
        assert same_json_or_held(ours.content, fastapi.content, value)
        return
    expected = deliberate_untyped_body(value)
    if expected is None:
        assert ours.status_code == 500, "FastAPI cannot encode this value: DispatchRoute neither"
        return
    event("untyped: deliberate difference (NaN/inf -> null, dataclass not copied)")
    assert ours.status_code == 200, ours.content
    assert same_json_or_held(ours.content, expected, value)


@pytest.mark.parametrize(
    "flags",
    [
        {"response_model_by_alias": False},
        {"response_model_exclude_none": True},
        {"response_model_exclude_unset": True},
        {"response_model_exclude_defaults": True},
        {"response_model_include": {"name"}},
        {"response_model_exclude": {"name"}},
    ],
    ids=lambda flags: next(iter(flags)),
)
def test_untyped_route_ignores_the_response_model_settings(
    flags: dict[str, Any], route_twin: Twin
) -> None:
    route_twin.add("GET", "/u", make_endpoint(ITEM, annotation=UNTYPED), **flags)
    fastapi, ours = route_twin.both("GET", "/u")
    assert fastapi.content == b'{"name":"pen","Price":1.5,"tags":[],"note":null}'
    assert_identical(ours, fastapi)


@settings(max_examples=examples(150))
@given(case=typed_http_cases())
def test_typed_value_answers_like_fastapi(case: TypedCase) -> None:
    for line in describe(case):
        note(line)
    value = case.returned.value
    fastapi_route = case.route("/fastapi", value, decorate=False)
    routes = [
        fastapi_route,
        dataclasses.replace(fastapi_route, path="/ours", options={**fastapi_route.options, **OURS}),
        case.route("/fastapi-denumpy", denumpy(value), decorate=False),
        dataclasses.replace(
            case, options={k: v for k, v in case.options.items() if k != "response_class"}
        ).route("/fastapi-default-class", value, decorate=False),
    ]
    answers = serve(*routes)
    fastapi, ours = answers["/fastapi"], answers["/ours"]
    note(f"FastAPI: {fastapi.status_code} {fastapi.content[:300]!r}")
    note(f"DispatchRoute: {ours.status_code} {ours.content[:300]!r}")
    event(f"typed: returned {case.returned.how}, FastAPI {fastapi.status_code}")
    # A container assigned without validation is written as held, as by the decorator.
    same_body = functools.partial(same_json_or_held, value=value)
    if fastapi.status_code != 500 or reads_content(
        case.options.get("response_class", JSONResponse)
    ):
        assert_same_answer(ours, fastapi, same_body)
        return
    # The deliberate differences of the decorator: numpy encoded as tolist(), and FastAPI's
    # default typed path (NaN as null) also under an explicit response_class=JSONResponse.
    for reference in ("/fastapi-denumpy", "/fastapi-default-class"):
        if answers[reference].status_code != 500 and ours.status_code != 500:
            event(f"typed: deliberate difference ({reference})")
            assert_same_answer(ours, answers[reference], same_body)
            return
    if not FASTAPI_DUMPS_JSON and ours.status_code == 200:
        event("typed: FastAPI before 0.130 answers 500 (NaN rendered by JSONResponse)")
        expected = typed_since_0130(case.spec.annotation, value, case.options)
        assert isinstance(expected, bytes), expected
        assert same_body(ours.content, expected)
        return
    assert ours.status_code == 500, "FastAPI's typed path answers 500: DispatchRoute must too"


# --- routers, response classes, the OpenAPI document ------------------------------------------


def test_openapi_document_is_identical() -> None:
    plain, ours = FastAPI(title="t"), FastAPI(title="t")
    ours.router.route_class = DispatchRoute
    for method, path, endpoint, options in _openapi_endpoints():
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
    app = FastAPI()
    app.include_router(router)
    paths = ("/json", "/html", "/wrapped", "/response", "/envelope")
    assert {path: dispatched(router, path) for path in paths} == {
        "/json": True,
        "/html": False,
        "/wrapped": False,
        "/response": False,
        "/envelope": False,
    }
    messages = {record.getMessage() for record in caplog.records}
    assert {
        "GET,POST /json serialized by orjson",
        "GET /html left to FastAPI: response_class=HTMLResponse does not render JSON",
        "GET /wrapped left to FastAPI: the endpoint is wrapped in dispatch, which answers it",
        "GET /response left to FastAPI: the endpoint returns a Response",
        "GET /envelope left to FastAPI: response_class=Envelope has an __init__ of its own",
    } <= messages


class Envelope(JSONResponse):
    def __init__(self, content: Any, **kwargs: Any) -> None:
        super().__init__({"data": content}, **kwargs)


def test_a_handler_built_again_reuses_the_encoder_of_its_response_field(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """FastAPI 0.137 to 0.141 build the handler of an included route for every request."""
    built: list[Any] = []
    build = _responder._field_encoder

    def counted(*arguments: Any) -> Any:
        built.append(arguments)
        return build(*arguments)

    monkeypatch.setattr(_responder, "_field_encoder", counted)
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
    fastapi = ask(build(APIRoute, _unchanged), "GET", "/")
    assert_identical(ask(ours, "GET", "/"), fastapi)
    assert (b'"note":null' in fastapi.content) is not bool(options)
    assert not dispatched(ours, "/")  # dispatch answers: serialized once, not twice


# --- FastAPI's semantics -----------------------------------------------------------------------


@pytest.mark.parametrize("annotation", [Item, UNTYPED])
@pytest.mark.parametrize("is_async", [True, False])
def test_injected_response_status_headers_and_cookies_are_kept(
    annotation: Any, is_async: bool, route_twin: Twin
) -> None:
    def endpoint(response: Response) -> Any:
        response.status_code = 202
        response.headers["x-trace"] = "t1"
        response.set_cookie("session", "abc", httponly=True)
        response.delete_cookie("old")
        return ITEM

    async def async_endpoint(response: Response) -> Any:
        return endpoint(response)

    chosen = async_endpoint if is_async else endpoint
    route_twin.add("GET", "/r", chosen, response_model=None if annotation is UNTYPED else Item)
    fastapi, ours = route_twin.both("GET", "/r")
    assert fastapi.status_code == 202
    assert_identical(ours, fastapi)
    assert dispatched(route_twin.app, "/dispatch/r")


def test_background_tasks_run_after_the_answer(route_twin: Twin) -> None:
    ran: list[str] = []

    def queue(tasks: BackgroundTasks, x_side: Annotated[str, Depends(lambda: "dep")]) -> None:
        tasks.add_task(ran.append, f"dependency {x_side}")

    async def endpoint(tasks: BackgroundTasks, _: Annotated[None, Depends(queue)]) -> Item:
        tasks.add_task(ran.append, "endpoint")
        return ITEM

    route_twin.add("POST", "/t", endpoint, status_code=201)
    fastapi, ours = route_twin.both("POST", "/t")
    assert_identical(ours, fastapi)
    assert ran == ["dependency dep", "endpoint"] * 2
    assert dispatched(route_twin.app, "/dispatch/t")


@pytest.mark.parametrize("status", [204, 304])
@pytest.mark.parametrize("annotation", [Item, UNTYPED])
def test_bodiless_statuses_and_head_answer_no_body_on_the_wire(
    status: int, annotation: Any, route_twin: Twin, live_server: LiveServer
) -> None:
    async def endpoint(response: Response) -> Any:
        response.status_code = status
        return ITEM

    route_twin.add(["GET", "HEAD"], "/e", make_endpoint(ITEM, annotation=annotation))
    route_twin.add("GET", "/s", endpoint, response_model=None if annotation is UNTYPED else Item)
    route_twin.add("DELETE", "/d", make_endpoint(None), status_code=204)
    base = live_server(route_twin.app)
    with httpx.Client(base_url=base) as client:
        for method, path in [("HEAD", "/e"), ("GET", "/s"), ("DELETE", "/d")]:
            fastapi, ours = (client.request(method, f"/{side}{path}") for side in SIDES)
            assert ours.content == fastapi.content == b""
            assert ours.status_code == fastapi.status_code
            assert without_date(ours) == without_date(fastapi)
    assert dispatched(route_twin.app, "/dispatch/e")


SIDES = ("fastapi", "dispatch")


def without_date(response: httpx.Response) -> list[tuple[str, str]]:
    """The headers in order, without uvicorn's clock-made ``date``."""
    return [(k.lower(), v) for k, v in response.headers.multi_items() if k.lower() != "date"]


@pytest.mark.usefixtures("fresh_endpoint_context")
@pytest.mark.parametrize("is_async", [True, False])
def test_response_validation_error_names_the_endpoint(
    is_async: bool, route_twin: Twin, ask: Ask
) -> None:
    route_twin.add("GET", "/me", make_endpoint({"id": "x"}, annotation=Account, is_async=is_async))
    errors = []
    for side in SIDES:
        with pytest.raises(ResponseValidationError) as raised:
            ask(route_twin.app, "GET", f"/{side}/me", raise_errors=True)
        errors.append(str(raised.value))
    fastapi, ours = errors
    assert ours == fastapi.replace("GET /fastapi/me", "GET /dispatch/me")
    assert dispatched(route_twin.app, "/dispatch/me")


def test_sync_endpoint_runs_in_a_worker_thread(route_twin: Twin) -> None:
    threads: list[int] = []

    def endpoint() -> Item:
        threads.append(threading.get_ident())
        return ITEM

    route_twin.add("GET", "/s", endpoint)
    fastapi, ours = route_twin.both("GET", "/s")
    assert_identical(ours, fastapi)
    # ``ask`` runs the app on this thread's event loop: the endpoint ran elsewhere.
    assert threading.get_ident() not in threads
    assert len(threads) == 2
    assert dispatched(route_twin.app, "/dispatch/s")


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
