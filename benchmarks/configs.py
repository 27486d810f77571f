"""The server configurations the load benchmarks compare, and which of them are baselines.

A configuration is one way to run a server: the ASGI application, the URL path of the
endpoint under test, the uvicorn HTTP protocol class and the number of workers. The harness
starts every configuration as its own uvicorn process.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class ServerConfig:
    """One server configuration.

    Attributes:
        name: Short identifier used in URLs, result files and tables.
        label: What the configuration is, for tables and plots.
        app: The uvicorn import string of the ASGI application.
        path: The URL path of the endpoint; ``{body}`` is replaced by the body's name.
        health: A path that answers 200 once the application is up.
        http: The value of uvicorn's ``--http`` option.
        workers: The value of uvicorn's ``--workers`` option.
    """

    name: str
    label: str
    app: str
    path: str
    health: str = "/health"
    http: str = "httptools"
    workers: int = 1

    def url_path(self, body: str) -> str:
        """Return the endpoint's path for the body called ``body``."""
        return self.path.format(body=body)


_FASTAPI = "benchmarks.apps.fastapi_app:app"


def _fastapi(name: str, label: str) -> ServerConfig:
    return ServerConfig(name, label, _FASTAPI, f"/{name}/{{body}}")


#: Every way of answering the same data, slowest expected first; all in the serialization suites.
SERIALIZATION_CONFIGS: tuple[ServerConfig, ...] = (
    _fastapi("untyped", "FastAPI untyped (jsonable_encoder + json.dumps)"),
    _fastapi("starlette-json", "Starlette JSONResponse on the dict (json.dumps)"),
    _fastapi("orjson-response", "FastAPI typed, response_class=ORJSONResponse (deprecated)"),
    _fastapi("typed", "FastAPI typed (-> Model: validate + Pydantic dump_json)"),
    _fastapi("dump-json", "Response(model.model_dump_json()) (Pydantic's serializer alone)"),
    ServerConfig(
        "litestar",
        "Litestar + msgspec Struct (framework peer)",
        "benchmarks.apps.litestar_app:app",
        "/litestar/{body}",
    ),
    _fastapi("dispatch-model", "@dispatch returning the model (-> Model)"),
    _fastapi("dispatch-dict", "@dispatch returning the ready dict (untyped)"),
    _fastapi("dispatch-route", "APIRouter(route_class=DispatchRoute), -> Model"),
    _fastapi("orjson-limit", "Response(orjson.dumps(d)) on a ready dict (orjson's limit)"),
    _fastapi("bytes-limit", "Response(pre-serialized bytes) (the transport's limit)"),
)

#: The configurations every other one is divided by in the ratio tables: FastAPI's two paths
#: and orjson's limit.
SERIALIZATION_BASELINES: tuple[str, ...] = ("untyped", "typed", "orjson-limit")

_PLAIN = "benchmarks.apps.plain:app"
_KEEPALIVE = "uvicorn_keepalive:Protocol"

#: Stock uvicorn against uvicorn-keepalive, with one and with two workers. ``stock-b`` is a
#: second, identical stock server: its ratio to ``stock`` (an A/A comparison) shows how much
#: two identical servers differ on this machine (the noise floor of the comparison).
KEEPALIVE_CONFIGS: tuple[ServerConfig, ...] = tuple(
    ServerConfig(
        name=name,
        label=label,
        app=_PLAIN,
        path="/",
        health="/",
        http=http,
        workers=workers,
    )
    for name, label, http, workers in (
        ("stock", "uvicorn HttpToolsProtocol, 1 worker", "httptools", 1),
        ("keepalive", "uvicorn_keepalive.Protocol, 1 worker", _KEEPALIVE, 1),
        ("stock-b", "uvicorn HttpToolsProtocol, 1 worker, a second process (A/A)", "httptools", 1),
        ("stock-w2", "uvicorn HttpToolsProtocol, 2 workers", "httptools", 2),
        ("keepalive-w2", "uvicorn_keepalive.Protocol, 2 workers", _KEEPALIVE, 2),
    )
)

#: Each keepalive configuration is compared with the stock one with as many workers.
KEEPALIVE_BASELINES: dict[str, str] = {
    "keepalive": "stock",
    "stock-b": "stock",
    "keepalive-w2": "stock-w2",
}

_STREAMING = "benchmarks.apps.streaming_app:app"


@dataclass(frozen=True)
class StreamConfig(ServerConfig):
    """One streaming configuration.

    Attributes:
        framing: ``jsonl`` (one JSON document per line) or ``sse`` (``data:`` events).
    """

    framing: str = "jsonl"


def _stream(name: str, label: str, framing: str = "jsonl") -> StreamConfig:
    return StreamConfig(name, label, _STREAMING, f"/{name}", framing=framing)


#: The streaming configurations, each its own uvicorn process with one worker.
STREAMING_CONFIGS: tuple[StreamConfig, ...] = (
    _stream("fastapi-jsonl-untyped", "FastAPI JSON Lines, untyped (dicts)"),
    _stream("fastapi-jsonl-typed", "FastAPI JSON Lines, -> AsyncIterable[Chunk]"),
    _stream("fastapi-sse-untyped", "FastAPI EventSourceResponse, untyped (dicts)", "sse"),
    _stream("fastapi-sse-typed", "FastAPI EventSourceResponse, -> AsyncIterable[Chunk]", "sse"),
    _stream("sse-starlette", "sse-starlette EventSourceResponse, model_dump_json", "sse"),
    _stream("orjson-limit", "StreamingResponse of orjson.dumps(d) lines (hand-written)"),
    _stream("dispatch-jsonl", "@dispatch on the generator, JSON Lines"),
    _stream("dispatch-sse", "@dispatch on the generator, EventSourceResponse", "sse"),
    _stream("dispatch-route-jsonl", "APIRouter(route_class=DispatchRoute), JSON Lines"),
    _stream("dispatch-route-sse", "APIRouter(route_class=DispatchRoute), SSE", "sse"),
)

#: The configuration every streaming configuration's events per second are divided by.
STREAMING_BASELINE = "orjson-limit"
