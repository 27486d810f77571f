"""FastAPI's handling of returned data is kept under ``@dispatch``.

Each test builds the same endpoint twice in one app, once as FastAPI runs it and once under
``@dispatch``, and checks that the answers agree (status, headers, cookies, body), plus the
absolute behaviour the issue asks for. Apps run in process behind httpx's ASGI transport; the
tests about what goes over the wire (HEAD, 204/304) also run a real uvicorn server on port 0.
"""

import asyncio
import contextlib
import dataclasses
import importlib.util
import inspect
import sys
import textwrap
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Annotated, Any

import httpx
import orjson
import pytest
import uvicorn
from fastapi import (
    BackgroundTasks,
    Body,
    Depends,
    FastAPI,
    Header,
    Query,
    Request,
    Response,
)
from fastapi import Path as PathParam
from fastapi.exceptions import ResponseValidationError
from fastapi.responses import (
    FileResponse,
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    StreamingResponse,
)
from pydantic import BaseModel, Field, field_serializer
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from orjson_dispatch import dispatch

# --- harness ------------------------------------------------------------------------------------


def ask(
    app: ASGIApp, method: str, path: str, *, raise_errors: bool = False, **kwargs: Any
) -> httpx.Response:
    """Send one request to ``app`` in process (httpx's ASGI transport) and return the answer."""

    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=raise_errors)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
            return await c.request(method, path, **kwargs)

    return asyncio.run(go())


def both(app: FastAPI, method: str, path: str, **kwargs: Any) -> tuple[httpx.Response, ...]:
    """The answers of ``/fastapi{path}`` and ``/dispatch{path}``."""
    return tuple(ask(app, method, f"/{side}{path}", **kwargs) for side in ("fastapi", "dispatch"))


def header_list(response: httpx.Response) -> list[tuple[str, str]]:
    """Every header in order (duplicates kept), names lower-cased."""
    return [(name.lower(), value) for name, value in response.headers.multi_items()]


def assert_identical(ours: httpx.Response, fastapi: httpx.Response) -> None:
    """Same status, same headers in the same order, same body bytes."""
    assert ours.status_code == fastapi.status_code
    assert header_list(ours) == header_list(fastapi)
    assert ours.content == fastapi.content


def assert_equivalent(ours: httpx.Response, fastapi: httpx.Response) -> None:
    """Same status, same headers except content-length, same JSON."""
    assert ours.status_code == fastapi.status_code, ours.content
    drop = {"content-length"}
    assert [h for h in header_list(ours) if h[0] not in drop] == [
        h for h in header_list(fastapi) if h[0] not in drop
    ]
    assert orjson.loads(ours.content) == orjson.loads(fastapi.content)


def twice(app: FastAPI, method: str, path: str, endpoint: Callable[..., Any], **route: Any) -> None:
    """Register ``endpoint`` at ``/fastapi{path}`` and, under ``@dispatch``, ``/dispatch{path}``."""
    methods = [method] if isinstance(method, str) else method
    app.add_api_route(f"/fastapi{path}", endpoint, methods=methods, **route)
    app.add_api_route(f"/dispatch{path}", dispatch(endpoint), methods=methods, **route)


@contextlib.contextmanager
def uvicorn_server(app: ASGIApp) -> Iterator[str]:
    """Run ``app`` on a real uvicorn server on a free loopback port; yield its base URL."""
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        for _ in range(500):
            if server.started:
                break
            threading.Event().wait(0.01)
        assert server.started, "uvicorn did not start"
        port = server.servers[0].sockets[0].getsockname()[1]
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


class Item(BaseModel):
    """A model with an alias, a default and an optional field."""

    name: str
    price: float = Field(serialization_alias="Price")
    tags: list[str] = Field(default_factory=list)
    note: str | None = None


class Account(BaseModel):
    """The declared response model of the leak tests."""

    id: int
    email: str


class AccountInDB(Account):
    """What the database layer returns: an Account plus the secret."""

    password: str


ITEM = Item(name="pen", price=1.5)

# --- status codes, injected Response, background tasks -----------------------------------------


@pytest.mark.parametrize("is_async", [True, False])
def test_route_status_code_is_kept(is_async: bool) -> None:
    app = FastAPI()
    twice(app, "POST", "/items", _returning(ITEM, is_async), status_code=201)
    fastapi, ours = both(app, "POST", "/items")
    assert fastapi.status_code == 201
    assert_identical(ours, fastapi)


