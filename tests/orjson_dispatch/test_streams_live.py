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
from pydantic import BaseModel

from orjson_dispatch import DispatchRoute
from tests.orjson_dispatch.live_streams import SERVERS, LiveApp, Wire
from tests.orjson_dispatch.streams_harness import KINDS


class Tok(BaseModel):
    """A streamed token: its JSON is the same bytes from pydantic and from orjson."""

    index: int
    text: str


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


@pytest.fixture(scope="module", params=SERVERS, ids=["-".join(s) for s in SERVERS])
def live(request: pytest.FixtureRequest) -> Iterator[LiveApp]:
    with LiveApp(*request.param) as app:
        yield app


def both(live: LiveApp, endpoint: Callable[..., Any], **route: Any) -> tuple[Wire, Wire]:
    """FastAPI's answer and ours for ``endpoint``, each read to the end of its body."""
    paths = [
        live.add(endpoint, route_class_override=route_class, **route)
        for route_class in (APIRoute, DispatchRoute)
    ]
    fastapi, ours = (live.fetch(path) for path in paths)
    return fastapi, ours


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("shape", SHAPES)
def test_every_generator_shape_ends_with_the_chunked_terminator(
    live: LiveApp, shape: str, kind: str
) -> None:
    fastapi, ours = both(live, SHAPES[shape], **KINDS[kind])
    assert fastapi.complete
    assert ours.complete, ours.body[-200:]
    assert (ours.status, ours.headers) == (fastapi.status, fastapi.headers)
    assert ours.body == fastapi.body
