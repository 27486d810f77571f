"""What a route answers besides the body is FastAPI's: status, headers, cookies, the response
class in force, empty bodies, background tasks and the thread the endpoint runs in.

Each behaviour is checked against FastAPI itself, for both entry points (``BOTH_ENTRY_POINTS``:
``@dispatch`` and ``DispatchRoute``): the ``parity_cases`` apps built with each and without, or one
app serving the endpoint plain and through one of them (``twin``), in process or over a real
uvicorn server where only the wire shows it (HEAD, 204, 304).
"""

import inspect
import threading
from typing import Annotated, Any

import httpx
import pytest
from fastapi import APIRouter, BackgroundTasks, Depends, FastAPI, Response
from fastapi.responses import JSONResponse, PlainTextResponse
from orjson_dispatch._rendering import renders_json
from orjson_dispatch._route import DispatchRoute
from pydantic import BaseModel, field_serializer
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from orjson_dispatch import _fastapi, dispatch, dispatched_routes
from tests.orjson_dispatch.apps import (
    BOTH_ENTRY_POINTS,
    UNTYPED,
    Ask,
    Decorate,
    LiveServer,
    Twin,
    declare,
    make_endpoint,
    undecorated,
)
from tests.orjson_dispatch.compare import assert_answers_alike, assert_identical, header_list
from tests.orjson_dispatch.parity_cases import CASES, Case
from tests.orjson_dispatch.samples import ITEM, Item
from tests.orjson_dispatch.strategies.hostile import HeaderAfterInit

# --- the parity examples ------------------------------------------------------------------------


@pytest.mark.parametrize("route_class", [None, DispatchRoute], ids=["dispatch", "DispatchRoute"])
@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_parity_case_answers_like_fastapi(
    case: Case, route_class: type[DispatchRoute] | None, ask: Ask
) -> None:
    if route_class is None:
        ours_app = case.build(dispatch)
    else:
        ours_app = case.build(undecorated, route_class=route_class)
    fastapi = ask(case.build(undecorated), case.method, case.path, **case.request)
    ours = ask(ours_app, case.method, case.path, **case.request)
    case.check(ours, fastapi)
    if route_class is not None:
        # JSON routes are orjson's; HTML, plain text and own-__init__ ones stay FastAPI's.
        (served,) = (v for k, v in dispatched_routes(ours_app).items() if k.endswith(" /"))
        response_class, _ = _fastapi.response_class_in_force(ours_app.routes[-1])
        assert served is renders_json(response_class)


def test_case_names_are_unique() -> None:
    names = [case.name for case in CASES]
    assert len(names) == len(set(names))


# --- status, headers and cookies ----------------------------------------------------------------


@BOTH_ENTRY_POINTS
@pytest.mark.parametrize("is_async", [True, False])
@pytest.mark.parametrize("typed", [True, False])
def test_injected_response_status_headers_and_cookies_are_kept(
    typed: bool, is_async: bool, twin: Twin
) -> None:
    """The injected Response's status beats the route's; its headers and cookies all arrive.

    The deleted cookie's ``expires`` date is made from the clock when the header is built, so it
    is checked to be in the past rather than compared (see ``compare.comparable_headers``).
    """

    def endpoint(response: Response) -> Any:
        response.status_code = 202
        response.headers["x-request-cost"] = "3"
        response.headers.append("x-multi", "a")
        response.headers.append("x-multi", "b")
        response.set_cookie("session", "abc", httponly=True, max_age=60)
        response.set_cookie("theme", "dark")
        response.delete_cookie("old")
        return ITEM

    async def async_endpoint(response: Response) -> Any:
        return endpoint(response)

    chosen = async_endpoint if is_async else endpoint
    twin.add("GET", "/r", declare(chosen, Item if typed else UNTYPED), status_code=201)
    fastapi, ours = twin.both("GET", "/r")
    assert fastapi.status_code == 202
    assert fastapi.headers.get_list("x-multi") == ["a", "b"]
    cookies = fastapi.headers.get_list("set-cookie")
    assert [cookie.split("=", 1)[0] for cookie in cookies] == ["session", "theme", "old"]
    assert_identical(ours, fastapi)
    assert twin.served("/r")


def test_decorator_sets_status_headers_and_media_type(ask: Ask) -> None:
    @dispatch(status_code=201, headers={"x-a": "b"}, media_type="application/vnd.api+json")
    async def endpoint() -> dict[str, int]:
        return {"a": 1}

    app = FastAPI()
    app.post("/x")(endpoint)
    answer = ask(app, "POST", "/x")
    assert answer.status_code == 201
    assert answer.headers["x-a"] == "b"
    assert answer.headers["content-type"] == "application/vnd.api+json"
    assert answer.json() == {"a": 1}


