"""The endpoint stays the user's: FastAPI reads its signature, injects its parameters and
dependencies, documents it, and calls it whatever its shape, as without ``@dispatch``.

Functions keep their name, docstring, signature and (string) annotations; partials, callable
objects (annotations evaluated or postponed, ``callable_endpoints.py``), async wrappers, a
second ``@dispatch`` and a route class applying ``dispatch`` are served as FastAPI serves them;
parameters, dependencies (with yield) and HTTP exceptions behave as under FastAPI; the OpenAPI
document is the same; a plain Starlette route's endpoint takes the request.
"""

import datetime as dt
import functools
import importlib.util
import inspect
import sys
import textwrap
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Annotated, Any

import orjson
import pytest
from fastapi import APIRouter, Body, Depends, FastAPI, HTTPException, Query, Request, Response
from fastapi import Path as PathParam
from fastapi.routing import APIRoute
from starlette.applications import Starlette
from starlette.routing import Route

from orjson_dispatch import dispatch
from tests.orjson_dispatch import callable_endpoints
from tests.orjson_dispatch.apps import Ask, Decorate, Twin
from tests.orjson_dispatch.compare import assert_answers_alike, assert_equivalent, assert_identical
from tests.orjson_dispatch.samples import ITEM, Item, NewItem, current_user, openapi_endpoints
from tests.orjson_dispatch.versions import FASTAPI

# --- signature ------------------------------------------------------------------------------------


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


def test_string_annotations_from_future_import(tmp_path: Path, ask: Ask) -> None:
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


# --- endpoints that are not plain functions -------------------------------------------------------


EVALUATED, POSTPONED = callable_endpoints, callable_endpoints.postponed()

# What FastAPI itself cannot serve before these releases: nothing to compare with.
_EVALUATES = pytest.mark.skipif(
    FASTAPI < (0, 123, 7),
    reason="FastAPI evaluates the postponed annotations of partials and callable objects "
    "from 0.123.7 (inspect.signature(eval_str=True))",
)
_AWAITS_CALL = pytest.mark.skipif(
    FASTAPI < (0, 124),
    reason="FastAPI awaits an object's async __call__ from 0.124 (Dependant.is_coroutine_callable)",
)


@pytest.mark.parametrize(
    "endpoint",
    [
        pytest.param(POSTPONED.ITEM_PARTIAL, id="postponed-partial", marks=_EVALUATES),
        pytest.param(POSTPONED.AsyncItem(), id="postponed-async-call", marks=_EVALUATES),
        pytest.param(POSTPONED.SyncItem(), id="postponed-sync-call", marks=_EVALUATES),
        pytest.param(EVALUATED.ITEM_PARTIAL, id="partial"),
        pytest.param(EVALUATED.AsyncItem(), id="async-call", marks=_AWAITS_CALL),
        pytest.param(EVALUATED.SyncItem(), id="sync-call"),
    ],
)
def test_partial_and_callable_object_endpoints_are_served_as_fastapi_serves_them(
    endpoint: Any,
) -> None:
    def build(decorate: Decorate) -> FastAPI:
        app = FastAPI()
        app.get("/x")(decorate(endpoint))
        return app

    assert_answers_alike(build, "/x?q=3", "/openapi.json")


def async_wrapper(endpoint: Callable[..., Any]) -> Callable[..., Any]:
    """An ``async def`` wrapper calling a sync function, as FastAPI's own tests have one."""

    @functools.wraps(endpoint)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        return endpoint(*args, **kwargs)

    return wrapper


@pytest.mark.parametrize(
    "dispatch_on_top", [True, False], ids=["dispatch-on-top", "dispatch-below"]
)
def test_async_wrapper_around_sync_endpoint(dispatch_on_top: bool) -> None:
    def sync_item(q: int = 1) -> Item:
        return Item(name=f"w{q}", price=q)

    def build(decorate: Decorate) -> FastAPI:
        endpoint = (
            decorate(async_wrapper(sync_item))
            if dispatch_on_top
            else async_wrapper(decorate(sync_item))
        )
        app = FastAPI()
        app.get("/x")(endpoint)
        return app

    assert_answers_alike(build, "/x?q=4")


def test_dispatch_twice_is_dispatch_once() -> None:
    def build(decorate: Decorate) -> FastAPI:
        app = FastAPI()

        @app.get("/x")
        @decorate
        @decorate
        def x(q: int = 1) -> Item:
            return Item(name=f"x{q}", price=q)

        return app

    assert_answers_alike(build, "/x?q=2", "/openapi.json")


