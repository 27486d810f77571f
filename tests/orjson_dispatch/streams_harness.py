"""Requests through an app's ASGI interface, message by message, and the comparison of streams.

Each endpoint is served by a plain ``APIRoute`` and by a ``DispatchRoute`` (``Twin``): the two
answers must have the same status, the same headers and the same events, each the same apart
from the JSON's whitespace and escapes (FastAPI writes untyped items with ``json.dumps``): JSON
documents are compared parsed, every other byte of the framing exactly. How the events are
grouped into body messages is not compared here: events ready together leave in one message.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterable, Sequence
from typing import Any

import anyio
from fastapi.sse import EventSourceResponse, ServerSentEvent
from starlette.types import ASGIApp, Message

from orjson_dispatch import DispatchRoute
from tests.orjson_dispatch.apps import UNTYPED, Twin
from tests.orjson_dispatch.compare import json_pairs
from tests.orjson_dispatch.oracles import held_as_written
from tests.orjson_dispatch.strategies.streams import generator

SSE: dict[str, Any] = {"response_class": EventSourceResponse}
KINDS: dict[str, dict[str, Any]] = {"jsonl": {}, "sse": SSE}


# --- the harness: one request through the ASGI interface, message by message ---------------------


class Seen:
    """An ``asyncio.Event`` per request, set once a body message ``wanted`` is sent."""

    def __init__(self, wanted: Any = bool) -> None:
        self.wanted = wanted
        self.event: asyncio.Event | None = None

    def start(self) -> None:
        self.event = asyncio.Event()

    def __call__(self, body: bytes) -> None:
        if self.wanted(body) and self.event is not None:
            self.event.set()

    async def wait(self) -> None:
        """Wait until it was sent (30 s at most: then the test fails on what was sent)."""
        assert self.event is not None
        with anyio.move_on_after(30):
            await self.event.wait()


@dataclasses.dataclass
class Answer:
    """What the app sent: status, headers, its events, its body messages, what it raised.

    ``chunks`` are the events (Server-Sent Events) or lines (JSON Lines) in order, however the
    body messages (``bodies``, the non-empty ones) grouped them.
    """

    status: int
    headers: list[tuple[bytes, bytes]]
    chunks: list[bytes]
    error: BaseException | None
    bodies: list[bytes] = dataclasses.field(default_factory=list)


async def call(app: ASGIApp, method: str, path: str, seen: Seen | None = None) -> Answer:
    """Send one request to ``app`` and collect what it sends."""
    messages: list[Message] = []
    if seen is not None:
        seen.start()
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path.partition("?")[0],
        "raw_path": path.partition("?")[0].encode(),
        "query_string": path.partition("?")[2].encode(),
        "root_path": "",
        "headers": [(b"host", b"testserver")],
        "client": ("127.0.0.1", 50000),
        "server": ("testserver", 80),
    }
    requested = False

    async def receive() -> Message:
        nonlocal requested
        if not requested:
            requested = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await anyio.sleep_forever()
        raise AssertionError  # pragma: no cover

    async def send(message: Message) -> None:
        messages.append(message)
        if seen is not None and message["type"] == "http.response.body" and message["body"]:
            seen(message["body"])

    error: BaseException | None = None
    try:
        await app(scope, receive, send)
    except Exception as exc:  # the failure is the observed behaviour
        error = exc
    start = next(m for m in messages if m["type"] == "http.response.start")
    headers = list(start.get("headers", []))
    bodies = [m["body"] for m in messages if m["type"] == "http.response.body" and m["body"]]
    events = b"".join(bodies).splitlines(keepends=True)
    if (b"content-type", b"text/event-stream; charset=utf-8") in headers:
        events = _events(events)
    return Answer(start["status"], headers, events, error, bodies)


def _events(lines: list[bytes]) -> list[bytes]:
    """Group lines into events, each ending with its empty line (alone: an event without fields)."""
    events, event = [], b""
    for line in lines:
        event += line
        if line == b"\n":
            events.append(event)
            event = b""
    return [*events, event] if event else events


def both(twin: Twin, path: str, seen: Seen | None = None, method: str = "GET") -> list[Answer]:
    """FastAPI's answer and ours, in that order (``Twin.both`` through ``call``).

    Ours must come from a route serializing with orjson (``DispatchRoute.dispatched``).
    """
    assert dispatched(twin, path), "DispatchRoute left the stream to FastAPI"
    return list(twin.both(method, path, via=lambda m, p: asyncio.run(call(twin.app, m, p, seen))))


def dispatched(twin: Twin, path: str) -> bool:
    (route,) = (r for r in twin.app.routes if getattr(r, "path", None) == f"/dispatch{path}")
    assert isinstance(route, DispatchRoute)
    return route.dispatched


# --- comparisons ---------------------------------------------------------------------------------


def assert_same_line(ours: bytes, fastapi: bytes, *, held: bool = False) -> None:
    """One JSON Lines document each: the same value, one newline at the end.

    ``held``: the items hold values assigned without validation (``oracles.held_as_written``).
    """
    assert ours.endswith(b"\n")
    assert fastapi.endswith(b"\n")
    assert b"\n" not in ours[:-1]
    assert _same_data(ours[:-1], fastapi[:-1], held=held)


def _same_data(ours: bytes, fastapi: bytes, *, held: bool) -> bool:
    if json_pairs(ours, strict=True) == json_pairs(fastapi, strict=False):
        return True
    return held and held_as_written(ours, fastapi)


def assert_same_event(
    ours: bytes, fastapi: bytes, *, exact: bool = False, held: bool = False
) -> None:
    """One event each: the same lines, a ``data:`` line holding JSON compared parsed.

    ``exact``: the event's data is raw text (``raw_data``), compared byte for byte. ``held``:
    as for ``assert_same_line``.
    """
    if ours == fastapi:
        return  # also an event without fields: one empty line
    assert ours.endswith(b"\n\n"), ours
    assert fastapi.endswith(b"\n\n"), fastapi
    ours_lines, fastapi_lines = ours[:-2].split(b"\n"), fastapi[:-2].split(b"\n")
    assert len(ours_lines) == len(fastapi_lines), (ours, fastapi)
    for ours_line, fastapi_line in zip(ours_lines, fastapi_lines, strict=True):
        if ours_line == fastapi_line:
            continue
        assert not exact, (ours_line, fastapi_line)
        assert ours_line.startswith(b"data: "), (ours_line, fastapi_line)
        assert fastapi_line.startswith(b"data: "), (ours_line, fastapi_line)
        assert _same_data(ours_line[6:], fastapi_line[6:], held=held), (ours_line, fastapi_line)


def assert_same_stream(
    ours: Answer, fastapi: Answer, *, sse: bool, raw: Iterable[bool] = (), held: bool = False
) -> None:
    """Same status and headers, the same events in order (``raw``: which are raw text).

    ``held``: as for ``assert_same_line``.
    """
    assert ours.status == fastapi.status
    assert ours.headers == fastapi.headers
    assert len(ours.chunks) == len(fastapi.chunks), (ours.chunks, fastapi.chunks)
    exact = [*raw, *[False] * len(ours.chunks)]
    for index, (mine, theirs) in enumerate(zip(ours.chunks, fastapi.chunks, strict=True)):
        if sse:
            assert_same_event(mine, theirs, exact=exact[index], held=held)
        else:
            assert_same_line(mine, theirs, held=held)


def assert_streamed_alike(
    twin: Twin, items: Sequence[Any], kind: str, *, annotation: Any = UNTYPED, is_async: bool = True
) -> None:
    """Stream ``items`` from a generator endpoint (``annotation``: its item type) as ``kind``
    (``KINDS``) through FastAPI and ours: neither fails, one event per item, the same stream."""
    twin.add("GET", "/s", generator(items, annotation=annotation, is_async=is_async), **KINDS[kind])
    fastapi, ours = both(twin, "/s")
    assert fastapi.error is None
    assert ours.error is None
    assert len(fastapi.chunks) == len(items)
    assert_same_stream(ours, fastapi, sse=kind == "sse")


def raw_events(items: Iterable[Any]) -> list[bool]:
    return [isinstance(item, ServerSentEvent) and item.raw_data is not None for item in items]


def grouped(error: BaseException | None) -> tuple[BaseException, ...]:
    """The exceptions of an exception group (Python 3.11, or anyio's backport on 3.10)."""
    exceptions: tuple[BaseException, ...] = getattr(error, "exceptions", ())
    return exceptions


def shape(error: BaseException | None) -> Any:
    """The exception's type, and those inside an exception group, as names."""
    inner = grouped(error)
    return (type(error).__name__, [shape(e) for e in inner]) if inner else type(error).__name__


def innermost(error: BaseException | None) -> BaseException | None:
    while len(grouped(error)) == 1:
        (error,) = grouped(error)
    return error
