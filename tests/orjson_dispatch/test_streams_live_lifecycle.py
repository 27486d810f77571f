"""How a stream lives over a real server: slow, steady and stalled readers, one send at a time,
a custom route class wrapping the body, a graceful shutdown.

FastAPI's stream of the same generator is the oracle, on the same running server. What these
tests assert holds whatever the machine's speed: a reader gets every byte, or a bound holds at
every step of the generator; nothing is timed.
"""

from __future__ import annotations

import contextlib
import signal
import socket
import sys
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("fastapi.sse", reason="FastAPI 0.135 streams Server-Sent Events")

import fastapi.routing
import fastapi.sse
from fastapi import Request, Response
from fastapi.routing import APIRoute
from orjson_dispatch._stream_sending import PIECE_BYTES
from orjson_dispatch._stream_settings import BUFFER_BYTES
from starlette.responses import StreamingResponse

from orjson_dispatch import DispatchRoute, StreamSettings
from tests.live_server import ServerProcess
from tests.orjson_dispatch.live_streams import SERVERS, SOCKET_TIMEOUT, LiveApp, Reader
from tests.orjson_dispatch.streams_harness import KINDS

#: Events larger than what a socket's buffers hold: each takes many reads to drain.
LARGE = "x" * 2_000_000


class Patient(DispatchRoute):
    """Ends the stream of a client that takes nothing for half a second."""

    stream_settings = StreamSettings(send_timeout=0.5)


async def large_events() -> AsyncIterator[str]:
    yield LARGE
    await anyio.sleep(0)
    yield "sent once the large one has drained"


@pytest.fixture(scope="module", params=[SERVERS[0], SERVERS[-1]], ids="-".join)
def narrow(request: pytest.FixtureRequest) -> Iterator[LiveApp]:
    """A server whose connections have a fixed 64 KiB send buffer."""
    with LiveApp(*request.param, sndbuf=65536) as app:
        yield app


@pytest.mark.parametrize("kind", KINDS)
def test_a_slow_steady_reader_gets_the_whole_stream(narrow: LiveApp, kind: str) -> None:
    """A small receive buffer read 16 KiB at a time, 10 ms apart: at most 1.6 MB/s.

    The 2 MB event then takes more than a second to drain from the server's buffers (they
    hold about 200 KB), though the client never stops taking bytes: a timeout of one send
    would cut it; what is timed is the time in which the client took nothing.
    """
    fastapi = narrow.fetch(narrow.add(large_events, **KINDS[kind]))
    path = narrow.add(large_events, route_class_override=Patient, **KINDS[kind])
    ours = narrow.fetch(path, Reader(rcvbuf=16384, read_size=16384, pause=0.01))
    assert fastapi.complete
    assert ours.complete, len(ours.body)
    assert ours.body == fastapi.body


@pytest.fixture(scope="module", params=[SERVERS[0], SERVERS[-1]], ids="-".join)
def autotuned(request: pytest.FixtureRequest) -> Iterator[LiveApp]:
    """A server whose connections' send buffers the kernel grows (net.ipv4.tcp_wmem)."""
    with LiveApp(*request.param) as app:
        yield app


async def steady_events() -> AsyncIterator[str]:
    for _ in range(40):
        yield "w" * 128_000


@pytest.mark.parametrize("kind", KINDS)
def test_a_steady_reader_is_never_cut_while_the_kernel_buffer_drains(
    autotuned: LiveApp, kind: str
) -> None:
    """A 32 KiB receive buffer read 32 KiB at a time, 15 ms apart: about 2 MB/s, never silent.

    The kernel grows the server's send buffer to megabytes, and reports the socket writable
    only once a large part of it has drained: one send waits far longer than the 0.5 s send
    timeout, though the client takes bytes all along. What is timed is the client's progress.
    """
    path = autotuned.add(steady_events, route_class_override=Patient, **KINDS[kind])
    ours = autotuned.fetch(path, Reader(rcvbuf=32768, read_size=32768, pause=0.015))
    fastapi = autotuned.fetch(autotuned.add(steady_events, **KINDS[kind]))
    assert ours.complete, len(ours.body)
    assert ours.body == fastapi.body


MEGABYTE = "z" * 1_000_000
#: The largest frame of it: ``data: "...\"\n\n`` (a JSON line is shorter).
MEGABYTE_FRAME = len(MEGABYTE) + 10


