"""One FastAPI app streaming chat-completion chunks every way a user could.

``GET /<configuration>?n=N`` streams ``N`` chunks (:func:`benchmarks.bodies.chunk_models`) as
JSON Lines or as Server-Sent Events whose ``data`` is the chunk's JSON. ``burst=B`` passes
through the event loop after every ``B`` chunks (sleeping ``wait_us`` microseconds there), as a
generator awaiting its engine does; without it every chunk is ready at once. ``stamp=true``
writes the time of the ``yield`` (CLOCK_MONOTONIC, microseconds) into each chunk's ``created``.
"""

import asyncio
import time
from collections.abc import AsyncIterable, AsyncIterator, Callable, Sequence
from typing import Annotated, Any, TypeVar

import orjson
from fastapi import APIRouter, FastAPI, Query
from fastapi.responses import Response, StreamingResponse
from fastapi.sse import EventSourceResponse
from pydantic import BaseModel
from sse_starlette import EventSourceResponse as StarletteEventSourceResponse

from benchmarks.bodies import Chunk, chunk_dicts, chunk_models
from orjson_dispatch import DispatchRoute, dispatch

app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
dispatch_router = APIRouter(route_class=DispatchRoute)
_T = TypeVar("_T")


class Shape(BaseModel):
    """How the generator produces its chunks (the query parameters)."""

    n: int
    burst: int = 0
    wait_us: int = 0
    stamp: bool = False


ShapeQuery = Annotated[Shape, Query()]


async def _produce(
    shape: Shape, cycle: Sequence[_T], stamped: Callable[[_T, int], _T]
) -> AsyncIterator[_T]:
    for index in range(shape.n):
        if shape.burst and index and not index % shape.burst:
            await asyncio.sleep(shape.wait_us / 1e6)
        item = cycle[index % len(cycle)]
        yield stamped(item, time.monotonic_ns() // 1000) if shape.stamp else item


def models(shape: Shape) -> AsyncIterator[Chunk]:
    return _produce(shape, chunk_models(), lambda c, now: c.model_copy(update={"created": now}))


def dicts(shape: Shape) -> AsyncIterator[dict[str, Any]]:
    return _produce(shape, chunk_dicts(), lambda chunk, now: {**chunk, "created": now})


@app.get("/health")
async def health() -> Response:
    return Response(b"ok", media_type="text/plain")


@app.get("/fastapi-jsonl-typed")  # FastAPI >= 0.134: each item validated and dumped
async def fastapi_jsonl_typed(shape: ShapeQuery) -> AsyncIterable[Chunk]:
    async for chunk in models(shape):
        yield chunk


@app.get("/fastapi-jsonl-untyped")  # no annotation: jsonable_encoder + json.dumps per item
async def fastapi_jsonl_untyped(shape: ShapeQuery):  # type: ignore[no-untyped-def]
    async for chunk in dicts(shape):
        yield chunk


@app.get("/fastapi-sse-typed", response_class=EventSourceResponse)  # FastAPI >= 0.135
async def fastapi_sse_typed(shape: ShapeQuery) -> AsyncIterable[Chunk]:
    async for chunk in models(shape):
        yield chunk


@app.get("/fastapi-sse-untyped", response_class=EventSourceResponse)
async def fastapi_sse_untyped(shape: ShapeQuery):  # type: ignore[no-untyped-def]
    async for chunk in dicts(shape):
        yield chunk


@app.get("/sse-starlette")
async def sse_starlette(shape: ShapeQuery) -> StarletteEventSourceResponse:
    async def events() -> AsyncIterator[dict[str, str]]:
        async for chunk in models(shape):
            yield {"data": chunk.model_dump_json()}

    # sep="\n": the line ending FastAPI uses (sse-starlette's default is "\r\n").
    return StarletteEventSourceResponse(events(), sep="\n")


@app.get("/orjson-limit")  # the hand-written stream
async def orjson_limit(shape: ShapeQuery) -> StreamingResponse:
    async def lines() -> AsyncIterator[bytes]:
        async for chunk in dicts(shape):
            yield orjson.dumps(chunk) + b"\n"

    return StreamingResponse(lines(), media_type="application/jsonl")


@app.get("/dispatch-jsonl")
@dispatch
async def dispatch_jsonl(shape: ShapeQuery) -> AsyncIterable[Chunk]:
    async for chunk in models(shape):
        yield chunk


@app.get("/dispatch-sse", response_class=EventSourceResponse)
@dispatch
async def dispatch_sse(shape: ShapeQuery) -> AsyncIterable[Chunk]:
    async for chunk in models(shape):
        yield chunk


@dispatch_router.get("/dispatch-route-jsonl")
async def dispatch_route_jsonl(shape: ShapeQuery) -> AsyncIterable[Chunk]:
    async for chunk in models(shape):
        yield chunk


@dispatch_router.get("/dispatch-route-sse", response_class=EventSourceResponse)
async def dispatch_route_sse(shape: ShapeQuery) -> AsyncIterable[Chunk]:
    async for chunk in models(shape):
        yield chunk


app.include_router(dispatch_router)
