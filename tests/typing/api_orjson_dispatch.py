# pyright: strict
"""The public API of orjson_dispatch, used the way its users write it.

Never run, only type-checked: ``mypy --strict`` and ``pyright`` (strict) must both
accept every line, and every expected type is spelled out as an annotation. The
decorator must keep the endpoint's exact type (ParamSpec), so calls to a decorated
function type-check as calls to the original.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

import orjson
from fastapi import APIRouter, BackgroundTasks, FastAPI, Response
from pydantic import BaseModel
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

import orjson_dispatch
from orjson_dispatch import (
    DispatchRoute,
    JSONLines,
    ServerSentEvents,
    StreamSettings,
    dispatch,
    dispatched_routes,
    dumps,
    json_lines,
    server_sent_events,
)


class Item(BaseModel):
    id: int
    name: str


app = FastAPI()


@app.get("/items/{item_id}")
@dispatch
async def read_item(item_id: int) -> Item:
    return Item(id=item_id, name="x")


@app.post("/items", status_code=201)
@dispatch(
    status_code=201,
    headers={"x-request-id": "1"},
    media_type="application/json",
    option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS,
    by_alias=True,
    exclude_unset=False,
    exclude_defaults=False,
    exclude_none=True,
)
def create_item(item: Item, response: Response, tasks: BackgroundTasks) -> dict[str, int]:
    return {"id": item.id}


@app.get("/untyped")
@dispatch()
def untyped():  # type: ignore[no-untyped-def]
    return {"a": 1}


# The decorated functions keep their exact types.
async_endpoint: Callable[[int], Coroutine[Any, Any, Item]] = read_item
sync_endpoint: Callable[[Item, Response, BackgroundTasks], dict[str, int]] = create_item


async def call_async() -> Item:
    return await read_item(1)


def call_sync() -> dict[str, int]:
    return create_item(Item(id=1, name="x"), Response(), BackgroundTasks())


# A decorator made once and applied to several endpoints.
created: Callable[[Callable[[], Item]], Callable[[], Item]] = dispatch(status_code=201)


# Starlette: the endpoint takes the request and returns data.
async def homepage(request: Request) -> dict[str, Any]:
    return {"path": request.url.path}


wrapped_homepage: Callable[[Request], Coroutine[Any, Any, dict[str, Any]]] = dispatch(homepage)
starlette_app = Starlette(routes=[Route("/", dispatch(homepage))])

# dumps: the conversion on its own, always bytes.
untyped_body: bytes = dumps({"ids": [1, 2, 3]})
typed_body: bytes = dumps(Item(id=1, name="x"), response_model=Item)
list_body: bytes = dumps([Item(id=1, name="x")], response_model=list[Item], exclude_none=True)
options_body: bytes = dumps(
    {"b": 1, "a": 2},
    by_alias=False,
    exclude_unset=True,
    exclude_defaults=True,
    include={"a"},
    exclude={"b"},
    option=orjson.OPT_SORT_KEYS,
)


# One path, JSON or a stream, on a DispatchRoute subclass with its stream settings.
class ModelRoute(DispatchRoute):
    stream_settings = StreamSettings(ping_interval=5, send_timeout=30.0, buffer_bytes=1 << 20)


router = APIRouter(route_class=ModelRoute)


async def tokens() -> AsyncIterator[Item]:
    yield Item(id=1, name="x")


@router.post("/v1/items")
async def items(stream: bool = False) -> Item | ServerSentEvents[Item]:
    if stream:
        return ServerSentEvents(tokens())
    return Item(id=1, name="x")


lines: JSONLines[Item] = JSONLines([Item(id=1, name="x")])


# A hand-built stream moved to the helpers, its bytes kept.
async def hand_built(request: Request) -> StreamingResponse:
    if request.query_params.get("lines"):
        return json_lines(tokens(), media_type="application/x-ndjson", buffer_bytes=1 << 16)
    return server_sent_events(tokens(), bare=True, send_timeout=30.0)


app.include_router(router)
# Which routes are served with orjson.
served: dict[str, bool] = dispatched_routes(app)
# A finished app put on the route class in one call (here a subclass with stream settings).
orjson_dispatch.use_dispatch_routes(app, ModelRoute)
