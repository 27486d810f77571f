"""Events ready together leave in one body message; an event followed by a wait leaves at once.

Counted with a recording ASGI ``send`` (``streams_harness.call``), for every way a stream is
made: a generator endpoint of a ``DispatchRoute``, one decorated with ``@dispatch``, and the
Starlette helpers. Ordering is proven with events, never with sleeps: a generator that waits
until its last event was sent would wait forever (30 s, then fail) if that event were held back.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any, cast

import anyio
import pytest

pytest.importorskip("fastapi.sse", reason="FastAPI 0.135 streams Server-Sent Events")

from fastapi import FastAPI
from orjson_dispatch._stream_sending import PIECE_BYTES, READY_FRAMES
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp

from orjson_dispatch import DispatchRoute, dispatch, json_lines, server_sent_events
from tests.orjson_dispatch.apps import Twin
from tests.orjson_dispatch.samples import ITEM, Item
from tests.orjson_dispatch.streams_harness import KINDS, Seen, both, call

WAYS = ("route", "dispatch", "helper")
EVENT = {
    "jsonl": b'{"name":"pen","Price":1.5,"tags":[],"note":null}\n',
    "sse": b'data: {"name":"pen","Price":1.5,"tags":[],"note":null}\n\n',
}


def app_for(way: str, kind: str, generator: Callable[[], AsyncIterator[Item]]) -> ASGIApp:
    """An app streaming ``generator`` at ``/s`` the given way."""
    if way == "helper":
        helper = server_sent_events if kind == "sse" else json_lines

        async def endpoint(request: Request) -> Response:
            return helper(generator(), response_model=Item)

        return Starlette(routes=[Route("/s", endpoint)])
    app = FastAPI()
    streamed: Any = dispatch(generator) if way == "dispatch" else generator
    app.router.add_api_route("/s", streamed, route_class_override=DispatchRoute, **KINDS[kind])
    return app


def run(app: ASGIApp, seen: Seen | None = None) -> Any:
    return asyncio.run(call(app, "GET", "/s", seen))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("way", WAYS)
def test_a_burst_of_ready_events_leaves_in_one_message(way: str, kind: str) -> None:
    async def burst() -> AsyncIterator[Item]:
        for _ in range(8):
            yield ITEM

    answer = run(app_for(way, kind, burst))
    assert answer.error is None
    assert answer.bodies == [EVENT[kind] * 8]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("way", WAYS)
def test_ready_events_leave_in_pieces_of_at_most_64_kib(way: str, kind: str) -> None:
    """Ready events are joined up to a piece, in order; a larger event is cut into pieces."""
    sizes = [30_000, 30_000, 30_000, 100_000, 1_000]

    async def burst() -> AsyncIterator[Item]:
        for size in sizes:
            yield ITEM.model_copy(update={"name": "x" * size})

    answer = run(app_for(way, kind, burst))
    assert answer.error is None
    frames = [EVENT[kind].replace(b"pen", b"x" * size) for size in sizes]
    big = frames[3]
    pieces = [frames[0] + frames[1], frames[2], big[:PIECE_BYTES], big[PIECE_BYTES:], frames[4]]
    assert answer.bodies == pieces


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("way", WAYS)
def test_an_event_followed_by_a_wait_is_sent_before_the_wait_ends(way: str, kind: str) -> None:
    three_sent = Seen(lambda body: body.count(b"pen") == 3)

    async def bursts() -> AsyncIterator[Item]:
        yield ITEM
        await anyio.sleep(0)  # a wait that ends at once: the event before it is sent first
        for _ in range(3):
            yield ITEM
        await three_sent.wait()  # only once they are on the wire
        yield ITEM

    answer = run(app_for(way, kind, bursts), three_sent)
    assert answer.error is None
    assert answer.bodies == [EVENT[kind], EVENT[kind] * 3, EVENT[kind]]


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@pytest.mark.parametrize("kind", KINDS)
def test_a_generator_that_never_waits_is_sent_every_ready_frames(kind: str, backend: str) -> None:
    """The producer hands the loop a turn every `READY_FRAMES` frames, on either backend.

    (Trio runs the tasks woken together in a random order: the last two events may leave
    together or one by one.)
    """

    async def ready() -> AsyncIterator[Item]:
        for _ in range(3 * READY_FRAMES + 1):
            yield ITEM
        await anyio.sleep(0)
        yield ITEM

    answer = anyio.run(call, app_for("helper", kind, ready), "GET", "/s", backend=backend)
    assert answer.error is None
    assert answer.bodies[:3] == [EVENT[kind] * READY_FRAMES] * 3
    assert b"".join(answer.bodies[3:]) == EVENT[kind] * 2


@pytest.mark.parametrize("kind", KINDS)
def test_events_before_a_failure_are_sent(kind: str) -> None:
    async def failing() -> AsyncIterator[Item]:
        yield ITEM
        yield ITEM
        raise RuntimeError("boom")

    answer = run(app_for("route", kind, failing))
    assert "boom" in repr(answer.error)
    assert answer.bodies == [EVENT[kind] * 2]


@pytest.mark.parametrize("kind", KINDS)
def test_events_before_an_invalid_item_are_sent(kind: str) -> None:
    async def invalid() -> AsyncIterator[Item]:
        yield ITEM
        yield cast(Item, {"name": 1})

    answer = run(app_for("route", kind, invalid))
    assert answer.error is not None
    assert answer.bodies == [EVENT[kind]]


@pytest.mark.parametrize("kind", KINDS)
def test_sync_generator_sends_one_event_per_message(kind: str) -> None:
    def sync_burst() -> Any:
        yield from [ITEM] * 3

    answer = run(app_for("route", kind, sync_burst))
    assert answer.error is None
    assert answer.bodies == [EVENT[kind]] * 3


# --- against FastAPI: how a failure after ready events ends the stream --------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_events_yielded_before_a_failure_reach_the_client_unlike_fastapi_sse(kind: str) -> None:
    """A deliberate difference: FastAPI's Server-Sent Events lose the events just before it.

    FastAPI's producer task fails and cancels the task group, dropping what its memory
    streams hold; its JSON Lines send them all, as ``DispatchRoute`` does for both formats.
    """
    twin = Twin(route_class=DispatchRoute)

    async def failing() -> AsyncIterator[Item]:
        for _ in range(3):
            yield ITEM
        raise RuntimeError("boom")

    twin.add("GET", "/f", failing, **KINDS[kind])
    fastapi, ours = both(twin, "/f")
    assert ours.chunks == [EVENT[kind]] * 3
    if kind == "jsonl":
        assert fastapi.chunks == ours.chunks
    else:
        assert len(fastapi.chunks) < 3
    assert fastapi.error is not None
    assert ours.error is not None
