"""``@dispatch`` on a plain Starlette route: the endpoint takes the request and returns data."""

import datetime as dt
import threading
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Route

from orjson_dispatch import dispatch
from tests.orjson_dispatch.apps import Ask
from tests.orjson_dispatch.samples import ITEM


def test_starlette_route_with_a_request_taking_endpoint(ask: Ask) -> None:
    loop_thread = threading.current_thread()  # asyncio.run runs the loop in this thread

    async def async_endpoint(request: Request) -> dict[str, Any]:
        return {"path": request.url.path, "when": dt.date(2024, 2, 29), "items": [ITEM]}

    def sync_endpoint(request: Request) -> dict[str, Any]:
        return {"thread": threading.current_thread() is not loop_thread, "n": 2**70}

    app = Starlette(
        routes=[Route("/a", dispatch(async_endpoint)), Route("/s", dispatch(sync_endpoint))]
    )
    answer = ask(app, "GET", "/a")
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "application/json"
    assert answer.json() == {
        "path": "/a",
        "when": "2024-02-29",
        "items": [{"name": "pen", "Price": 1.5, "tags": [], "note": None}],
    }
    answer = ask(app, "GET", "/s")
    assert answer.status_code == 200
    assert answer.json() == {"thread": True, "n": 2**70}