def megabyte_events(
    events: int, reader: Reader, steps: list[int], *, is_async: bool = True
) -> Callable[[], AsyncIterator[str] | Iterator[str]]:
    """A generator of 1 MB events noting, at each step, how far it is ahead of ``reader``;
    without ``is_async``, a sync one (FastAPI iterates it in the threadpool)."""

    def ahead() -> Iterator[str]:
        for index in range(events):
            steps.append(index * MEGABYTE_FRAME - reader.received)
            yield MEGABYTE

    async def stream() -> AsyncIterator[str]:
        for event in ahead():
            yield event

    def sync_stream() -> Iterator[str]:
        yield from ahead()

    return stream if is_async else sync_stream


@pytest.mark.parametrize(
    ("readers", "is_async"), [(1, True), (4, True), (1, False)], ids=["1", "4", "1-sync"]
)
@pytest.mark.parametrize("kind", KINDS)
def test_slow_readers_hold_their_generators_within_the_buffer_bound(
    narrow: LiveApp, kind: str, readers: int, is_async: bool
) -> None:
    """1 MB events to readers slower than the generators, checked at every step of each.

    When a generator is asked for an item, what it produced before and its client has not
    read yet is at most what the stream may hold (`buffer_bytes`, and one frame larger than
    it), what uvicorn's transport buffer holds (its 64 KiB high-water mark and one piece), the
    kernel's buffers of both sockets, and the client's last read. FastAPI runs about five
    events ahead, a bound counted in frames 49.
    """
    events = 12 if readers == 1 else 4
    paths, ahead = [], []
    for _ in range(readers):
        reader, steps = Reader(rcvbuf=65536, read_size=16384, pause=0.001), list[int]()
        endpoint = megabyte_events(events, reader, steps, is_async=is_async)
        paths.append(narrow.add(endpoint, route_class_override=DispatchRoute, **KINDS[kind]))
        ahead.append((reader, steps))
    with ThreadPoolExecutor(readers) as pool:
        wires = list(pool.map(narrow.fetch, paths, [reader for reader, _ in ahead]))
    kernel = 2 * 131_072  # both sockets' 64 KiB buffers, which the kernel reports doubled
    bound = MEGABYTE_FRAME + BUFFER_BYTES + 2 * PIECE_BYTES + kernel + 16384
    for wire, (_, steps) in zip(wires, ahead, strict=True):
        assert wire.complete
        assert wire.body.count(MEGABYTE.encode()) == events
        assert max(steps) <= bound, steps


class QuickPings(DispatchRoute):
    """Pings after 5 ms without a send."""

    stream_settings = StreamSettings(ping_interval=0.005)


