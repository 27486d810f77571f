"""One FastAPI application streaming chat-completion chunks every way a user could.

``GET /<configuration>?n=N`` streams ``N`` chunks (:mod:`benchmarks.chunks`) as JSON Lines or
as Server-Sent Events whose ``data`` is the chunk's JSON. The other query parameters shape the
generator as a model server's would run: ``burst=B`` passes through the event loop after every
``B`` chunks (``wait_us=W``: sleeps ``W`` microseconds there), as a generator awaiting its
engine does; without them every chunk is ready at once. ``stamp=true`` writes the time of the
``yield`` (CLOCK_MONOTONIC, microseconds) into each chunk's ``created``, from which the client
computes the time from ``yield`` to its read. As in the serialization suite, the harness starts
one uvicorn process per configuration and streams only from its route.
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

from benchmarks.chunks import Chunk, chunk_dicts, chunk_models
from orjson_dispatch import DispatchRoute, dispatch

app = FastAPI(title="streaming benchmark", openapi_url=None, docs_url=None, redoc_url=None)
MODELS = chunk_models()
DICTS = chunk_dicts()
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
    """The chunks as models, produced as ``shape`` says."""
    return _produce(shape, MODELS, lambda chunk, now: chunk.model_copy(update={"created": now}))


def dicts(shape: Shape) -> AsyncIterator[dict[str, Any]]:
    """The chunks as ready dicts, produced as ``shape`` says."""
    return _produce(shape, DICTS, lambda chunk, now: {**chunk, "created": now})


@app.get("/health")
async def health() -> Response:
    """Answer 200 once the application is up."""
    return Response(b"ok", media_type="text/plain")


@app.get("/fastapi-jsonl-typed")
async def fastapi_jsonl_typed(shape: ShapeQuery) -> AsyncIterable[Chunk]:
    """FastAPI's JSON Lines stream (FastAPI >= 0.134): each item validated and dumped."""
    async for chunk in models(shape):
        yield chunk


# Without an annotation FastAPI streams each item through jsonable_encoder + json.dumps.
@app.get("/fastapi-jsonl-untyped")
async def fastapi_jsonl_untyped(shape: ShapeQuery):  # type: ignore[no-untyped-def]
    """FastAPI's JSON Lines stream of dicts, untyped."""
    async for chunk in dicts(shape):
        yield chunk


@app.get("/fastapi-sse-typed", response_class=EventSourceResponse)
async def fastapi_sse_typed(shape: ShapeQuery) -> AsyncIterable[Chunk]:
    """FastAPI's Server-Sent Events (FastAPI >= 0.135), typed chunks."""
    async for chunk in models(shape):
        yield chunk


@app.get("/fastapi-sse-untyped", response_class=EventSourceResponse)
async def fastapi_sse_untyped(shape: ShapeQuery):  # type: ignore[no-untyped-def]
    """FastAPI's Server-Sent Events of dicts, untyped."""
    async for chunk in dicts(shape):
        yield chunk


@app.get("/sse-starlette")
async def sse_starlette(shape: ShapeQuery) -> StarletteEventSourceResponse:
    """sse-starlette's ``EventSourceResponse``, each chunk dumped by ``model_dump_json``."""

    async def events() -> AsyncIterator[dict[str, str]]:
        async for chunk in models(shape):
            yield {"data": chunk.model_dump_json()}

    # sep="\n": the line ending FastAPI uses (sse-starlette's default is "\r\n").
    return StarletteEventSourceResponse(events(), sep="\n")


@app.get("/orjson-limit")
async def orjson_limit(shape: ShapeQuery) -> StreamingResponse:
    """The hand-written stream: a ``StreamingResponse`` of ``orjson.dumps(d)`` lines."""

    async def lines() -> AsyncIterator[bytes]:
        async for chunk in dicts(shape):
            yield orjson.dumps(chunk) + b"\n"

    return StreamingResponse(lines(), media_type="application/jsonl")


@app.get("/dispatch-jsonl")
@dispatch
async def dispatch_jsonl(shape: ShapeQuery) -> AsyncIterable[Chunk]:
    """JSON Lines from ``@dispatch`` on the generator endpoint."""
    async for chunk in models(shape):
        yield chunk


@app.get("/dispatch-sse", response_class=EventSourceResponse)
@dispatch
async def dispatch_sse(shape: ShapeQuery) -> AsyncIterable[Chunk]:
    """Server-Sent Events from ``@dispatch`` on the generator endpoint."""
    async for chunk in models(shape):
        yield chunk


dispatch_router = APIRouter(route_class=DispatchRoute)


@dispatch_router.get("/dispatch-route-jsonl")
async def dispatch_route_jsonl(shape: ShapeQuery) -> AsyncIterable[Chunk]:
    """JSON Lines through ``APIRouter(route_class=DispatchRoute)``."""
    async for chunk in models(shape):
        yield chunk


@dispatch_router.get("/dispatch-route-sse", response_class=EventSourceResponse)
async def dispatch_route_sse(shape: ShapeQuery) -> AsyncIterable[Chunk]:
    """Server-Sent Events through ``APIRouter(route_class=DispatchRoute)``."""
    async for chunk in models(shape):
        yield chunk


app.include_router(dispatch_router)
