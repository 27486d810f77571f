"""The OpenAPI document is the same with and without ``@dispatch``."""

from collections.abc import Callable
from typing import Annotated, Any

import orjson
from fastapi import BackgroundTasks, Depends, FastAPI, Query, Request, Response
from fastapi import Path as PathParam
from fastapi.responses import HTMLResponse

from orjson_dispatch import dispatch
from tests.orjson_dispatch.samples import ITEM, Account, AccountInDB, Item, NewItem, current_user


def _openapi_endpoints() -> list[tuple[str, str, Callable[..., Any], dict[str, Any]]]:
    async def list_items(
        q: Annotated[str | None, Query(max_length=20, description="Search")] = None,
        limit: int = 10,
    ) -> list[Item]:
        """List items, filtered by ``q``."""
        return []

    def get_item(item_id: Annotated[int, PathParam(ge=1)], x_token: str | None = None) -> Item:
        return ITEM

    async def create_item(item: NewItem, tasks: BackgroundTasks, response: Response) -> Item:
        return ITEM

    async def update(
        item_id: int, item: NewItem, user: Annotated[str, Depends(current_user)]
    ) -> dict[str, Any]:
        return {}

    async def delete(item_id: int) -> None:
        return None

    async def untyped(request: Request):  # type: ignore[no-untyped-def]  # the untyped path
        return {}

    async def as_account(item_id: int) -> AccountInDB:
        return AccountInDB(id=1, email="e", password="p")

    return [
        ("GET", "/items", list_items, {"tags": ["items"], "summary": "All items"}),
        ("GET", "/items/{item_id}", get_item, {"responses": {404: {"description": "Missing"}}}),
        ("POST", "/items", create_item, {"status_code": 201, "tags": ["items"]}),
        ("PUT", "/items/{item_id}", update, {"deprecated": True, "operation_id": "upd"}),
        ("DELETE", "/items/{item_id}", delete, {"status_code": 204}),
        ("GET", "/raw", untyped, {"include_in_schema": True, "description": "Raw"}),
        (
            "GET",
            "/accounts/{item_id}",
            as_account,
            {"response_model": Account, "response_model_exclude": {"email"}},
        ),
        ("GET", "/html", untyped, {"response_class": HTMLResponse}),
    ]


def test_openapi_document_is_identical_with_and_without_the_decorator() -> None:
    plain, decorated = FastAPI(title="t"), FastAPI(title="t")
    for method, path, endpoint, options in _openapi_endpoints():
        plain.add_api_route(path, endpoint, methods=[method], **options)
        decorated.add_api_route(path, dispatch(endpoint), methods=[method], **options)
    assert orjson.dumps(decorated.openapi(), option=orjson.OPT_SORT_KEYS) == orjson.dumps(
        plain.openapi(), option=orjson.OPT_SORT_KEYS
    )
    assert len(plain.openapi()["paths"]) == 5
