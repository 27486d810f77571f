"""Ping interval and send timeout: FastAPI's by default, set per route with `StreamSettings`."""

import asyncio
import contextlib
import logging
import socket
import threading
from collections.abc import AsyncIterable, AsyncIterator, Iterator
from typing import Annotated, Any

import anyio
import pytest

pytest.importorskip("fastapi.sse", reason="FastAPI 0.135 streams Server-Sent Events")

from fastapi import Depends, FastAPI
from fastapi.sse import KEEPALIVE_COMMENT

from orjson_dispatch import DispatchRoute, StreamSettings, server_sent_events
from tests.live_server import running_server
from tests.orjson_dispatch.apps import Twin
from tests.orjson_dispatch.samples import ITEM, Item
from tests.orjson_dispatch.streams_harness import KINDS, SSE, Seen, both, call

PING_EVENT = b'data: {"name":"pen","Price":1.5,"tags":[],"note":null}\n\n'


def _silent_until(pinged: Seen) -> Any:
    async def stream() -> AsyncIterable[Item]:
        yield ITEM
        await pinged.wait()  # silent until a ping went out (or 30 s, and the test fails)
        yield ITEM

    return stream


def test_ping_interval_is_fastapis_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    from fastapi import routing

    monkeypatch.setattr(routing, "_PING_INTERVAL", 0.05)
    pinged = Seen(lambda body: body == KEEPALIVE_COMMENT)
    twin = Twin(route_class=DispatchRoute)
    twin.add("GET", "/p", _silent_until(pinged), **SSE)
    for answer in both(twin, "/p", pinged):
        first, *middle, last = answer.chunks
        assert first == last == PING_EVENT
        assert middle
        assert set(middle) == {b": ping\n\n"}


class QuickPings(DispatchRoute):
    stream_settings = StreamSettings(ping_interval=0.05)


def test_ping_interval_of_the_route_class() -> None:
    pinged = Seen(lambda body: body == KEEPALIVE_COMMENT)
    app = FastAPI()
    app.router.add_api_route("/p", _silent_until(pinged), route_class_override=QuickPings, **SSE)
    answer = asyncio.run(call(app, "GET", "/p", pinged))
    assert answer.chunks[0] == answer.chunks[-1] == PING_EVENT
    assert set(answer.chunks[1:-1]) == {b": ping\n\n"}


def test_no_ping_is_sent_while_a_send_waits_as_under_fastapi(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A slow client: the first event's send waits twenty ping intervals; none starts beside it."""
    from fastapi import routing

    monkeypatch.setattr(routing, "_PING_INTERVAL", 0.01)
    twin = Twin(route_class=DispatchRoute)

    async def stream() -> AsyncIterator[Item]:
        yield ITEM
        await anyio.sleep(0.05)
        yield ITEM

    twin.add("GET", "/s", stream, **SSE)
    for side in ("fastapi", "dispatch"):
        overlaps: list[bytes] = []
        asyncio.run(call(_slow_client(twin.app, overlaps), "GET", f"/{side}/s"))
        assert overlaps == [], side


def _slow_client(app: Any, overlaps: list[bytes]) -> Any:
    """``app`` whose first body's send waits 0.2 s; bodies sent while another waits are kept."""
    sending = False
    slowed = False

    async def slow_app(scope: Any, receive: Any, send: Any) -> None:
        async def slow_send(message: Any) -> None:
            nonlocal sending, slowed
            if not message.get("body"):
                await send(message)
                return
            if sending:
                overlaps.append(message["body"])
            sending = True
            try:
                if not slowed:
                    slowed = True
                    await anyio.sleep(0.2)
                await send(message)
            finally:
                sending = False

        await app(scope, receive, slow_send)

    return slow_app


def test_stream_settings_refuse_bad_values_naming_them() -> None:
    with pytest.raises(ValueError, match="ping_interval"):
        StreamSettings(ping_interval=0)
    with pytest.raises(ValueError, match="send_timeout"):
        StreamSettings(send_timeout=float("inf"))
    with pytest.raises(ValueError, match="send_timeout"):
        server_sent_events([], send_timeout=-1)
    with pytest.raises(ValueError, match=r"bare=True\) sends no pings: ping_interval must be"):
        server_sent_events([], bare=True, ping_interval=5)
    for size in (0, 1.5, True):
        with pytest.raises(ValueError, match="buffer_bytes"):
            StreamSettings(buffer_bytes=size)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"Bad\.stream_settings"):

        class Bad(DispatchRoute):
            stream_settings = None  # type: ignore[assignment]


# --- send timeout: a client that stops reading, on a real server ---------------------------------


class LetGo(DispatchRoute):
    stream_settings = StreamSettings(send_timeout=0.2)


class _Records(logging.Handler):
    """The server's log lines (with their exception's message); ``logged`` once one came."""

    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []
        self.logged = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            text += f" {record.exc_info[1]}"
        self.messages.append(text)
        self.logged.set()


@contextlib.contextmanager
def _server_log() -> Iterator[_Records]:
    # Added once the server runs: uvicorn's logging configuration replaces the handlers.
    records = _Records()
    logger = logging.getLogger("uvicorn.error")
    logger.addHandler(records)
    try:
        yield records
    finally:
        logger.removeHandler(records)


@pytest.mark.parametrize("kind", KINDS)
def test_send_timeout_ends_the_stream_of_a_client_that_stops_reading(kind: str) -> None:
    closed, torn_down = threading.Event(), threading.Event()
    chunk = "x" * 65536

    async def session() -> AsyncIterator[str]:
        try:
            yield "s"
        finally:
            torn_down.set()

    async def endless(s: Annotated[str, Depends(session)]) -> AsyncIterator[str]:
        try:
            while True:
                yield chunk
                await anyio.sleep(0)
        finally:
            closed.set()

    app = FastAPI()
    app.router.add_api_route("/endless", endless, route_class_override=LetGo, **KINDS[kind])
    with (
        running_server(app) as server,
        _server_log() as server_log,
        _reader_that_stops(server.url, "/endless"),
    ):
        assert closed.wait(30), "the generator was not closed"
        assert torn_down.wait(30), "the dependency was not torn down"
        assert server_log.logged.wait(30)
    timeouts = [message for message in server_log.messages if "send_timeout" in message]
    assert len(timeouts) == 1, server_log.messages


def _reader_that_stops(base: str, path: str) -> socket.socket:
    """A client that sends the request, reads a little, then nothing (a small receive buffer)."""
    host, port = base.removeprefix("http://").split(":")
    client = socket.socket()
    client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    client.connect((host, int(port)))
    client.sendall(f"GET {path} HTTP/1.1\r\nhost: {host}\r\n\r\n".encode())
    assert client.recv(1024)
    return client
