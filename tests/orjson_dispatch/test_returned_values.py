"""What FastAPI runs on a returned value runs under dispatch too, each case against FastAPI itself.

FastAPI validates every returned value against the declared type, an instance of exactly the
declared class included: its model validators (before, after, wrap) run even when the class
never revalidates instances. A response class of the route's own is given the content FastAPI
gives it, and `response_model_include`/`_exclude` reach pydantic as FastAPI passes them.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import AsyncIterator
from typing import Any

import fastapi.encoders
import fastapi.routing
import pytest
from fastapi import BackgroundTasks, Request, Response
from fastapi.responses import JSONResponse
from orjson_dispatch._route import DispatchRoute
from pydantic import BaseModel, model_validator

from tests.orjson_dispatch.apps import Twin, ask, declare
from tests.orjson_dispatch.compare import assert_equivalent, assert_identical
from tests.orjson_dispatch.samples import Envelope, Public, Wrapped
from tests.orjson_dispatch.versions import FASTAPI_STREAMS, NEEDS_STREAMS

pytestmark = pytest.mark.parametrize(
    "twin", [None, DispatchRoute], ids=["dispatch", "DispatchRoute"], indirect=True
)


class Ordered(BaseModel):
    low: int
    high: int

    @model_validator(mode="after")
    def ordered(self) -> Ordered:
        if self.low > self.high:
            raise ValueError("low must not exceed high")
        return self


class Item(BaseModel):
    secret: str = "s"
    note: str = "n"
    shown: str = "v"


class Basket(BaseModel):
    items: list[Item]


def test_after_validator_redacts_an_instance_changed_after_construction(twin: Twin) -> None:
    async def endpoint() -> Public:
        public = Public(name="a")
        public.token = "secret"
        return public

    twin.add("GET", "/public", endpoint)
    fastapi, ours = twin.both("GET", "/public")
    assert fastapi.json() == {"name": "a", "token": "***"}
    assert_identical(ours, fastapi)


def test_after_validator_redacts_a_constructed_instance(twin: Twin) -> None:
    async def endpoint() -> Public:
        return Public.model_construct(name="a", token="secret")

    twin.add("GET", "/constructed", endpoint)
    fastapi, ours = twin.both("GET", "/constructed")
    assert fastapi.json()["token"] == "***"
    assert_identical(ours, fastapi)


def test_after_validator_runs_on_a_nested_list_of_returned_instances(twin: Twin) -> None:
    async def endpoint() -> list[Public]:
        public = Public(name="a")
        public.token = "secret"
        return [public]

    twin.add("GET", "/list", endpoint)
    fastapi, ours = twin.both("GET", "/list")
    assert fastapi.json() == [{"name": "a", "token": "***"}]
    assert_identical(ours, fastapi)


def test_wrap_validator_runs_on_a_returned_instance(twin: Twin) -> None:
    async def endpoint() -> Wrapped:
        return Wrapped(name="a")

    twin.add("GET", "/wrapped", endpoint)
    fastapi, ours = twin.both("GET", "/wrapped")
    assert fastapi.json() == {"name": "A"}
    assert_identical(ours, fastapi)


def test_after_validator_rejecting_a_returned_instance_is_a_server_error(twin: Twin) -> None:
    async def endpoint() -> Ordered:
        ordered = Ordered(low=1, high=2)
        ordered.low = 3
        return ordered

    twin.add("GET", "/ordered", endpoint)
    fastapi, ours = twin.both("GET", "/ordered")
    assert fastapi.status_code == 500
    assert_identical(ours, fastapi)


@pytest.mark.skipif(not FASTAPI_STREAMS, reason=NEEDS_STREAMS)
def test_typed_json_lines_items_are_validated_as_fastapi_validates_them(twin: Twin) -> None:
    async def endpoint() -> AsyncIterator[Public]:
        public = Public(name="a")
        public.token = "secret"
        yield public
        yield Public.model_construct(name="b", token="secret")

    twin.add("GET", "/stream", endpoint)
    fastapi, ours = twin.both("GET", "/stream")
    assert b"secret" not in fastapi.content
    assert_identical(ours, fastapi)


class ErrorStatus(JSONResponse):
    """Answers 400 when the content it is given holds an error."""

    def __init__(self, content: Any, **kwargs: Any) -> None:
        super().__init__(content, **kwargs)
        if isinstance(content, dict) and "error" in content:
            self.status_code = 400


@pytest.mark.parametrize("response_class", [Envelope, ErrorStatus])
@pytest.mark.parametrize("typed", [True, False], ids=["typed", "untyped"])
def test_response_class_init_is_given_the_content(
    twin: Twin, response_class: type[JSONResponse], typed: bool
) -> None:
    async def endpoint() -> Any:
        return {"error": "bad", "n": 1}

    route: dict[str, Any] = {"response_class": response_class}
    if typed:
        route["response_model"] = dict[str, Any]
    twin.add("GET", "/classed", endpoint, **route)
    fastapi, ours = twin.both("GET", "/classed")
    assert_identical(ours, fastapi)


SELECTIONS = [
    {"response_model_include": {"items": {0: {"secret"}, "__all__": {"note"}}}},
    {"response_model_exclude": {"items": {0: {"secret"}, "__all__": {"note"}}}},
    {"response_model_exclude": {"items": {"__all__": {"secret"}, 1: {"shown"}}}},
]


@pytest.mark.parametrize("selection", SELECTIONS, ids=["include", "exclude", "exclude-index"])
def test_include_and_exclude_mixing_all_and_indexes(twin: Twin, selection: Any) -> None:
    async def endpoint() -> Basket:
        return Basket(items=[Item(), Item()])

    twin.add("GET", "/basket", endpoint, **selection)
    fastapi, ours = twin.both("GET", "/basket")
    assert fastapi.status_code == 200
    assert_identical(ours, fastapi)


@pytest.mark.skipif(not FASTAPI_STREAMS, reason=NEEDS_STREAMS)
@pytest.mark.parametrize("selection", SELECTIONS, ids=["include", "exclude", "exclude-index"])
def test_include_and_exclude_mixing_all_and_indexes_in_streams(twin: Twin, selection: Any) -> None:
    async def endpoint() -> AsyncIterator[Basket]:
        yield Basket(items=[Item(), Item()])

    twin.add("GET", "/baskets", endpoint, **selection)
    fastapi, ours = twin.both("GET", "/baskets")
    assert fastapi.content
    assert_identical(ours, fastapi)


# --- an endpoint that may return a Response or a value ------------------------------------------

# What server libraries declare for a generic endpoint (`-> Response`), and its neighbours; a
# union with a Response needs response_model=None under FastAPI.
MAY_RETURN_A_RESPONSE = {
    "Response": (Response, {}),
    "Any": (Any, {}),
    "union": (Response | dict[str, Any], {"response_model": None}),
}
CONTENT = {
    "output": [1, 2.5, None],
    "at": dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc),
    "id": uuid.UUID(int=7),
    "item": Item(),
    "tags": {"a"},
}


@pytest.fixture
def jsonable_encoder_calls(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The values FastAPI's handler hands to `jsonable_encoder` during the test."""
    calls: list[Any] = []
    encode = fastapi.encoders.jsonable_encoder

    def counting(value: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(value)
        return encode(value, *args, **kwargs)

    monkeypatch.setattr(fastapi.routing, "jsonable_encoder", counting)
    return calls


@pytest.mark.parametrize("declared", list(MAY_RETURN_A_RESPONSE))
def test_a_value_returned_under_a_response_annotation_is_encoded_by_orjson_as_fastapi_does(
    twin: Twin, declared: str, jsonable_encoder_calls: list[Any]
) -> None:
    annotation, route = MAY_RETURN_A_RESPONSE[declared]

    async def predict(request: Request) -> Any:  # LitServe's generic endpoint
        return {**CONTENT, "echo": await request.json()}

    twin.add("POST", "/predict", declare(predict, annotation), **route)
    fastapi, ours = twin.both("POST", "/predict", json={"input": 4})
    assert fastapi.status_code == 200
    assert fastapi.json()["echo"] == {"input": 4}
    assert_equivalent(ours, fastapi)
    jsonable_encoder_calls.clear()
    assert ask(twin.app, "POST", "/dispatch/predict", json={"input": 4}).status_code == 200
    assert jsonable_encoder_calls == []  # orjson encoded it
    assert twin.served("/predict")


@pytest.mark.parametrize("declared", list(MAY_RETURN_A_RESPONSE))
def test_a_returned_response_is_sent_as_it_is_whatever_the_annotation(
    twin: Twin, declared: str
) -> None:
    annotation, route = MAY_RETURN_A_RESPONSE[declared]

    def predict(fail: bool = False) -> Any:
        if fail:
            return Response(b"not json", status_code=503, headers={"x-kept": "1"})
        return {"ok": True}

    twin.add("GET", "/predict", declare(predict, annotation), **route)
    for query in ({"fail": "true"}, {}):
        fastapi, ours = twin.both("GET", "/predict", params=query)
        assert_identical(ours, fastapi)
    assert fastapi.json() == {"ok": True}


def test_an_injected_responses_status_and_headers_and_background_tasks_apply(twin: Twin) -> None:
    done: list[str] = []

    async def predict(response: Response, background: BackgroundTasks) -> Response:
        response.status_code = 201
        response.headers["x-model"] = "m"
        response.set_cookie("session", "s")
        background.add_task(done.append, "logged")
        return {"output": [1, 2]}  # type: ignore[return-value]

    twin.add("POST", "/predict", predict)
    fastapi, ours = twin.both("POST", "/predict")
    assert (fastapi.status_code, fastapi.headers["x-model"]) == (201, "m")
    assert_equivalent(ours, fastapi)
    assert done == ["logged", "logged"]


def test_a_204_route_under_a_response_annotation_answers_no_body(twin: Twin) -> None:
    async def predict() -> Response:
        return {"dropped": True}  # type: ignore[return-value]

    twin.add("POST", "/predict", predict, status_code=204)
    fastapi, ours = twin.both("POST", "/predict")
    assert (fastapi.status_code, fastapi.content) == (204, b"")
    assert_identical(ours, fastapi)
