"""An app of endless streams, for the graceful shutdown test (run by uvicorn in a subprocess).

Each route streams ``first``, then an event every 50 ms, forever; its generator's ``finally``
appends the route's name to the file ``$STREAMS_CLOSED_LOG``.
"""

import os
from collections.abc import AsyncIterator, Callable

import anyio
from fastapi import FastAPI
from fastapi.routing import APIRoute

from orjson_dispatch import DispatchRoute
from tests.orjson_dispatch.streams_harness import KINDS

app = FastAPI()
#: The routes, each at ``/<name>``.
NAMES = [f"{c.__name__}-{kind}" for c in (APIRoute, DispatchRoute) for kind in KINDS]


def endless(name: str) -> Callable[[], AsyncIterator[str]]:
    async def stream() -> AsyncIterator[str]:
        try:
            yield "first"
            while True:
                await anyio.sleep(0.05)
                yield "more"
        finally:
            with open(os.environ["STREAMS_CLOSED_LOG"], "a") as log:
                log.write(f"{name}\n")

    return stream


for route_class in (APIRoute, DispatchRoute):
    for kind, route in KINDS.items():
        name = f"{route_class.__name__}-{kind}"
        app.router.add_api_route(
            f"/{name}", endless(name), route_class_override=route_class, **route
        )
