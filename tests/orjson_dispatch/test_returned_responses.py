"""A returned Response is sent as it is; the route's response class shapes returned data.

The pass-through and response-class parity examples are in ``parity_cases.py``.
"""

from fastapi import FastAPI, Response
from fastapi.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from orjson_dispatch import dispatch
from tests.orjson_dispatch.apps import Ask, Twin, make_endpoint
from tests.orjson_dispatch.compare import assert_identical
from tests.orjson_dispatch.samples import ITEM, Item


def test_returned_response_is_the_very_object_sent(ask: Ask) -> None:
    seen: list[Response] = []

    class Spy(JSONResponse):
        async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
            seen.append(self)
            await super().__call__(scope, receive, send)

    sent = Spy({"x": 1})

    @dispatch
    async def endpoint() -> Spy:
        return sent

    app = FastAPI()
    app.get("/x")(endpoint)
    assert ask(app, "GET", "/x").json() == {"x": 1}
    assert seen == [sent]


def test_explicit_json_response_class_with_a_model(twin: Twin) -> None:
    """With a response class set, FastAPI dumps to Python then renders: NaN answers 500 there.

    Deliberate difference: dispatch writes ``null``, as FastAPI's default typed path does.
    """
    nan_item = Item(name="x", price=float("nan"))
    twin.add("GET", "/ok", make_endpoint(ITEM, annotation=Item), response_class=JSONResponse)
    twin.add("GET", "/nan", make_endpoint(nan_item, annotation=Item), response_class=JSONResponse)
    fastapi, ours = twin.both("GET", "/ok")
    assert_identical(ours, fastapi)
    fastapi, ours = twin.both("GET", "/nan")
    assert fastapi.status_code == 500
    assert ours.status_code == 200
    assert ours.json() == {"name": "x", "Price": None, "tags": [], "note": None}