def _returning(value: Any, is_async: bool, annotation: Any = None) -> Callable[..., Any]:
    if is_async:

        async def async_endpoint() -> Any:
            return value

        endpoint: Callable[..., Any] = async_endpoint
    else:

        def sync_endpoint() -> Any:
            return value

        endpoint = sync_endpoint
    if annotation is None:
        del endpoint.__annotations__["return"]
    else:
        endpoint.__annotations__["return"] = annotation
    return endpoint


@pytest.mark.parametrize("typed", [True, False])
def test_injected_response_status_headers_and_cookies_are_kept(typed: bool) -> None:
    app = FastAPI()

    async def endpoint(response: Response) -> Any:
        response.status_code = 202
        response.headers["x-request-cost"] = "3"
        response.headers.append("x-multi", "a")
        response.headers.append("x-multi", "b")
        response.set_cookie("session", "abc", httponly=True, max_age=60)
        response.set_cookie("theme", "dark")
        response.delete_cookie("old")
        return ITEM

    endpoint.__annotations__["return"] = Item if typed else Any
    if not typed:
        del endpoint.__annotations__["return"]
    twice(app, "GET", "/r", endpoint, status_code=201)
    fastapi, ours = both(app, "GET", "/r")
    assert fastapi.status_code == 202
    assert fastapi.headers.get_list("x-multi") == ["a", "b"]
    assert len(fastapi.headers.get_list("set-cookie")) == 3
    assert_identical(ours, fastapi)


@pytest.mark.parametrize("is_async", [True, False])
def test_background_tasks_run_after_the_response_is_sent(is_async: bool) -> None:
    events: list[str] = []

    async def async_endpoint(tasks: BackgroundTasks) -> dict[str, str]:
        tasks.add_task(events.append, "task")
        return {"ok": "yes"}

    def sync_endpoint(tasks: BackgroundTasks) -> dict[str, str]:
        tasks.add_task(events.append, "task")
        return {"ok": "yes"}

    app = FastAPI()
    twice(app, "GET", "/t", async_endpoint if is_async else sync_endpoint)
    recorded = RecordSend(app, events)
    for side in ("fastapi", "dispatch"):
        events.clear()
        answer = ask(recorded, "GET", f"/{side}/t")
        assert answer.json() == {"ok": "yes"}
        assert events == ["body sent", "task"], side


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


@pytest.mark.parametrize(
    ("status", "typed"), [(204, False), (304, False), (204, True), (304, True)]
)
def test_status_without_body_empties_it_like_fastapi(status: int, typed: bool) -> None:
    app = FastAPI()

    async def endpoint(response: Response) -> Any:
        response.status_code = status
        response.headers["etag"] = '"v1"'
        return ITEM

    if not typed:
        del endpoint.__annotations__["return"]
    else:
        endpoint.__annotations__["return"] = Item
    twice(app, "GET", "/e", endpoint)
    fastapi, ours = both(app, "GET", "/e")
    assert fastapi.status_code == status
    assert fastapi.content == b""
    assert_identical(ours, fastapi)


@pytest.mark.parametrize("typed", [True, False])
def test_status_205_sends_an_empty_body_with_a_matching_content_length(typed: bool) -> None:
    """Deliberate difference: FastAPI empties a 205 body but keeps the old content-length.

    Starlette only omits content-length for 1xx/204/304, so FastAPI 0.165 announces the
    length of the body it then drops; RFC 9110 section 15.3.6 forbids content in a 205.
    ``dispatch`` sends ``content-length: 0`` and the same other headers.
    """
    app = FastAPI()

    async def endpoint(response: Response) -> Any:
        response.status_code = 205
        return ITEM

    endpoint.__annotations__["return"] = Item if typed else Any
    if not typed:
        del endpoint.__annotations__["return"]
    twice(app, "GET", "/e", endpoint)
    fastapi, ours = both(app, "GET", "/e")
    assert fastapi.status_code == ours.status_code == 205
    assert fastapi.content == ours.content == b""
    assert fastapi.headers["content-length"] != "0"  # FastAPI's inconsistency, see above
    assert ours.headers["content-length"] == "0"
    others = [h for h in header_list(fastapi) if h[0] != "content-length"]
    assert [h for h in header_list(ours) if h[0] != "content-length"] == others