@pytest.mark.parametrize(
    "endpoint_decorated", [False, True], ids=["plain-endpoint", "dispatched-endpoint"]
)
def test_route_class_applying_dispatch(endpoint_decorated: bool) -> None:
    def build(decorate: Decorate) -> FastAPI:
        class DecoratingRoute(APIRoute):
            def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
                super().__init__(path, decorate(endpoint), **kwargs)

        router = APIRouter(route_class=DecoratingRoute)

        def x(q: int = 1) -> Item:
            return Item(name=f"x{q}", price=q)

        router.get("/x")(decorate(x) if endpoint_decorated else x)
        app = FastAPI()
        app.include_router(router)
        app.include_router(router, prefix="/again")
        return app

    assert_answers_alike(build, "/x?q=2", "/again/x?q=3", "/openapi.json")


# --- parameters and dependencies ------------------------------------------------------------------


def test_dependency_injection_is_unchanged(twin: Twin) -> None:
    async def endpoint(  # noqa: PLR0917 - an endpoint takes what it injects
        item_id: Annotated[int, PathParam(ge=1)],
        body: NewItem,
        request: Request,
        response: Response,
        user: Annotated[str, Depends(current_user)],
        limit: Annotated[int, Query(le=100)] = 10,
        flag: Annotated[bool, Body(embed=True)] = False,
    ) -> dict[str, Any]:
        response.headers["x-method"] = request.method
        return {"id": item_id, "body": body, "user": user, "limit": limit, "flag": flag}

    twin.add("PUT", "/items/{item_id}", endpoint)
    payload = {"body": {"name": "pen"}, "flag": True}
    fastapi, ours = twin.both("PUT", "/items/7?limit=5", json=payload, headers={"x-user": "ann"})
    assert fastapi.json()["body"] == {"name": "pen", "quantity": 1}
    assert_equivalent(ours, fastapi)
    assert ours.headers["x-method"] == "PUT"
    for path in ["/items/0", "/items/7?limit=500", "/items/x"]:
        fastapi, ours = twin.both("PUT", path, json=payload)
        assert fastapi.status_code == 422
        assert ours.json() == fastapi.json()
        assert ours.status_code == 422
    json_header = {"content-type": "application/json"}
    fastapi, ours = twin.both("PUT", "/items/7", content=b"{not json", headers=json_header)
    assert ours.status_code == fastapi.status_code == 422


def test_http_exception_and_yield_dependencies_behave_as_in_fastapi(twin: Twin, ask: Ask) -> None:
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

    twin.add("GET", "/items/{item_id}", missing)
    for path in ("/items/0", "/items/1"):
        events.clear()
        fastapi = ask(twin.app, "GET", f"/fastapi{path}")
        fastapi_events = list(events)
        events.clear()
        ours = ask(twin.app, "GET", f"/dispatch{path}")
        # After an exception FastAPI throws it into the dependency at its yield: no "close".
        assert events == fastapi_events
        assert fastapi_events == ["open", "endpoint"] + (["close"] if path == "/items/1" else [])
        assert_identical(ours, fastapi)


# --- the OpenAPI document -------------------------------------------------------------------------


def test_openapi_document_is_identical_with_and_without_the_decorator() -> None:
    plain, decorated = FastAPI(title="t"), FastAPI(title="t")
    for method, path, endpoint, options in openapi_endpoints():
        plain.add_api_route(path, endpoint, methods=[method], **options)
        decorated.add_api_route(path, dispatch(endpoint), methods=[method], **options)
    assert orjson.dumps(decorated.openapi(), option=orjson.OPT_SORT_KEYS) == orjson.dumps(
        plain.openapi(), option=orjson.OPT_SORT_KEYS
    )
    assert len(plain.openapi()["paths"]) == 5


# --- a plain Starlette route ----------------------------------------------------------------------


def test_starlette_route_with_a_request_taking_endpoint(ask: Ask) -> None:
    loop_thread = threading.current_thread()  # asyncio.run runs the loop in this thread

    async def async_endpoint(request: Request) -> dict[str, Any]:
        return {"path": request.url.path, "when": dt.date(2024, 2, 29), "items": [ITEM]}

    def sync_endpoint(request: Request) -> dict[str, Any]:
        return {"thread": threading.current_thread() is not loop_thread, "n": 2**70}

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