# --- returned responses and the response class in force -----------------------------------------


def test_returned_response_is_the_very_object_sent(ask: Ask) -> None:
    seen: list[Response] = []

    class Spy(JSONResponse):
        async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
            seen.append(self)
            await super().__call__(scope, receive, send)

    sent = Spy({"x": 1})

    @dispatch
    async def endpoint() -> Spy:
        return sent

    app = FastAPI()
    app.get("/x")(endpoint)
    assert ask(app, "GET", "/x").json() == {"x": 1}
    assert seen == [sent]


def test_response_class_setting_a_header_in_its_init_sends_it() -> None:
    def build(decorate: Decorate) -> FastAPI:
        app = FastAPI()
        app.get("/untyped", response_class=HeaderAfterInit)(decorate(lambda: {"a": 1}))
        app.get("/typed", response_class=HeaderAfterInit)(
            decorate(make_endpoint(ITEM, annotation=Item))
        )
        return app

    [(_, headers, _), _] = assert_answers_alike(build, "/untyped", "/typed")
    assert headers["x-set-by"] == "HeaderAfterInit"


def test_default_response_class_of_router_and_app_is_in_force() -> None:
    def build(decorate: Decorate) -> FastAPI:
        app = FastAPI(default_response_class=PlainTextResponse)
        app.get("/app")(decorate(lambda: "hello"))
        router = APIRouter(default_response_class=PlainTextResponse)
        router.get("/x")(decorate(lambda: "hello"))
        app.include_router(router, prefix="/router")
        return app

    [(_, app_headers, _), (_, router_headers, _)] = assert_answers_alike(build, "/app", "/router/x")
    assert (
        app_headers["content-type"] == router_headers["content-type"] == "text/plain; charset=utf-8"
    )


def test_default_response_class_of_include_router_is_in_force() -> None:
    def build(decorate: Decorate) -> FastAPI:
        app = FastAPI()
        router = APIRouter()
        router.get("/x")(decorate(lambda: "hello"))
        app.include_router(router, prefix="/text", default_response_class=PlainTextResponse)
        app.include_router(router, prefix="/json")
        return app

    [(_, text_headers, _), (_, json_headers, _)] = assert_answers_alike(build, "/text/x", "/json/x")
    assert text_headers["content-type"] == "text/plain; charset=utf-8"
    assert json_headers["content-type"] == "application/json"


# --- statuses without content (the in-process 204/304 cases are parity examples) ---------------


@pytest.mark.parametrize("typed", [True, False])
def test_status_205_sends_an_empty_body_with_a_matching_content_length(
    typed: bool, twin: Twin
) -> None:
    """Deliberate difference: FastAPI empties a 205 body but keeps the old content-length.

    Starlette only omits content-length for 1xx/204/304, so FastAPI 0.165 announces the
    length of the body it then drops; RFC 9110 section 15.3.6 forbids content in a 205.
    ``dispatch`` sends ``content-length: 0`` and the same other headers.
    """

    async def endpoint(response: Response) -> Any:
        response.status_code = 205
        return ITEM

    twin.add("GET", "/e", declare(endpoint, Item if typed else UNTYPED))
    fastapi, ours = twin.both("GET", "/e")
    assert fastapi.status_code == ours.status_code == 205
    assert fastapi.content == ours.content == b""
    assert fastapi.headers["content-length"] != "0"  # FastAPI's inconsistency, see above
    assert ours.headers["content-length"] == "0"
    others = [h for h in header_list(fastapi) if h[0] != "content-length"]
    assert [h for h in header_list(ours) if h[0] != "content-length"] == others