def test_route_status_204_returns_an_empty_body_like_fastapi() -> None:
    app = FastAPI()

    async def delete() -> None:
        return None

    twice(app, "DELETE", "/thing", delete, status_code=204)
    fastapi, ours = both(app, "DELETE", "/thing")
    assert fastapi.status_code == 204
    assert fastapi.content == b""
    assert_identical(ours, fastapi)


def test_empty_bodies_and_head_over_a_real_server() -> None:
    """Over the wire (uvicorn, h11 or httptools): 204/304 and HEAD answer as under FastAPI."""
    app = FastAPI()

    async def no_content(response: Response) -> dict[str, int]:
        response.status_code = 204
        return {"a": 1}

    async def not_modified(response: Response) -> dict[str, int]:
        response.status_code = 304
        return {"a": 1}

    twice(app, "GET", "/204", no_content)
    twice(app, "GET", "/304", not_modified)
    twice(app, ["GET", "HEAD"], "/item", _returning(ITEM, True, Item))  # type: ignore[arg-type]
    with uvicorn_server(app) as url, httpx.Client(base_url=url) as client:
        for method, path in [("GET", "/204"), ("GET", "/304"), ("HEAD", "/item")]:
            fastapi = client.request(method, f"/fastapi{path}")
            ours = client.request(method, f"/dispatch{path}")
            drop = {"date"}
            assert ours.status_code == fastapi.status_code
            assert [h for h in header_list(ours) if h[0] not in drop] == [
                h for h in header_list(fastapi) if h[0] not in drop
            ]
            assert ours.content == fastapi.content == b""
        get = client.get("/dispatch/item")
        head = client.head("/dispatch/item")
        assert head.headers["content-length"] == get.headers["content-length"]


# --- returned Responses pass through -------------------------------------------------------------


def test_returned_responses_pass_through_untouched(tmp_path: Path) -> None:
    file = tmp_path / "report.csv"
    file.write_bytes(b"a,b\n1,2\n")

    async def chunks() -> AsyncIterator[bytes]:
        yield b"one,"
        yield b"two"

    makers: dict[str, Callable[[], Response]] = {
        "streaming": lambda: StreamingResponse(chunks(), media_type="text/csv"),
        "file": lambda: FileResponse(file, filename="report.csv"),
        "json": lambda: JSONResponse({"x": 1}, status_code=418, headers={"x-a": "b"}),
        "plain": lambda: PlainTextResponse("hi", status_code=200),
        "redirect": lambda: RedirectResponse("/elsewhere"),
        "bytes": lambda: Response(b"\x00\x01", media_type="application/octet-stream"),
    }
    app = FastAPI()
    for name, make in makers.items():

        async def endpoint(response: Response, make: Callable[[], Response] = make) -> Any:
            response.headers["x-injected"] = "ignored by FastAPI for returned Responses"
            return make()

        del endpoint.__annotations__["return"]
        twice(app, "GET", f"/{name}", endpoint, status_code=201)
    for name in makers:
        fastapi, ours = both(app, "GET", f"/{name}", follow_redirects=False)
        assert "x-injected" not in fastapi.headers
        assert_identical(ours, fastapi)


def test_returned_response_is_the_very_object_sent() -> None:
    sent = JSONResponse({"x": 1})
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


@pytest.mark.parametrize(
    ("response_class", "value"),
    [
        (HTMLResponse, "<b>hi</b>"),
        (PlainTextResponse, "plain"),
        (JSONResponse, {"a": [1, 2]}),
    ],
)
def test_route_response_class_is_honoured(response_class: type[Response], value: Any) -> None:
    app = FastAPI()
    twice(app, "GET", "/c", _returning(value, True), response_class=response_class)
    fastapi, ours = both(app, "GET", "/c")
    assert fastapi.headers["content-type"].startswith(response_class.media_type or "")
    assert_identical(ours, fastapi)


def test_explicit_json_response_class_with_a_model() -> None:
    """With a response class set, FastAPI dumps to Python then renders: NaN answers 500 there.

    Deliberate difference: dispatch writes ``null``, as FastAPI's default typed path does.
    """
    app = FastAPI()
    nan_item = Item(name="x", price=float("nan"))
    twice(app, "GET", "/ok", _returning(ITEM, True, Item), response_class=JSONResponse)
    twice(app, "GET", "/nan", _returning(nan_item, True, Item), response_class=JSONResponse)
    fastapi, ours = both(app, "GET", "/ok")
    assert_identical(ours, fastapi)
    fastapi, ours = both(app, "GET", "/nan")
    assert fastapi.status_code == 500
    assert ours.status_code == 200
    assert ours.json() == {"name": "x", "Price": None, "tags": [], "note": None}


