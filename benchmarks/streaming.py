"""Streams: chat-completion chunks streamed by uvicorn, read by a client of our own.

``python -m benchmarks.streaming [--quick]``. One FastAPI app streams the chunks every way a
user could (``GET /<configuration>?n=N``, :class:`Shape`'s parameters), as JSON Lines or SSE; a
client on asyncio and h11 reads 1 or 32 whole streams from one uvicorn worker (wrk counts
requests, not events). Then the stalled readers: a fresh server per run, clients that read
nothing for :data:`STALL_S`, its memory growth. The method: docs/benchmarks.md.
"""

import asyncio
import inspect
import socket
import sys
import time
from collections.abc import AsyncIterable, AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, NamedTuple, TypeVar

import h11
import orjson
from fastapi import APIRouter, FastAPI, Query
from fastapi.responses import StreamingResponse
from fastapi.sse import EventSourceResponse
from pydantic import BaseModel
from sse_starlette import EventSourceResponse as StarletteEventSourceResponse

from benchmarks import summary
from benchmarks.cli import main
from benchmarks.runner import Cell, Server, ServerConfig, ServerError, drive, get, interleaved
from bodies import CYCLE, Chunk, chunk_dicts, chunk_models
from orjson_dispatch import DispatchRoute, server_sent_events

SUITE = "streaming"
#: The generator shapes: query parameters of the app's endpoints.
SHAPES = {
    "ready": "",  # every chunk ready at once: the cost of each event on the wire
    "burst8": "&burst=8",  # 8 ready chunks per pass through the event loop
    "paced": "&burst=1&wait_us=1000&stamp=true",  # one chunk per ~1 ms, stamped
}
#: The events per stream of each cell (``<shape>@c<streams>``). A ready stream sends 50 000 to
#: 200 000 events a second: fewer than 20 000 last too short to time on a loaded machine (single
#: runs of the same code spread 3.5-fold at 3 000).
EVENTS = {"ready@c1": 20_000, "burst8@c1": 2_000, "burst8@c32": 300, "paced@c32": 100}
STALLED = {
    "stalled-fastapi": "FastAPI, -> AsyncIterable[Blob], JSON Lines",
    "stalled-route": "DispatchRoute, the same route",
}
STALL_S, EVENT_BYTES, STALLED_EVENTS = 2.0, 1 << 20, 32
_SEPARATORS = {"jsonl": b"\n", "sse": b"\n\n"}
_NEED = (h11.NEED_DATA, h11.PAUSED)


class StreamRead(NamedTuple):
    """One stream as the client read it."""

    events: int
    seconds: float  # from the request to the end of the stream
    gaps: list[float]  # seconds between reads that brought events (the first: from the request)
    delays: list[float]  # stamped streams: seconds from each event's yield to its read
    payloads: list[bytes]  # the events' bytes, when kept


def cells(events: dict[str, int]) -> list[Cell]:
    """Return the cells named by the keys of ``events`` (``<shape>@c<streams>``)."""
    return [Cell(shape, int(n)) for shape, n in (key.split("@c") for key in events)]


def parse_events(payloads: Sequence[bytes], framing: str) -> list[Any]:
    """Return the JSON values of the events (SSE: of their ``data:`` line; comments skipped)."""
    if framing == "jsonl":
        return [orjson.loads(line) for line in payloads]
    blocks = [
        [line[5:].strip() for line in b.split(b"\n") if line.startswith(b"data:")] for b in payloads
    ]
    return [orjson.loads(b"\n".join(data)) for data in blocks if data]


