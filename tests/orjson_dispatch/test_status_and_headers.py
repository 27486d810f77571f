"""Status, headers and cookies set on the injected Response or by the decorator are sent."""

from typing import Any

import pytest
from fastapi import FastAPI, Response

from orjson_dispatch import dispatch
from tests.orjson_dispatch.apps import UNTYPED, Ask, Twin, declare
from tests.orjson_dispatch.compare import assert_identical
from tests.orjson_dispatch.samples import ITEM, Item


@pytest.mark.parametrize("typed", [True, False])
def test_injected_response_status_headers_and_cookies_are_kept(typed: bool, twin: Twin) -> None:
    """The injected Response's status beats the route's; its headers and cookies all arrive.

    The deleted cookie's ``expires`` date is made from the clock when the header is built, so it
    is checked to be in the past rather than compared (see ``compare.comparable_headers``).
    """

    async def endpoint(response: Response) -> Any:
        response.status_code = 202
        response.headers["x-request-cost"] = "3"
        response.headers.append("x-multi", "a")
        response.headers.append("x-multi", "b")
        response.set_cookie("session", "abc", httponly=True, max_age=60)
        response.set_cookie("theme", "dark")
        response.delete_cookie("old")
        return ITEM

    twin.add("GET", "/r", declare(endpoint, Item if typed else UNTYPED), status_code=201)
    fastapi, ours = twin.both("GET", "/r")
    assert fastapi.status_code == 202
    assert fastapi.headers.get_list("x-multi") == ["a", "b"]
    cookies = fastapi.headers.get_list("set-cookie")
    assert [cookie.split("=", 1)[0] for cookie in cookies] == ["session", "theme", "old"]
    assert_identical(ours, fastapi)


def test_decorator_sets_status_headers_and_media_type(ask: Ask) -> None:
    @dispatch(status_code=201, headers={"x-a": "b"}, media_type="application/vnd.api+json")
    async def endpoint() -> dict[str, int]:
        return {"a": 1}

    app = FastAPI()
    app.post("/x")(endpoint)
    answer = ask(app, "POST", "/x")
    assert answer.status_code == 201
    assert answer.headers["x-a"] == "b"
    assert answer.headers["content-type"] == "application/vnd.api+json"
    assert answer.json() == {"a": 1}
