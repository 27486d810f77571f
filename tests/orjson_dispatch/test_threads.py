"""A sync endpoint runs, and is serialized, in the threadpool; an async one on the event loop."""

import inspect
import threading

from fastapi import FastAPI
from pydantic import BaseModel, field_serializer

from orjson_dispatch import dispatch
from tests.orjson_dispatch.apps import Ask


class Traced(BaseModel):
    """Records the thread its field is serialized in."""

    value: int

    @field_serializer("value")
    def _record(self, value: int) -> int:
        THREADS["serializer"] = threading.current_thread()
        return value


THREADS: dict[str, threading.Thread] = {}


def test_sync_endpoint_runs_in_a_worker_thread_async_on_the_loop(ask: Ask) -> None:
    def sync_endpoint() -> Traced:
        THREADS["endpoint"] = threading.current_thread()
        return Traced(value=1)

    async def async_endpoint() -> Traced:
        THREADS["endpoint"] = threading.current_thread()
        return Traced(value=1)

    assert not inspect.iscoroutinefunction(dispatch(sync_endpoint))
    assert inspect.iscoroutinefunction(dispatch(async_endpoint))
    app = FastAPI()
    app.get("/sync")(dispatch(sync_endpoint))
    app.get("/async")(dispatch(async_endpoint))
    loop_thread = threading.current_thread()  # asyncio.run runs the loop in this thread

    THREADS.clear()
    assert ask(app, "GET", "/sync").json() == {"value": 1}
    assert THREADS["endpoint"] is not loop_thread
    # FastAPI runs a sync endpoint, and its serialization, in the threadpool; so does dispatch
    # (serializing a large answer must not block the event loop).
    assert THREADS["serializer"] is THREADS["endpoint"]

    THREADS.clear()
    assert ask(app, "GET", "/async").json() == {"value": 1}
    assert THREADS["endpoint"] is loop_thread