# --- sync endpoints in the threadpool, async on the loop ----------------------------------------


class Traced(BaseModel):
    """Records the thread its field is serialized in."""

    value: int

    @field_serializer("value")
    def _record(self, value: int) -> int:
        THREADS["serializer"] = threading.current_thread()
        return value


THREADS: dict[str, threading.Thread] = {}


def test_sync_endpoint_runs_in_a_worker_thread_async_on_the_loop() -> None:
    def sync_endpoint() -> Traced:
        THREADS["endpoint"] = threading.current_thread()
        return Traced(value=1)

    async def async_endpoint() -> Traced:
        THREADS["endpoint"] = threading.current_thread()
        return Traced(value=1)

    assert not inspect.iscoroutinefunction(dispatch(sync_endpoint))
    assert inspect.iscoroutinefunction(dispatch(async_endpoint))
    app = FastAPI()
    app.get("/sync")(dispatch(sync_endpoint))
    app.get("/async")(dispatch(async_endpoint))
    loop_thread = threading.current_thread()  # asyncio.run runs the loop in this thread

    THREADS.clear()
    assert ask(app, "GET", "/sync").json() == {"value": 1}
    assert THREADS["endpoint"] is not loop_thread
    # The issue: "FastAPI still runs it, and its serialization, in the threadpool".
    assert THREADS["serializer"] is THREADS["endpoint"]

    THREADS.clear()
    assert ask(app, "GET", "/async").json() == {"value": 1}
    assert THREADS["endpoint"] is loop_thread


def test_decorated_function_keeps_name_doc_signature_and_annotations() -> None:
    async def create_item(
        item: Item, q: Annotated[int, Query(ge=0)] = 0, *, request: Request
    ) -> Item:
        """Create an item."""
        return item

    decorated = dispatch(create_item)
    assert decorated.__name__ == "create_item"
    assert decorated.__qualname__ == create_item.__qualname__
    assert decorated.__doc__ == "Create an item."
    assert decorated.__module__ == create_item.__module__
    assert decorated.__annotations__ == create_item.__annotations__
    original = inspect.signature(create_item)
    seen = inspect.signature(decorated)
    assert seen.return_annotation == original.return_annotation
    # dispatch may add a keyword-only Request and/or Response parameter, which FastAPI injects
    # and leaves out of the OpenAPI document (the route's settings and the status, headers and
    # cookies set on the injected Response); every parameter of the endpoint is kept, in order.
    added = [p for name, p in seen.parameters.items() if name not in original.parameters]
    assert [p for p in seen.parameters.values() if p not in added] == list(
        original.parameters.values()
    )
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in added)
    # create_item declares a Request itself, so at most the Response parameter is added.
    assert [p.annotation for p in added] in ([], [Response])


# --- dependency injection ---------------------------------------------------------------------


def _current_user(x_user: Annotated[str, Header()] = "anon") -> str:
    return x_user


class NewItem(BaseModel):
    """A request body."""

    name: str
    quantity: int = 1


def test_dependency_injection_is_unchanged() -> None:
    async def endpoint(  # noqa: PLR0917 - an endpoint takes what it injects
        item_id: Annotated[int, PathParam(ge=1)],
        body: NewItem,
        request: Request,
        response: Response,
        user: Annotated[str, Depends(_current_user)],
        limit: Annotated[int, Query(le=100)] = 10,
        flag: Annotated[bool, Body(embed=True)] = False,
    ) -> dict[str, Any]:
        response.headers["x-method"] = request.method
        return {"id": item_id, "body": body, "user": user, "limit": limit, "flag": flag}

    app = FastAPI()
    twice(app, "PUT", "/items/{item_id}", endpoint)
    payload = {"body": {"name": "pen"}, "flag": True}
    fastapi, ours = both(app, "PUT", "/items/7?limit=5", json=payload, headers={"x-user": "ann"})
    assert fastapi.json()["body"] == {"name": "pen", "quantity": 1}
    assert_equivalent(ours, fastapi)
    assert ours.headers["x-method"] == "PUT"
    for path in ["/items/0", "/items/7?limit=500", "/items/x"]:
        fastapi, ours = both(app, "PUT", path, json=payload)
        assert fastapi.status_code == 422
        assert ours.json() == fastapi.json()
        assert ours.status_code == 422
    fastapi, ours = both(app, "PUT", "/items/7", content=b"{not json", headers=_json_header())
    assert ours.status_code == fastapi.status_code == 422


