"""One FastAPI application streaming chat-completion chunks every way a user could.

``GET /<configuration>?n=N`` streams ``N`` chunks (:mod:`benchmarks.chunks`) as JSON Lines
or as Server-Sent Events whose ``data`` is the chunk's JSON. As in the serialization suite,
the harness starts one uvicorn process per configuration and streams only from its route.
The generators yield ready chunks without waiting, so that what is measured is the cost of
turning each chunk into bytes on the wire, not the production of the chunks.
"""

from collections.abc import AsyncIterable, AsyncIterator

import orjson
from fastapi import APIRouter, FastAPI
from fastapi.responses import Response, StreamingResponse
from fastapi.sse import EventSourceResponse
from sse_starlette import EventSourceResponse as StarletteEventSourceResponse

import orjson_dispatch
from benchmarks.chunks import Chunk, chunk_dicts, chunk_models

app = FastAPI(title="streaming benchmark", openapi_url=None, docs_url=None, redoc_url=None)
MODELS = chunk_models()
DICTS = chunk_dicts()


@app.get("/health")
async def health() -> Response:
    """Answer 200 once the application is up."""
    return Response(b"ok", media_type="text/plain")


@app.get("/fastapi-jsonl-typed")
async def fastapi_jsonl_typed(n: int) -> AsyncIterable[Chunk]:
    """FastAPI's JSON Lines stream (FastAPI >= 0.134): each item validated and dumped."""
    for index in range(n):
        yield MODELS[index % len(MODELS)]


# Without an annotation FastAPI streams each item through jsonable_encoder + json.dumps.
@app.get("/fastapi-jsonl-untyped")
async def fastapi_jsonl_untyped(n: int):  # type: ignore[no-untyped-def]
    """FastAPI's JSON Lines stream of dicts, untyped."""
    for index in range(n):
        yield DICTS[index % len(DICTS)]


@app.get("/fastapi-sse-typed", response_class=EventSourceResponse)
async def fastapi_sse_typed(n: int) -> AsyncIterable[Chunk]:
    """FastAPI's Server-Sent Events (FastAPI >= 0.135), typed chunks."""
    for index in range(n):
        yield MODELS[index % len(MODELS)]


@app.get("/fastapi-sse-untyped", response_class=EventSourceResponse)
async def fastapi_sse_untyped(n: int):  # type: ignore[no-untyped-def]
    """FastAPI's Server-Sent Events of dicts, untyped."""
    for index in range(n):
        yield DICTS[index % len(DICTS)]


@app.get("/sse-starlette")
async def sse_starlette(n: int) -> StarletteEventSourceResponse:
    """sse-starlette's ``EventSourceResponse``, each chunk dumped by ``model_dump_json``."""

    async def events() -> AsyncIterator[dict[str, str]]:
        for index in range(n):
            yield {"data": MODELS[index % len(MODELS)].model_dump_json()}

    # sep="\n": the line ending FastAPI uses (sse-starlette's default is "\r\n").
    return StarletteEventSourceResponse(events(), sep="\n")


@app.get("/orjson-limit")
async def orjson_limit(n: int) -> StreamingResponse:
    """The limit: a hand-written ``StreamingResponse`` of ``orjson.dumps(d)`` lines."""

    async def lines() -> AsyncIterator[bytes]:
        for index in range(n):
            yield orjson.dumps(DICTS[index % len(DICTS)]) + b"\n"

    return StreamingResponse(lines(), media_type="application/jsonl")


# The orjson-dispatch streaming configurations: the routes exist once orjson_dispatch
# ships DispatchRoute (and @dispatch on generator endpoints); benchmarks.configs lists them
# under the same condition.
_ROUTE_CLASS = getattr(orjson_dispatch, "DispatchRoute", None)
if _ROUTE_CLASS is not None:
    dispatch_router = APIRouter(route_class=_ROUTE_CLASS)

    @dispatch_router.get("/dispatch-route-jsonl")
    async def dispatch_route_jsonl(n: int) -> AsyncIterable[Chunk]:
        """JSON Lines through ``APIRouter(route_class=DispatchRoute)``."""
        for index in range(n):
            yield MODELS[index % len(MODELS)]

    @dispatch_router.get("/dispatch-route-sse", response_class=EventSourceResponse)
    async def dispatch_route_sse(n: int) -> AsyncIterable[Chunk]:
        """Server-Sent Events through ``APIRouter(route_class=DispatchRoute)``."""
        for index in range(n):
            yield MODELS[index % len(MODELS)]

    app.include_router(dispatch_router)

    @app.get("/dispatch-jsonl")
    @orjson_dispatch.dispatch
    async def dispatch_jsonl(n: int) -> AsyncIterable[Chunk]:
        """JSON Lines from ``@dispatch`` on the generator endpoint."""
        for index in range(n):
            yield MODELS[index % len(MODELS)]

    @app.get("/dispatch-sse", response_class=EventSourceResponse)
    @orjson_dispatch.dispatch
    async def dispatch_sse(n: int) -> AsyncIterable[Chunk]:
        """Server-Sent Events from ``@dispatch`` on the generator endpoint."""
        for index in range(n):
            yield MODELS[index % len(MODELS)]