@BOTH_ENTRY_POINTS
@pytest.mark.parametrize("typed", [True, False])
def test_empty_bodies_and_head_over_a_real_server(
    typed: bool, twin: Twin, live_server: LiveServer
) -> None:
    """Over the wire (uvicorn, h11 or httptools): 204/304, HEAD and a 204 route, as FastAPI."""

    def setting(status: int) -> Any:
        async def endpoint(response: Response) -> Any:
            response.status_code = status
            return ITEM

        return declare(endpoint, Item if typed else UNTYPED)

    twin.add("GET", "/204", setting(204))
    twin.add("GET", "/304", setting(304))
    twin.add(["GET", "HEAD"], "/item", make_endpoint(ITEM, annotation=Item if typed else UNTYPED))
    twin.add("DELETE", "/d", make_endpoint(None), status_code=204)
    requests = [("GET", "/204"), ("GET", "/304"), ("HEAD", "/item"), ("DELETE", "/d")]
    with httpx.Client(base_url=live_server(twin.app)) as client:
        for method, path in requests:
            fastapi, ours = twin.both(method, path, via=client.request)
            drop = {"date"}  # the server's clock, a second apart at most
            assert ours.status_code == fastapi.status_code
            assert [h for h in header_list(ours) if h[0] not in drop] == [
                h for h in header_list(fastapi) if h[0] not in drop
            ]
            assert ours.content == fastapi.content == b""
        get = client.get("/dispatch/item")
        head = client.head("/dispatch/item")
        assert head.headers["content-length"] == get.headers["content-length"]
    assert twin.served("/item")


# --- background tasks -----------------------------------------------------------------------------


class RecordSend:
    """ASGI middleware appending ``"body sent"`` to ``events`` once the last body chunk is sent."""

    def __init__(self, app: ASGIApp, events: list[str]) -> None:
        self.app = app
        self.events = events

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def recording_send(message: Message) -> None:
            await send(message)
            if message["type"] == "http.response.body" and not message.get("more_body"):
                self.events.append("body sent")

        await self.app(scope, receive, recording_send)


@BOTH_ENTRY_POINTS
@pytest.mark.parametrize("is_async", [True, False])
def test_background_tasks_run_after_the_response_is_sent(
    is_async: bool, twin: Twin, ask: Ask
) -> None:
    """A dependency's task and the endpoint's run in that order, once the body is sent."""
    events: list[str] = []

    def queue(tasks: BackgroundTasks, side: Annotated[str, Depends(lambda: "dep")]) -> None:
        tasks.add_task(events.append, f"dependency {side}")

    async def async_endpoint(tasks: BackgroundTasks, _: Annotated[None, Depends(queue)]) -> Item:
        tasks.add_task(events.append, "endpoint")
        return ITEM

    def sync_endpoint(tasks: BackgroundTasks, _: Annotated[None, Depends(queue)]) -> Item:
        tasks.add_task(events.append, "endpoint")
        return ITEM

    twin.add("POST", "/t", async_endpoint if is_async else sync_endpoint, status_code=201)
    recorded = RecordSend(twin.app, events)
    answers = []
    for side in ("fastapi", "dispatch"):
        events.clear()
        answers.append(ask(recorded, "POST", f"/{side}/t"))
        assert events == ["body sent", "dependency dep", "endpoint"], side
    assert_identical(answers[1], answers[0])
    assert twin.served("/t")


# --- threads: a sync endpoint runs, and is serialized, in the threadpool ------------------------


class Traced(BaseModel):
    """Records the thread its field is serialized in."""

    value: int

    @field_serializer("value")
    def _record(self, value: int) -> int:
        THREADS["serializer"] = threading.current_thread()
        return value


THREADS: dict[str, threading.Thread] = {}


@BOTH_ENTRY_POINTS
def test_sync_endpoint_runs_in_a_worker_thread_async_on_the_loop(twin: Twin, ask: Ask) -> None:
    def sync_endpoint() -> Traced:
        THREADS["endpoint"] = threading.current_thread()
        return Traced(value=1)

    async def async_endpoint() -> Traced:
        THREADS["endpoint"] = threading.current_thread()
        return Traced(value=1)

    assert not inspect.iscoroutinefunction(dispatch(sync_endpoint))
    assert inspect.iscoroutinefunction(dispatch(async_endpoint))
    twin.add("GET", "/sync", sync_endpoint)
    twin.add("GET", "/async", async_endpoint)
    loop_thread = threading.current_thread()  # asyncio.run runs the loop in this thread
    for side in ("fastapi", "dispatch"):
        THREADS.clear()
        assert ask(twin.app, "GET", f"/{side}/sync").json() == {"value": 1}
        assert THREADS["endpoint"] is not loop_thread
        if twin.route_class is None and side == "dispatch":
            # dispatch serializes a sync endpoint's value in the threadpool too (a large
            # answer must not block the event loop).
            assert THREADS["serializer"] is THREADS["endpoint"]
        THREADS.clear()
        assert ask(twin.app, "GET", f"/{side}/async").json() == {"value": 1}
        assert THREADS["endpoint"] is loop_thread
    assert twin.served("/sync")
    assert twin.served("/async")
