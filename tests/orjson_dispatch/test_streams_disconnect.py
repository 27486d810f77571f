"""When a client leaves, its stream's generator is closed at once, on a real uvicorn server."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import threading
import time
from collections.abc import AsyncIterable, Iterator

import anyio
import httpx
import pytest

pytest.importorskip("fastapi.sse", reason="FastAPI 0.135 streams Server-Sent Events")

from fastapi import FastAPI

from orjson_dispatch import DispatchRoute
from tests.live_server import running_server
from tests.orjson_dispatch.samples import ITEM, Item
from tests.orjson_dispatch.streams_harness import KINDS

# --- client disconnect on a real server ----------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("waits", [True, False], ids=["generator-waits", "generator-never-waits"])
def test_client_disconnect_closes_the_generator_and_leaves_no_task(kind: str, waits: bool) -> None:
    """The async generator is closed at once, its task gone, when the client leaves.

    Stricter than FastAPI, whose JSON Lines streams (and Server-Sent Events of a generator that
    never waits) leave the suspended generator to the garbage collector.
    """
    closed = threading.Event()

    async def endless() -> AsyncIterable[Item]:
        try:
            while True:
                yield ITEM
                if waits:
                    await anyio.sleep(0.001)
        finally:
            closed.set()

    async def tasks() -> list[str]:
        current = asyncio.current_task()
        return sorted(repr(t.get_coro()) for t in asyncio.all_tasks() if t is not current)

    app = FastAPI()
    app.router.add_api_route("/endless", endless, route_class_override=DispatchRoute, **KINDS[kind])
    app.add_api_route("/tasks", tasks)
    path = "/endless"
    with running_server(app) as server, httpx.Client(base_url=server.url, timeout=30) as client:
        before = client.get("/tasks").json()
        with client.stream("GET", path) as response:
            lines = response.iter_lines()
            received = [next(lines) for _ in range(20 if kind == "sse" else 10)]
        assert received
        assert closed.wait(30), "the generator was not closed after the client left"
        # The request's task ends once the generator is closed: wait for it, then compare.
        for _ in range(3000):
            left = client.get("/tasks").json()
            if left == before:
                break
            threading.Event().wait(0.01)
        assert left == before


@pytest.mark.parametrize("kind", KINDS)
def test_client_disconnect_runs_a_sync_generators_finally_at_once(kind: str) -> None:
    """A sync generator (run in the threadpool) is closed when the client leaves.

    Its `finally` runs at once, in the threadpool, with the garbage collector kept off. FastAPI
    0.165 leaves it to the collector (an idle server may not run it for minutes).
    """
    closed = threading.Event()

    def endless() -> Iterator[Item]:
        try:
            while True:
                yield ITEM
                time.sleep(0.001)  # a sync generator's wait, in its thread
        finally:
            closed.set()

    app = FastAPI()
    app.router.add_api_route("/endless", endless, route_class_override=DispatchRoute, **KINDS[kind])
    with _collector_off(), running_server(app) as server:
        with (
            httpx.Client(base_url=server.url, timeout=30) as client,
            client.stream("GET", "/endless") as response,
        ):
            lines = response.iter_lines()
            assert [next(lines) for _ in range(4)]
        assert closed.wait(30), "the generator was not closed after the client left"


@contextlib.contextmanager
def _collector_off() -> Iterator[None]:
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