async def read_stream(
    port: int, path: str, framing: str, *, keep: bool = False, stamped: bool = False
) -> StreamRead:
    """Read ``GET path`` from ``127.0.0.1:port`` to its end; ServerError if not 200 or cut."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    connection = h11.Connection(h11.CLIENT)
    headers = [("Host", "127.0.0.1"), ("Connection", "close")]
    started = last = time.monotonic()
    request = connection.send(h11.Request(method="GET", target=path, headers=headers))
    writer.write((request or b"") + (connection.send(h11.EndOfMessage()) or b""))
    read = StreamRead(0, 0.0, [], [], [])
    events, buffer, done = 0, b"", False
    try:
        while not done:
            data = await reader.read(1 << 18)
            if not data:
                raise ServerError(f"GET {path}: the connection closed mid-stream")
            connection.receive_data(data)
            now = time.monotonic()
            while not done and (event := connection.next_event()) not in _NEED:
                if isinstance(event, h11.Response) and event.status_code != 200:
                    raise ServerError(f"GET {path} answered {event.status_code}")
                buffer += event.data if isinstance(event, h11.Data) else b""
                done = isinstance(event, h11.EndOfMessage)
            if _SEPARATORS[framing] in buffer:
                *complete, buffer = buffer.split(_SEPARATORS[framing])
                read.payloads.extend(complete if keep else [])
                stamps = [c["created"] for c in parse_events(complete, framing)] if stamped else []
                read.delays.extend(now - stamp / 1e6 for stamp in stamps)
                read.gaps.append(now - last)
                events, last = events + len(complete), now
    finally:
        writer.close()
    return read._replace(events=events, seconds=last - started)


def check(port: int, config: ServerConfig) -> None:
    """Check that ``config`` streams the chunks twice round the cycle, else ServerError."""
    path = f"{config.path}?n={2 * CYCLE}&burst=8"
    read = asyncio.run(read_stream(port, path, config.framing, keep=True))
    if parse_events(read.payloads, config.framing) != list(chunk_dicts()) * 2:
        raise ServerError(f"{config.name} streams other events: {read.payloads[:2]!r}")


async def _streams(port: int, path: str, framing: str, streams: int) -> list[StreamRead]:
    stamped = "stamp=true" in path
    reads = (read_stream(port, path, framing, stamped=stamped) for _ in range(streams))
    return list(await asyncio.gather(*reads))


def _percentiles_ms(values: Sequence[float]) -> dict[str, float] | None:
    ordered, n = sorted(values), len(values)
    at = {"p50": 0.5, "p99": 0.99}
    return {k: ordered[min(n - 1, int(q * n))] * 1000 for k, q in at.items()} if n else None


def run_streaming(
    configs: Sequence[ServerConfig], events: dict[str, int], rounds: int, log_dir: Path
) -> dict[str, Any]:
    """Stream ``events[cell]`` events per stream from every configuration, interleaved.

    Returns:
        :func:`~benchmarks.runner.drive`'s result with ``events``; per sample the events, the
        seconds, ``events_per_s`` and the percentiles of ``gap_ms`` and ``yield_to_read_ms``.
    """

    def measure(server: Server, cell: Cell) -> tuple[dict[str, Any], str]:
        config = server.config
        path = f"{config.path}?n={events[cell.key]}{SHAPES[cell.body]}"
        reads = asyncio.run(_streams(server.port, path, config.framing, cell.concurrency))
        count, seconds = sum(r.events for r in reads), max(r.seconds for r in reads)
        delay = _percentiles_ms([d for read in reads for d in read.delays])
        sample = {
            "events": count,
            "seconds": seconds,
            "events_per_s": count / seconds,
            "gap_ms": _percentiles_ms([gap for read in reads for gap in read.gaps]),
            "yield_to_read_ms": delay,
        }
        text = f"{count / seconds:.0f} events/s"
        return sample, text + (f", yield to read p99 {delay['p99']:.2f} ms" if delay else "")

    def prepare(server: Server) -> None:
        check(server.port, server.config)

    found = drive(
        SUITE, configs, cells(events), rounds, prepare=prepare, measure=measure, log_dir=log_dir
    )
    return found | {"events": events}


def stalled_growth_kb(path: str, readers: int, log_dir: Path, stall_s: float = STALL_S) -> int:
    """Return a fresh server's VmRSS growth while ``readers`` clients stall on ``path``.

    One whole stream of one event first (every code path run); then each client, its receive
    buffer 64 KiB, sends its request, reads once (the response head and what fits) and then
    nothing for ``stall_s``; the growth is the VmRSS then minus the VmRSS before.
    """
    server, clients = Server(ServerConfig(path, path, _APP, f"/{path}"), log_dir), []
    try:
        server.wait_ready()
        get(server.port, f"/{path}?n=1")
        before = server.status_kb("VmRSS")
        for _ in range(readers):
            client = socket.socket()
            client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 16)
            client.connect(("127.0.0.1", server.port))
            client.sendall(f"GET /{path}?n={STALLED_EVENTS} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            client.recv(1 << 16)
            clients.append(client)
        time.sleep(stall_s)
        return server.status_kb("VmRSS") - before
    finally:
        server.process.kill()  # no graceful shutdown: it would wait for the stalled streams
        server.process.wait()
        for client in clients:
            client.close()


def measure(quick: bool, logs: Path) -> dict[str, Any]:
    """Measure the stream cells, then 1 and 40 stalled readers: 3 rounds (quick), or 7."""
    rounds = 3 if quick else 7

    def stalled(readers: str, path: str) -> tuple[dict[str, Any], str]:
        grown = stalled_growth_kb(path, int(readers.removesuffix(" readers")), logs) / 1024
        return {"mib": grown}, f"+{grown:.1f} MiB"

    readers = ["1 readers", "40 readers"]
    streams = run_streaming(CONFIGS, EVENTS, rounds, logs)
    return streams | {"stalled": interleaved("stalled", STALLED, readers, rounds, stalled)}


def render(suite: Any) -> list[str]:
    """Return the summary tables of a result file."""
    lines = summary.section(
        "Streaming chat-completion chunks", suite, "events_per_s", BASELINES, summary.STREAM_TIMES
    )
    if "stalled" not in suite:
        return lines
    title = f"Stalled readers of 1 MiB events: the server's RSS growth over {STALL_S} s"
    stalled = suite["stalled"] | {"run": suite["run"]}
    return lines + summary.section(
        title, stalled, "mib", {"stalled-route": ("stalled-fastapi",)}, []
    )


# --- the app ------------------------------------------------------------------------------------

_APP = "benchmarks.streaming:app"
app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
dispatch_router = APIRouter(route_class=DispatchRoute)
_T = TypeVar("_T")


class Shape(BaseModel):
    """How the generator produces its ``n`` chunks (the query parameters).

    ``burst`` passes through the event loop after every ``burst`` chunks (sleeping ``wait_us``
    microseconds there), as a generator awaiting its engine does; without it every chunk is
    ready at once. ``stamp`` writes the time of the ``yield`` (CLOCK_MONOTONIC, microseconds)
    into each chunk's ``created``.
    """

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


async def typed(shape: ShapeQuery) -> AsyncIterable[Chunk]:  # each item validated and dumped
    async for chunk in models(shape):
        yield chunk


async def sse_starlette(shape: ShapeQuery) -> StarletteEventSourceResponse:
    events = ({"data": chunk.model_dump_json()} async for chunk in models(shape))
    # sep="\n": the line ending FastAPI uses (sse-starlette's default is "\r\n").
    return StarletteEventSourceResponse(events, sep="\n")


async def lines(shape: ShapeQuery) -> StreamingResponse:  # the hand-written streams
    lines = (orjson.dumps(chunk) + b"\n" async for chunk in dicts(shape))
    return StreamingResponse(lines, media_type="application/jsonl")


async def events(shape: ShapeQuery) -> StreamingResponse:
    events = (b"data: " + orjson.dumps(chunk) + b"\n\n" async for chunk in dicts(shape))
    return StreamingResponse(events, media_type="text/event-stream")


async def vllm(shape: ShapeQuery) -> StreamingResponse:  # vLLM's shape
    events = (f"data: {chunk.model_dump_json()}\n\n" async for chunk in models(shape))
    return StreamingResponse(events, media_type="text/event-stream")


async def migrated(shape: ShapeQuery) -> StreamingResponse:  # the same, by orjson_dispatch
    return server_sent_events(models(shape), bare=True)


class Blob(BaseModel):
    """A 1 MiB event of the stalled-reader streams."""

    text: str


async def blobs(n: int) -> AsyncIterable[Blob]:
    blob = Blob(text="x" * EVENT_BYTES)
    for _ in range(n):
        yield blob


#: Name: label, framing and endpoint. The ``dispatch-route-*`` streams are routes of an
#: ``APIRouter(route_class=DispatchRoute)``, the others the app's.
STREAMS = {
    "fastapi-jsonl-typed": ("FastAPI JSON Lines, -> AsyncIterable[Chunk]", "jsonl", typed),
    "fastapi-sse-typed": ("FastAPI EventSourceResponse, -> AsyncIterable[Chunk]", "sse", typed),
    "sse-starlette": ("sse-starlette EventSourceResponse, model_dump_json", "sse", sse_starlette),
    "orjson-limit": ("StreamingResponse of orjson.dumps(d) lines (hand-written)", "jsonl", lines),
    "orjson-limit-sse": ('b"data: " + orjson.dumps(d) events (hand-written)', "sse", events),
    "model-dump-json-sse": ('f"data: {chunk.model_dump_json()}" events (vLLM)', "sse", vllm),
    "dispatch-route-jsonl": ("APIRouter(route_class=DispatchRoute), JSON Lines", "jsonl", typed),
    "dispatch-route-sse": ("APIRouter(route_class=DispatchRoute), SSE", "sse", typed),
    "server-sent-events": (
        "the vLLM stream migrated: server_sent_events(bare=True)",
        "sse",
        migrated,
    ),
}
for name, (_, framing, endpoint) in STREAMS.items():
    router = dispatch_router if name.startswith("dispatch-route") else app.router
    # FastAPI streams a generator as SSE in an EventSourceResponse; the others return theirs.
    sse = framing == "sse" and inspect.isasyncgenfunction(endpoint)
    options: dict[str, Any] = {"response_class": EventSourceResponse} if sse else {}
    router.get(f"/{name}", **options)(endpoint)
app.get("/stalled-fastapi")(blobs)
dispatch_router.get("/stalled-route")(blobs)
app.include_router(dispatch_router)
CONFIGS = tuple(
    ServerConfig(name, label, _APP, f"/{name}", framing=framing)
    for name, (label, framing, _) in STREAMS.items()
)
#: JSON Lines streams are divided by the hand-written orjson lines, SSE ones by the two
#: hand-written SSE streams (orjson's, and ``model_dump_json``'s as vLLM writes it).
HAND_WRITTEN = {"jsonl": ("orjson-limit",), "sse": ("orjson-limit-sse", "model-dump-json-sse")}
BASELINES = {c.name: HAND_WRITTEN[c.framing] for c in CONFIGS}

if __name__ == "__main__":
    raise SystemExit(main(question=sys.modules[__name__]))
