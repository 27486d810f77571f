"""Importing orjson_dispatch and serving requests changes no class of FastAPI, Starlette or pydantic
and no interpreter setting: every effect stays on the app, its routes and the package's own caches.

Checked in a fresh interpreter (this one has imported the package long ago): the `__dict__` of
each class is taken before the import and compared after requests of every kind, and
`sys.setrecursionlimit` is watched (a limit raised and put back leaves no trace to compare).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.orjson_dispatch.versions import FASTAPI_STREAMS

SCRIPT = textwrap.dedent(
    """
    import asyncio, sys
    import fastapi, fastapi.routing, pydantic, starlette.applications, starlette.requests
    import starlette.responses, starlette.routing

    CLASSES = [
        fastapi.FastAPI, fastapi.routing.APIRouter, fastapi.routing.APIRoute,
        starlette.applications.Starlette, starlette.routing.Router, starlette.routing.Route,
        starlette.requests.Request, starlette.responses.Response,
        starlette.responses.JSONResponse, starlette.responses.StreamingResponse,
        pydantic.BaseModel,
    ]
    changes = []
    set_limit = sys.setrecursionlimit
    sys.setrecursionlimit = lambda limit: (changes.append(limit), set_limit(limit))[1]

    def state():
        return {cls.__qualname__: dict(vars(cls)) for cls in CLASSES}, sys.getrecursionlimit()

    before = state()

    import httpx
    from collections.abc import AsyncIterator
    from fastapi import APIRouter, FastAPI
    from pydantic import BaseModel
    from orjson_dispatch import DispatchRoute, dispatch, dispatched_routes, use_dispatch_routes

    class Item(BaseModel):
        name: str

    async def typed() -> Item:
        return Item(name="a")

    async def untyped():
        return {"a": [1, 2]}

    async def stream() -> AsyncIterator[Item]:
        yield Item(name="b")

    async def body(item: Item) -> Item:
        return item

    @dispatch
    async def decorated() -> Item:
        return Item(name="c")

    app = FastAPI()
    app.router.route_class = DispatchRoute
    routes = [("/typed", typed, "GET"), ("/untyped", untyped, "GET"), ("/body", body, "POST"),
              ("/dispatch", decorated, "GET")]
    streams = FASTAPI_STREAMS  # FastAPI streams generator endpoints from 0.134
    for path, endpoint, method in routes + ([("/stream", stream, "GET")] if streams else []):
        app.add_api_route(path, endpoint, methods=[method])
    later = APIRouter()
    later.add_api_route("/later", typed, methods=["GET"])
    app.include_router(later)
    use_dispatch_routes(app)
    assert all(dispatched_routes(app)[f"GET {p}"] for p in ("/typed", "/untyped", "/later"))

    async def main():
        # A body nested 2,000 deep: Python 3.12+ parses it, and FastAPI's handler of its
        # validation error then recurses too deep, an error answered 500 (FastAPI's own).
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            for path in ("/typed", "/untyped", "/dispatch", "/later") + (("/stream",) * streams):
                assert (await client.get(path)).status_code == 200, path
            small, large = b'{"name": "x"}', b'{"name": "' + b"x" * 4096 + b'"}'
            for content in (small, large, b"[" * 2000 + b"]" * 2000):
                await client.post("/body", content=content,
                                  headers={"content-type": "application/json"})

    asyncio.run(main())
    after = state()
    for name, attributes in before[0].items():
        now = after[0][name]
        changed = sorted(k for k in attributes.keys() | now.keys()
                         if attributes.get(k, changes) is not now.get(k, changes))
        assert not changed, f"{name}: {changed}"
    assert after[1] == before[1], (before[1], after[1])
    assert not changes, f"sys.setrecursionlimit called with {changes}"
    print("unchanged")
    """
)


def test_importing_and_serving_changes_no_class_and_no_interpreter_setting() -> None:
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT.replace("FASTAPI_STREAMS", repr(FASTAPI_STREAMS))],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "unchanged"
