"""An app of endless streams, for the graceful shutdown test (run by uvicorn in a subprocess).

Each route streams ``first``, then an event every 50 ms, forever; its generator's ``finally``
appends the route's name to the file ``$STREAMS_CLOSED_LOG``, and the ``finally`` of its
dependency with ``yield`` the route's name and `` dependency``.
"""

import os
from collections.abc import AsyncIterator, Callable
from typing import Annotated

import anyio
from fastapi import Depends, FastAPI, Request
from fastapi.routing import APIRoute

from orjson_dispatch import DispatchRoute
from tests.orjson_dispatch.streams_harness import KINDS

app = FastAPI()
#: The routes, each at ``/<name>``.
NAMES = [f"{c.__name__}-{kind}" for c in (APIRoute, DispatchRoute) for kind in KINDS]


def _log(line: str) -> None:
    with open(os.environ["STREAMS_CLOSED_LOG"], "a") as log:
        log.write(f"{line}\n")


async def session(request: Request) -> AsyncIterator[str]:
    try:
        yield "s"
    finally:
        _log(f"{request.url.path.strip('/')} dependency")


def endless(name: str) -> Callable[..., AsyncIterator[str]]:
    async def stream(s: Annotated[str, Depends(session)]) -> AsyncIterator[str]:
        try:
            yield "first"
            while True:
                await anyio.sleep(0.05)
                yield "more"
        finally:
            _log(name)

    return stream


for route_class in (APIRoute, DispatchRoute):
    for kind, route in KINDS.items():
        name = f"{route_class.__name__}-{kind}"
        app.router.add_api_route(
            f"/{name}", endless(name), route_class_override=route_class, **route
        )
