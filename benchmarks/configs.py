"""The server configurations each suite compares, and the baselines of its ratios.

A configuration is one uvicorn process: the ASGI app, the endpoint's path (``{body}`` stands for
the body's name), a path that answers 200 once the app is up, uvicorn's ``--http``,
``--workers`` and ``--loop`` (None: uvloop when installed, else asyncio); ``sdk_bodies``: whether
it serves the ``sdk-*`` bodies (Litestar's msgspec Structs mirror the synthetic models only).
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class ServerConfig:
    """One way to run a server; ``name`` is its key in URLs and results, ``label`` in tables."""

    name: str
    label: str
    app: str
    path: str
    health: str = "/health"
    http: str = "httptools"
    workers: int = 1
    loop: str | None = None
    method: str = "GET"  # POST: the cell's request body (``bodies.request``) is sent
    sdk_bodies: bool = True

    def serves(self, body: str) -> bool:
        """Whether this configuration serves the body called ``body``."""
        return self.sdk_bodies or not body.startswith("sdk-")

    def url_path(self, body: str) -> str:
        """Return the endpoint's path for the body called ``body``."""
        return self.path.format(body=body)


@dataclass(frozen=True)
class StreamConfig(ServerConfig):
    """A streaming configuration; ``framing`` is ``jsonl`` or ``sse`` (``data:`` events)."""

    framing: str = "jsonl"


#: Every way of answering the same data; ratios divide by FastAPI's two paths, the helper model
#: servers write by hand and orjson's limit.
SERIALIZATION_CONFIGS = tuple(
    ServerConfig(
        name,
        label,
        f"benchmarks.apps.{app}_app:app",
        f"/{name}/{{body}}",
        sdk_bodies=app != "litestar",
    )
    for name, label, app in (
        ("untyped", "FastAPI untyped (jsonable_encoder + json.dumps)", "fastapi"),
        ("starlette-json", "Starlette JSONResponse on the dict (json.dumps)", "fastapi"),
        ("orjson-response", "FastAPI typed, response_class=ORJSONResponse (deprecated)", "fastapi"),
        ("typed", "FastAPI typed (-> Model: validate + Pydantic dump_json)", "fastapi"),
        ("dump-json", "Response(model.model_dump_json()) (Pydantic's serializer alone)", "fastapi"),
        ("litestar", "Litestar + msgspec Struct (framework peer)", "litestar"),
        ("dispatch-model", "@dispatch returning the model (-> Model)", "fastapi"),
        ("dispatch-dict", "@dispatch returning the ready dict (untyped)", "fastapi"),
        ("dispatch-route", "APIRouter(route_class=DispatchRoute), -> Model", "fastapi"),
        ("dispatch-untyped", "@dispatch returning the model (untyped)", "fastapi"),
        ("dispatch-route-untyped", "DispatchRoute returning the model (untyped)", "fastapi"),
        ("helper", 'Response(orjson.dumps(model.model_dump(mode="json"))) (the helper)', "fastapi"),
        ("orjson-limit", "Response(orjson.dumps(d)) on a ready dict (orjson's limit)", "fastapi"),
        ("bytes-limit", "Response(pre-serialized bytes) (the transport's limit)", "fastapi"),
    )
)
SERIALIZATION_BASELINES = ("untyped", "typed", "helper", "orjson-limit")

#: Every way of reading the same JSON request body (a dict, or a typed model); ratios divide by
#: FastAPI's own parse and by orjson's limit of the same kind, typed ones also by validate_json.
REQUEST_CONFIGS = tuple(
    ServerConfig(name, label, "benchmarks.apps.requests_app:app", f"/{name}/{{body}}",
                 method="POST")
    for name, label in (
        ("fastapi-dict", "FastAPI, body: dict = Body() (json.loads)"),
        ("route-dict", "DispatchRoute, body: dict = Body()"),
        ("limit-dict", "orjson.loads(await request.body()) + the same dict validation"),
        ("fastapi-typed", "FastAPI, body: TurnsRequest (json.loads, then validation)"),
        ("route-typed", "DispatchRoute, body: TurnsRequest"),
        ("limit-typed", "orjson.loads(await request.body()) + TurnsRequest.model_validate"),
        ("validate-json", "TurnsRequest.model_validate_json(await request.body())"),
    )
)  # fmt: skip
REQUEST_BASELINES = {
    "route-dict": ("fastapi-dict", "limit-dict"),
    "limit-dict": ("fastapi-dict",),
    "route-typed": ("fastapi-typed", "limit-typed", "validate-json"),
    "limit-typed": ("fastapi-typed",),
    "validate-json": ("fastapi-typed",),
}