class OneSendAtATime(QuickPings):
    """Sends each response through a `send` that fails when a second send starts beside one."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def guarded(request: Request) -> Response:
            return _Guarded(await handler(request))

        return guarded


class _Guarded(Response):
    """The response it holds, sent through a `send` that allows one call at a time."""

    def __init__(self, response: Response) -> None:
        self.response = response

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        busy = False

        async def one_at_a_time(message: Any) -> None:
            nonlocal busy
            assert not busy, "a second send started while one was waiting"
            busy = True
            try:
                await send(message)
            finally:
                busy = False

        await self.response(scope, receive, one_at_a_time)


async def large_events_with_silences() -> AsyncIterator[str]:
    for _ in range(30):
        yield "y" * 200_000
        await anyio.sleep(0.01)  # two ping intervals


def test_pings_and_events_are_sent_one_at_a_time_to_a_slow_reader(narrow: LiveApp) -> None:
    """A ping falls due while an event's send waits for the client, and events follow pings.

    Both are sent by one task: never a second send beside one that waits.
    """
    path = narrow.add(
        large_events_with_silences, route_class_override=OneSendAtATime, **KINDS["sse"]
    )
    ours = narrow.fetch(path, Reader(rcvbuf=16384, read_size=16384, pause=0.002))
    fastapi_wire = narrow.fetch(narrow.add(large_events_with_silences, **KINDS["sse"]))
    assert ours.complete, len(ours.body)
    ping = fastapi.sse.KEEPALIVE_COMMENT
    assert ours.body.replace(ping, b"") == fastapi_wire.body.replace(ping, b"")


def wrapping(route_class: type[APIRoute]) -> type[APIRoute]:
    """``route_class`` with FastAPI's custom route pattern: the stream's body iterator wrapped."""

    class Wrapping(route_class):  # type: ignore[valid-type,misc]
        def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
            handler = super().get_route_handler()

            async def wrapped(request: Request) -> Response:
                response: Response = await handler(request)
                if isinstance(response, StreamingResponse):
                    inner = response.body_iterator

                    async def tagged() -> AsyncIterator[bytes]:
                        async for chunk in inner:
                            assert isinstance(chunk, bytes)
                            yield chunk.upper()
                        yield b": wrapped\n\n"

                    response.body_iterator = tagged()
                return response

            return wrapped

    return Wrapping


async def tokens() -> AsyncIterator[str]:
    for text in ("a", "b"):
        yield text
        await anyio.sleep(0)


def test_a_route_class_wrapping_the_body_iterator_is_honoured(live: LiveApp) -> None:
    fastapi, ours = (
        live.fetch(live.add(tokens, route_class_override=wrapping(base), **KINDS["sse"]))
        for base in (APIRoute, DispatchRoute)
    )
    assert fastapi.complete
    assert ours.complete
    assert ours.body == fastapi.body == b'DATA: "A"\n\nDATA: "B"\n\n: wrapped\n\n'


def test_sigterm_closes_the_generators_of_open_streams(tmp_path: Path) -> None:
    """uvicorn with ``--timeout-graceful-shutdown 1`` gets SIGTERM while four streams are open.

    The streams outlive the graceful shutdown, after which uvicorn cancels their tasks: every
    generator of ours has its ``finally`` run. FastAPI's own generators are not asserted, the
    process may end first: its Server-Sent Events generator is left unclosed (uvicorn 0.54 and
    0.55), its JSON Lines one is closed in most runs, not in all. A dependency with ``yield`` is
    torn down, if at all, after its generator is closed: uvicorn runs the lifespan shutdown and
    re-raises the signal, ending the process, usually before a cancelled request unwinds to
    FastAPI's teardown (under FastAPI as under ``DispatchRoute``; docs/dispatch.md says so); when
    it does come, it comes second.
    """
    closed = tmp_path / "closed.log"
    server = ServerProcess(
        [
            *(sys.executable, "-m", "uvicorn", "tests.orjson_dispatch.shutdown_app:app"),
            *("--port", "0", "--timeout-graceful-shutdown", "1", "--log-level", "info"),
        ],
        {"STREAMS_CLOSED_LOG": str(closed)},
    )
    try:
        port = server.port()
        with contextlib.ExitStack() as clients:  # closed after the server has ended
            for name in (
                "APIRoute-jsonl",
                "APIRoute-sse",
                "DispatchRoute-jsonl",
                "DispatchRoute-sse",
            ):
                client = clients.enter_context(socket.create_connection(("127.0.0.1", port)))
                client.settimeout(SOCKET_TIMEOUT)
                client.sendall(f"GET /{name} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n".encode())
                received = b""
                while b"first" not in received:
                    received += client.recv(4096)
            server.process.send_signal(signal.SIGTERM)
            server.wait_exit(SOCKET_TIMEOUT)
    finally:
        server.stop()
    logged = closed.read_text().splitlines()
    assert {"DispatchRoute-jsonl", "DispatchRoute-sse"} <= set(logged)
    for name in ("DispatchRoute-jsonl", "DispatchRoute-sse"):
        if f"{name} dependency" in logged:
            assert logged.index(name) < logged.index(f"{name} dependency"), logged


async def events_with_silences() -> AsyncIterator[str]:
    for _ in range(20):
        yield "y" * 20_000
        await anyio.sleep(0.05)  # five ping intervals: pings go out between events


def test_a_slow_events_client_with_pings_gets_every_event_as_under_fastapi(
    narrow: LiveApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pings every 10 ms to a client reading 4 KiB at a time: both streams end complete.

    Where the pings fall is the scheduling's; the events and the chunked end are the behaviour.
    """
    monkeypatch.setattr(fastapi.routing, "_PING_INTERVAL", 0.01)  # read by both, per stream
    slow = Reader(rcvbuf=4096, read_size=4096, pause=0.002)
    fastapi_wire, ours = (
        narrow.fetch(
            narrow.add(events_with_silences, route_class_override=base, **KINDS["sse"]), slow
        )
        for base in (APIRoute, DispatchRoute)
    )
    assert fastapi_wire.complete
    assert ours.complete
    ping = fastapi.sse.KEEPALIVE_COMMENT
    assert ping in ours.body
    assert ours.body.replace(ping, b"") == fastapi_wire.body.replace(ping, b"")
