"""Parameters, dependencies (with yield too) and HTTP exceptions behave as under FastAPI."""

from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import Body, Depends, HTTPException, Query, Request, Response
from fastapi import Path as PathParam

from tests.orjson_dispatch.apps import Ask, Twin
from tests.orjson_dispatch.compare import assert_equivalent, assert_identical
from tests.orjson_dispatch.samples import ITEM, Item, NewItem, current_user


def test_dependency_injection_is_unchanged(twin: Twin) -> None:
    async def endpoint(  # noqa: PLR0917 - an endpoint takes what it injects
        item_id: Annotated[int, PathParam(ge=1)],
        body: NewItem,
        request: Request,
        response: Response,
        user: Annotated[str, Depends(current_user)],
        limit: Annotated[int, Query(le=100)] = 10,
        flag: Annotated[bool, Body(embed=True)] = False,
    ) -> dict[str, Any]:
        response.headers["x-method"] = request.method
        return {"id": item_id, "body": body, "user": user, "limit": limit, "flag": flag}

    twin.add("PUT", "/items/{item_id}", endpoint)
    payload = {"body": {"name": "pen"}, "flag": True}
    fastapi, ours = twin.both("PUT", "/items/7?limit=5", json=payload, headers={"x-user": "ann"})
    assert fastapi.json()["body"] == {"name": "pen", "quantity": 1}
    assert_equivalent(ours, fastapi)
    assert ours.headers["x-method"] == "PUT"
    for path in ["/items/0", "/items/7?limit=500", "/items/x"]:
        fastapi, ours = twin.both("PUT", path, json=payload)
        assert fastapi.status_code == 422
        assert ours.json() == fastapi.json()
        assert ours.status_code == 422
    json_header = {"content-type": "application/json"}
    fastapi, ours = twin.both("PUT", "/items/7", content=b"{not json", headers=json_header)
    assert ours.status_code == fastapi.status_code == 422


def test_http_exception_and_yield_dependencies_behave_as_in_fastapi(twin: Twin, ask: Ask) -> None:
    events: list[str] = []

    async def resource() -> AsyncIterator[int]:
        events.append("open")
        yield 1
        events.append("close")

    async def missing(item_id: int, handle: Annotated[int, Depends(resource)]) -> Item:
        events.append("endpoint")
        if item_id == 0:
            raise HTTPException(404, "no such item", headers={"x-reason": "gone"})
        return ITEM

    twin.add("GET", "/items/{item_id}", missing)
    for path in ("/items/0", "/items/1"):
        events.clear()
        fastapi = ask(twin.app, "GET", f"/fastapi{path}")
        fastapi_events = list(events)
        events.clear()
        ours = ask(twin.app, "GET", f"/dispatch{path}")
        # After an exception FastAPI throws it into the dependency at its yield: no "close".
        assert events == fastapi_events
        assert fastapi_events == ["open", "endpoint"] + (["close"] if path == "/items/1" else [])
        assert_identical(ours, fastapi)