def _json_header() -> dict[str, str]:
    return {"content-type": "application/json"}


# --- the declared type rules ------------------------------------------------------------------


@pytest.mark.parametrize("declared", ["annotation", "response_model"])
def test_returned_subclass_does_not_leak_extra_fields(declared: str) -> None:
    row = AccountInDB(id=1, email="a@example.com", password="hunter2")
    app = FastAPI()
    if declared == "annotation":
        twice(app, "GET", "/me", _returning(row, True, Account))
    else:
        twice(app, "GET", "/me", _returning(row, True, AccountInDB), response_model=Account)
    fastapi, ours = both(app, "GET", "/me")
    assert fastapi.json() == {"id": 1, "email": "a@example.com"}
    assert_equivalent(ours, fastapi)
    assert b"hunter2" not in ours.content


@dataclasses.dataclass
class AccountRow:
    """An ORM-like object read through ``from_attributes``."""

    id: int
    email: str
    password: str


@pytest.mark.parametrize(
    "value",
    [
        {"id": 1, "email": "a@example.com", "password": "hunter2", "is_admin": True},
        AccountRow(1, "a@example.com", "hunter2"),
        [AccountInDB(id=1, email="a@example.com", password="hunter2")],
    ],
    ids=["dict", "attributes", "list"],
)
def test_extra_data_is_filtered_by_the_declared_type(value: Any) -> None:
    annotation = list[Account] if isinstance(value, list) else Account
    app = FastAPI()
    twice(app, "GET", "/me", _returning(value, True, annotation))
    fastapi, ours = both(app, "GET", "/me")
    assert fastapi.status_code == 200
    assert_equivalent(ours, fastapi)
    assert b"hunter2" not in ours.content
    assert b"is_admin" not in ours.content


@pytest.mark.parametrize(
    "value",
    [{"id": "not a number", "email": "x"}, {"email": "x"}, None, [1, 2], "text"],
)
@pytest.mark.parametrize("is_async", [True, False])
def test_value_not_fitting_the_declared_type_answers_500(value: Any, is_async: bool) -> None:
    app = FastAPI()
    twice(app, "GET", "/me", _returning(value, is_async, Account))
    fastapi, ours = both(app, "GET", "/me")
    assert fastapi.status_code == 500
    assert ours.status_code == 500
    with pytest.raises(ResponseValidationError):
        ask(app, "GET", "/fastapi/me", raise_errors=True)
    with pytest.raises(ResponseValidationError):
        ask(app, "GET", "/dispatch/me", raise_errors=True)