_KEEPALIVE = "uvicorn_keepalive:Protocol"
#: Stock uvicorn against uvicorn-keepalive, with one and two workers. ``stock-b``, a second
#: stock server, measures how far apart two identical servers are (an A/A comparison). The
#: ``asyncio`` ones run the asyncio loop: there ``--workers 2`` leaves TCP_NODELAY off unless
#: uvicorn-keepalive sets it (uvloop always does), and a response written in two parts waits
#: for the client's delayed ACK.
KEEPALIVE_CONFIGS = tuple(
    ServerConfig(name, label, "benchmarks.apps.plain:app", "/", "/", http, workers,
                 loop="asyncio" if "asyncio" in name else None)
    for name, label, http, workers in (
        ("stock", "uvicorn HttpToolsProtocol, 1 worker", "httptools", 1),
        ("keepalive", "uvicorn_keepalive.Protocol, 1 worker", _KEEPALIVE, 1),
        ("stock-b", "uvicorn HttpToolsProtocol, 1 worker, a second process (A/A)", "httptools", 1),
        ("stock-w2", "uvicorn HttpToolsProtocol, 2 workers", "httptools", 2),
        ("keepalive-w2", "uvicorn_keepalive.Protocol, 2 workers", _KEEPALIVE, 2),
        ("stock-asyncio", "uvicorn HttpToolsProtocol, 1 worker, asyncio", "httptools", 1),
        ("stock-asyncio-w2", "uvicorn HttpToolsProtocol, 2 workers, asyncio", "httptools", 2),
        ("keepalive-asyncio", "uvicorn_keepalive.Protocol, 1 worker, asyncio", _KEEPALIVE, 1),
        ("keepalive-asyncio-w2", "uvicorn_keepalive.Protocol, 2 workers, asyncio", _KEEPALIVE, 2),
    )
)  # fmt: skip
#: Each keepalive configuration is divided by the stock one with as many workers and the same
#: loop; on asyncio, two workers are also divided by one worker of the same protocol.
KEEPALIVE_BASELINES = {
    "keepalive": ("stock",),
    "stock-b": ("stock",),
    "keepalive-w2": ("stock-w2",),
    "keepalive-asyncio": ("stock-asyncio",),
    "stock-asyncio-w2": ("stock-asyncio",),
    "keepalive-asyncio-w2": ("stock-asyncio-w2", "keepalive-asyncio"),
}

#: One uvicorn worker each; events per second are divided by the hand-written stream's.
STREAMING_CONFIGS = tuple(
    StreamConfig(name, label, "benchmarks.apps.streaming_app:app", f"/{name}", framing=framing)
    for name, label, framing in (
        ("fastapi-jsonl-untyped", "FastAPI JSON Lines, untyped (dicts)", "jsonl"),
        ("fastapi-jsonl-typed", "FastAPI JSON Lines, -> AsyncIterable[Chunk]", "jsonl"),
        ("fastapi-sse-untyped", "FastAPI EventSourceResponse, untyped (dicts)", "sse"),
        ("fastapi-sse-typed", "FastAPI EventSourceResponse, -> AsyncIterable[Chunk]", "sse"),
        ("sse-starlette", "sse-starlette EventSourceResponse, model_dump_json", "sse"),
        ("orjson-limit", "StreamingResponse of orjson.dumps(d) lines (hand-written)", "jsonl"),
        ("dispatch-jsonl", "@dispatch on the generator, JSON Lines", "jsonl"),
        ("dispatch-sse", "@dispatch on the generator, EventSourceResponse", "sse"),
        ("dispatch-route-jsonl", "APIRouter(route_class=DispatchRoute), JSON Lines", "jsonl"),
        ("dispatch-route-sse", "APIRouter(route_class=DispatchRoute), SSE", "sse"),
    )
)
STREAMING_BASELINE = "orjson-limit"
