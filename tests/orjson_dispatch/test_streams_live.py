"""Generator shapes over a real uvicorn server, FastAPI's stream of the same generator the oracle.

Every shape a model server writes (a wait after each yield, an engine's ``async for``, bursts, an
empty generator that waits) is served by a plain ``APIRoute`` and by a ``DispatchRoute`` on one
running server per configuration (``live_streams.SERVERS``), and read by a raw socket client to
the chunked terminator: the same status, headers and body, ended the same way.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import anyio
import pytest

pytest.importorskip("fastapi.sse", reason="FastAPI 0.135 streams Server-Sent Events")

from fastapi.routing import APIRoute
from hypothesis import given, note, settings
from starlette.requests import Request
from starlette.responses import Response

from orjson_dispatch import DispatchRoute, dispatch, json_lines, server_sent_events
from tests.orjson_dispatch.live_streams import LiveApp, Reader, Wire
from tests.orjson_dispatch.strategies import examples
from tests.orjson_dispatch.strategies.generator_shapes import (
    GeneratorShape,
    Marks,
    Tok,
    generator_shapes,
)
from tests.orjson_dispatch.streams_harness import KINDS


async def engine(count: int) -> AsyncIterator[str]:
    """Tokens as an inference engine hands them out: one step of waiting per token."""
    for index in range(count):
        await anyio.sleep(0)
        yield f"t{index}"


async def await_after_each_yield() -> AsyncIterator[Tok]:
    for index in range(3):
        yield Tok(index=index, text="a")
        await anyio.sleep(0)


async def engine_loop() -> AsyncIterator[Tok]:
    index = 0
    async for text in engine(4):
        yield Tok(index=index, text=text)
        index += 1


async def bursts() -> AsyncIterator[Tok]:
    for burst in range(3):
        for index in range(8):
            yield Tok(index=index, text=f"b{burst}")
        await anyio.sleep(0)


async def empty_after_a_wait() -> AsyncIterator[Tok]:
    await anyio.sleep(0)
    tokens: tuple[Tok, ...] = ()
    for token in tokens:  # nothing: an async generator that yields no item
        yield token


async def ready() -> AsyncIterator[Tok]:
    for index in range(5):
        yield Tok(index=index, text="r")


def sync_steps() -> Iterator[Tok]:
    for index in range(3):
        yield Tok(index=index, text="s")


SHAPES: dict[str, Callable[..., Any]] = {
    "await after each yield": await_after_each_yield,
    "engine loop": engine_loop,
    "bursts": bursts,
    "empty after a wait": empty_after_a_wait,
    "ready": ready,
    "sync": sync_steps,
}


#: The ways a stream is made: a DispatchRoute's generator endpoint, the same under @dispatch,
#: and the Starlette helpers in a hand-built endpoint.
WAYS = ("route", "dispatch", "helper")


def ours_path(live: LiveApp, way: str, endpoint: Callable[..., Any], kind: str) -> str:
    """Serve ``endpoint`` the given way; return its path."""
    if way == "route":
        return live.add(endpoint, route_class_override=DispatchRoute, **KINDS[kind])
    if way == "dispatch":
        return live.add(dispatch(endpoint), route_class_override=DispatchRoute, **KINDS[kind])
    helper = server_sent_events if kind == "sse" else json_lines

    async def hand_built(request: Request) -> Response:
        return helper(endpoint(), response_model=Tok)

    path = f"/helper{len(live.app.routes)}"
    live.app.add_route(path, hand_built)
    return path


def without_date(headers: dict[str, str]) -> dict[str, str]:
    """The headers but ``date`` (two answers may straddle a second)."""
    return {name: value for name, value in headers.items() if name != "date"}


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("shape", SHAPES)
def test_every_generator_shape_ends_with_the_chunked_terminator(
    live: LiveApp, shape: str, kind: str, way: str
) -> None:
    fastapi = live.fetch(live.add(SHAPES[shape], **KINDS[kind]))
    ours = live.fetch(ours_path(live, way, SHAPES[shape], kind))
    assert fastapi.complete
    assert ours.complete, ours.body[-200:]
    assert (ours.status, without_date(ours.headers)) == (
        fastapi.status,
        without_date(fastapi.headers),
    )
    assert ours.body == fastapi.body


#: Seconds to wait for a generator's ``finally`` or a dependency's teardown that must come (a
#: hung test fails then; it never waits this long otherwise).
MUST_HAPPEN = 30.0


@settings(max_examples=examples(20))
@given(shape=generator_shapes())
@pytest.mark.parametrize("kind", KINDS)
def test_generated_shapes_stream_like_fastapi(
    live: LiveApp, kind: str, shape: GeneratorShape
) -> None:
    answers: dict[str, tuple[Wire, Marks]] = {}
    for side, route_class in (("fastapi", APIRoute), ("dispatch", DispatchRoute)):
        marks = Marks()
        path = live.add(shape.endpoint(marks), route_class_override=route_class, **KINDS[kind])
        wire = live.fetch(path, Reader(leave_after=shape.leave_after))
        # Ours has closed the generator before the body ends (or the connection is cut).
        finished_at_end = marks.finished.is_set()
        answers[side] = (wire, marks)
        note(f"{side}: {wire}, finished at the end: {finished_at_end}")
        if side == "dispatch" and shape.leave_after is None:
            assert finished_at_end
    (fastapi, fastapi_marks), (ours, ours_marks) = answers["fastapi"], answers["dispatch"]
    assert ours_marks.finished.wait(MUST_HAPPEN), "the generator was not closed"
    for marks in (fastapi_marks, ours_marks):
        assert marks.torn_down.wait(MUST_HAPPEN), "the dependency was not torn down"
    assert (ours.status, without_date(ours.headers)) == (
        fastapi.status,
        without_date(fastapi.headers),
    )
    if shape.leave_after is not None:
        return  # what arrived before the client left is the scheduling's, not the behaviour
    # FastAPI leaves a generator whose client left to the garbage collector (a documented
    # difference); one that ends is closed by both.
    assert fastapi_marks.finished.wait(MUST_HAPPEN)
    assert ours.complete == (shape.ending == "return")
    if kind == "sse" and shape.ending == "raise":
        # FastAPI's Server-Sent Events lose the events still in its memory streams when the
        # producer fails, and may even end the body cleanly before the error is raised (a
        # documented difference): what they send is a prefix of ours, which ends cut.
        assert ours.body.startswith(fastapi.body)
    else:
        assert fastapi.complete == ours.complete
        assert ours.body == fastapi.body