def test_unencodable_value_answers_500_and_logs_the_endpoint_and_type(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Opaque:
        __slots__ = ()

    app = FastAPI()

    async def opaque_endpoint():  # type: ignore[no-untyped-def]  # deliberately untyped
        return {"x": Opaque()}

    twice(app, "GET", "/o", opaque_endpoint)
    fastapi, ours = both(app, "GET", "/o")
    assert fastapi.status_code == ours.status_code == 500
    assert "opaque_endpoint" in caplog.text
    assert "Opaque" in caplog.text


# --- OpenAPI ----------------------------------------------------------------------------------


def _openapi_endpoints() -> list[tuple[str, str, Callable[..., Any], dict[str, Any]]]:
    async def list_items(
        q: Annotated[str | None, Query(max_length=20, description="Search")] = None,
        limit: int = 10,
    ) -> list[Item]:
        """List items, filtered by ``q``."""
        return []

    def get_item(item_id: Annotated[int, PathParam(ge=1)], x_token: str | None = None) -> Item:
        return ITEM

    async def create_item(item: NewItem, tasks: BackgroundTasks, response: Response) -> Item:
        return ITEM

    async def update(
        item_id: int, item: NewItem, user: Annotated[str, Depends(_current_user)]
    ) -> dict[str, Any]:
        return {}

    async def delete(item_id: int) -> None:
        return None

    async def untyped(request: Request):  # type: ignore[no-untyped-def]  # the untyped path
        return {}

    async def as_account(item_id: int) -> AccountInDB:
        return AccountInDB(id=1, email="e", password="p")

    return [
        ("GET", "/items", list_items, {"tags": ["items"], "summary": "All items"}),
        ("GET", "/items/{item_id}", get_item, {"responses": {404: {"description": "Missing"}}}),
        ("POST", "/items", create_item, {"status_code": 201, "tags": ["items"]}),
        ("PUT", "/items/{item_id}", update, {"deprecated": True, "operation_id": "upd"}),
        ("DELETE", "/items/{item_id}", delete, {"status_code": 204}),
        ("GET", "/raw", untyped, {"include_in_schema": True, "description": "Raw"}),
        (
            "GET",
            "/accounts/{item_id}",
            as_account,
            {"response_model": Account, "response_model_exclude": {"email"}},
        ),
        ("GET", "/html", untyped, {"response_class": HTMLResponse}),
    ]


def test_openapi_document_is_identical_with_and_without_the_decorator() -> None:
    plain, decorated = FastAPI(title="t"), FastAPI(title="t")
    for method, path, endpoint, options in _openapi_endpoints():
        plain.add_api_route(path, endpoint, methods=[method], **options)
        decorated.add_api_route(path, dispatch(endpoint), methods=[method], **options)
    assert orjson.dumps(decorated.openapi(), option=orjson.OPT_SORT_KEYS) == orjson.dumps(
        plain.openapi(), option=orjson.OPT_SORT_KEYS
    )
    assert len(plain.openapi()["paths"]) == 5


# --- string annotations (from __future__ import annotations) -----------------------------------

_FUTURE_MODULE = """
from __future__ import annotations

import datetime as dt
from typing import Annotated

from fastapi import FastAPI, Query, Response
from pydantic import BaseModel, Field

from orjson_dispatch import dispatch


class Event(BaseModel):
    title: str = Field(serialization_alias="Title")
    at: dt.datetime
    secret: str = Field(default="s", exclude=True)


app = FastAPI()


@app.get("/events/{event_id}")
@dispatch
async def get_event(
    event_id: int, response: Response, tz: Annotated[str, Query()] = "UTC"
) -> Event:
    response.headers["x-tz"] = tz
    return Event(title=f"e{event_id}", at=dt.datetime(2024, 1, 1, 12, 30))


@app.get("/plain/events/{event_id}")
async def get_event_plain(
    event_id: int, response: Response, tz: Annotated[str, Query()] = "UTC"
) -> Event:
    response.headers["x-tz"] = tz
    return Event(title=f"e{event_id}", at=dt.datetime(2024, 1, 1, 12, 30))
"""


def test_string_annotations_from_future_import(tmp_path: Path) -> None:
    source = tmp_path / "future_app.py"
    source.write_text(textwrap.dedent(_FUTURE_MODULE))
    spec = importlib.util.spec_from_file_location("future_app", source)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["future_app"] = module
    try:
        spec.loader.exec_module(module)
        app: FastAPI = module.app
        ours = ask(app, "GET", "/events/3?tz=CET")
        fastapi = ask(app, "GET", "/plain/events/3?tz=CET")
    finally:
        del sys.modules["future_app"]
    assert fastapi.json() == {"Title": "e3", "at": "2024-01-01T12:30:00"}
    assert_equivalent(ours, fastapi)
    schema = app.openapi()
    decorated_op = schema["paths"]["/events/{event_id}"]["get"]
    plain_op = schema["paths"]["/plain/events/{event_id}"]["get"]
    for key in ("parameters", "responses"):
        assert decorated_op[key] == plain_op[key]


# --- Starlette --------------------------------------------------------------------------------


def test_starlette_route_with_a_request_taking_endpoint() -> None:
    import datetime as dt

    async def async_endpoint(request: Request) -> dict[str, Any]:
        return {"path": request.url.path, "when": dt.date(2024, 2, 29), "items": [ITEM]}

    def sync_endpoint(request: Request) -> dict[str, Any]:
        return {"thread": threading.current_thread() is not LOOP_THREAD[0], "n": 2**70}

    LOOP_THREAD[:] = [threading.current_thread()]
    app = Starlette(
        routes=[Route("/a", dispatch(async_endpoint)), Route("/s", dispatch(sync_endpoint))]
    )
    answer = ask(app, "GET", "/a")
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "application/json"
    assert answer.json() == {
        "path": "/a",
        "when": "2024-02-29",
        "items": [{"name": "pen", "Price": 1.5, "tags": [], "note": None}],
    }
    answer = ask(app, "GET", "/s")
    assert answer.status_code == 200
    assert answer.json() == {"thread": True, "n": 2**70}


LOOP_THREAD: list[threading.Thread] = []


# --- misuse fails at decoration time --------------------------------------------------------------


def a_generator() -> Iterator[int]:
    yield 1


async def an_async_generator() -> AsyncIterator[int]:
    yield 1


class AnEndpointClass:
    """Classes are callables, but not endpoint functions."""

    def __call__(self) -> dict[str, int]:
        return {}


def test_non_callable_is_refused() -> None:
    with pytest.raises(TypeError, match="42"):
        dispatch(42)  # type: ignore[call-overload]


@pytest.mark.parametrize(
    "function",
    [a_generator, an_async_generator, AnEndpointClass],
    ids=["generator", "async-generator", "class"],
)
def test_generators_and_classes_are_refused_naming_the_function(function: Any) -> None:
    with pytest.raises(TypeError, match=function.__name__):
        dispatch(function)


def test_unknown_option_is_refused_naming_the_function() -> None:
    def endpoint_with_typo() -> dict[str, int]:
        return {}

    with pytest.raises(
        TypeError, match=r"statuscode.*endpoint_with_typo|endpoint_with_typo.*statuscode"
    ):
        dispatch(statuscode=201)(endpoint_with_typo)  # type: ignore[call-overload]


@pytest.mark.parametrize(
    "option", [orjson.OPT_NAIVE_UTC, orjson.OPT_UTC_Z, orjson.OPT_NON_STR_KEYS, 1 << 20]
)
def test_content_changing_orjson_option_is_refused(option: int) -> None:
    def endpoint_with_option() -> dict[str, int]:
        return {}

    with pytest.raises(TypeError, match="option"):
        dispatch(option=option)(endpoint_with_option)


@pytest.mark.parametrize(
    "option", [orjson.OPT_INDENT_2, orjson.OPT_SORT_KEYS, orjson.OPT_APPEND_NEWLINE]
)
def test_layout_options_are_accepted(option: int) -> None:
    @dispatch(option=option)
    async def endpoint() -> dict[str, int]:
        return {"b": 1, "a": 2}

    app = FastAPI()
    app.get("/x")(endpoint)
    answer = ask(app, "GET", "/x")
    assert answer.json() == {"b": 1, "a": 2}
    assert answer.content == orjson.dumps({"b": 1, "a": 2}, option=option)


def test_decorator_status_headers_and_media_type() -> None:
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


# --- exceptions, dependencies with yield, other callables ---------------------------------------


def test_http_exception_and_yield_dependencies_behave_as_in_fastapi() -> None:
    from fastapi import HTTPException

    events: list[str] = []

    async def resource() -> AsyncIterator[int]:
        events.append("open")
        yield 1
        events.append("close")

    async def missing(item_id: int, handle: Annotated[int, Depends(resource)]) -> Item:
        events.append("endpoint")
        if item_id == 0:
            raise HTTPException(404, "no such item", headers={"x-reason": "gone"})
        return ITEM

    app = FastAPI()
    twice(app, "GET", "/items/{item_id}", missing)
    for path in ("/items/0", "/items/1"):
        events.clear()
        fastapi = ask(app, "GET", f"/fastapi{path}")
        fastapi_events = list(events)
        events.clear()
        ours = ask(app, "GET", f"/dispatch{path}")
        # After an exception FastAPI throws it into the dependency at its yield: no "close".
        assert events == fastapi_events
        assert fastapi_events == ["open", "endpoint"] + (["close"] if path == "/items/1" else [])
        assert_identical(ours, fastapi)


def test_bound_methods_and_partials_are_endpoints_too() -> None:
    import functools

    class Service:
        async def lookup(self, q: int = 1) -> dict[str, int]:
            return {"q": q}

    async def scaled(factor: int, q: int = 1) -> dict[str, int]:
        return {"q": q * factor}

    app = FastAPI()
    twice(app, "GET", "/method", Service().lookup)
    twice(app, "GET", "/partial", functools.partial(scaled, factor=5))
    for path in ("/method?q=3", "/partial?q=2"):
        fastapi, ours = both(app, "GET", path)
        assert fastapi.status_code == 200
        assert_identical(ours, fastapi)
