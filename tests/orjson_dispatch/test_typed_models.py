"""The per-class fast path: taken where it is exact, filtering what the declared class lacks.

Seen through the public ``dumps`` (and, for the classes kept alive, through HTTP); the private
plans themselves are tested in ``test_typed_model_plans.py``.
"""

from __future__ import annotations

import functools
import gc
import json
import math
import threading
import weakref
from datetime import datetime, timezone
from decimal import Decimal
from typing import Annotated, Any

import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute
from orjson_dispatch._options import DEFAULTS
from orjson_dispatch._route import DispatchRoute
from orjson_dispatch._typed import TypedEncoder
from pydantic import BaseModel, TypeAdapter, create_model
from pydantic_core import core_schema

from orjson_dispatch import dispatch, dumps
from tests.orjson_dispatch import fast_path_models as models
from tests.orjson_dispatch.apps import get_all
from tests.orjson_dispatch.oracles import fastapi_typed
from tests.orjson_dispatch.samples import Item


class CountingSerializer:
    """Stands in for a class's pydantic serializer and counts the calls that reach it."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.calls = 0

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self.real, name)
        if callable(attribute):

            @functools.wraps(attribute)
            def counted(*args: Any, **kwargs: Any) -> Any:
                self.calls += 1
                return attribute(*args, **kwargs)

            return counted
        return attribute


@pytest.fixture
def pydantic_calls(monkeypatch: pytest.MonkeyPatch) -> dict[type[BaseModel], CountingSerializer]:
    counters: dict[type[BaseModel], CountingSerializer] = {}
    for cls in (models.Completion, models.Message, models.FunctionCall, models.Camel, models.Open):
        counter = CountingSerializer(cls.__pydantic_serializer__)
        monkeypatch.setattr(cls, "__pydantic_serializer__", counter)
        counters[cls] = counter
    return counters


def completion() -> models.Completion:
    return models.Completion(
        ids=[1, 2, 3],
        logprobs=[-0.5, math.nan, -1.25],
        output=[models.Message(content="hi"), models.FunctionCall(name="f", callId="c1")],
        meta={"when": datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone.utc), "n": Decimal("1.5")},
    )


def as_pydantic(model: BaseModel, annotation: Any = None) -> Any:
    adapter: TypeAdapter[Any] = TypeAdapter(annotation or type(model))
    return json.loads(adapter.dump_json(model, by_alias=True))


def test_plain_model_never_reaches_pydantic(
    pydantic_calls: dict[type[BaseModel], CountingSerializer],
) -> None:
    value = completion()
    expected = as_pydantic(value)
    for counter in pydantic_calls.values():
        counter.calls = 0
    assert json.loads(dumps(value, response_model=models.Completion)) == expected
    assert json.loads(dumps(value)) == expected
    assert {cls: counter.calls for cls, counter in pydantic_calls.items() if counter.calls} == {}


def test_subclass_instance_is_filtered_to_the_declared_class() -> None:
    value = models.SecretCompletion(ids=[1], logprobs=[0.0], output=[], password="hunter2")
    body = dumps(value, response_model=models.Completion)
    assert b"hunter2" not in body
    assert json.loads(body) == as_pydantic(value, models.Completion)


def test_nested_subclass_instance_is_filtered() -> None:
    class LoudMessage(models.Message):
        volume: int

    value = models.Holder(
        inner=LoudMessage(content="x", volume=11), many={"a": LoudMessage(content="y", volume=3)}
    )
    for body in (dumps(value), dumps(value, response_model=models.Holder)):
        assert b"volume" not in body
        assert json.loads(body) == as_pydantic(value)


def test_big_integers_are_exact() -> None:
    value = models.Completion(ids=[2**70, -(2**65)], logprobs=[], output=[])
    assert json.loads(dumps(value, response_model=models.Completion))["ids"] == [2**70, -(2**65)]
    assert json.loads(dumps({"n": 2**80, "m": value}))["n"] == 2**80


def test_dict_is_validated_and_filtered() -> None:
    body = dumps(
        {"ids": [1], "logprobs": [1], "output": [], "password": "x"},
        response_model=models.Completion,
    )
    assert json.loads(body) == {
        "ids": [1],
        "logprobs": [1.0],
        "output": [],
        "meta": {},
        "finished": None,
    }


# --- a model class created per request ------------------------------------------------------------


def classes_kept(route_class: type[APIRoute] | None, typed: bool) -> list[type[BaseModel]]:
    """The model classes, one created per request, still alive once the requests are answered.

    Nothing of orjson_dispatch may keep a value's class alive: the encoders kept per class live
    with the class (a process creating classes on the fly would otherwise grow without bound).
    """
    made: list[weakref.ref[type[BaseModel]]] = []

    async def endpoint() -> Any:
        model = create_model(f"PerRequest{len(made)}", __base__=Item, extra=(int, 0))
        made.append(weakref.ref(model))
        return model(name="n", price=1)

    app = FastAPI()
    route: dict[str, Any] = {"response_model": Item if typed else None}
    if route_class is None:
        app.add_api_route("/x", dispatch(endpoint), **route)
    else:
        app.router.add_api_route("/x", endpoint, route_class_override=route_class, **route)
    for answer in get_all(app, *["/x"] * 20):
        assert answer.status_code == 200
    gc.collect()
    return [cls for ref in made if (cls := ref()) is not None]


@pytest.mark.parametrize("typed", [False, True], ids=["untyped", "typed"])
@pytest.mark.parametrize("route_class", [None, DispatchRoute], ids=["dispatch", "DispatchRoute"])
def test_model_class_per_request_is_collected(
    route_class: type[APIRoute] | None, typed: bool
) -> None:
    assert classes_kept(route_class, typed) == []


def test_a_value_written_while_another_thread_builds_the_encoder_is_written() -> None:
    """A caller holding `serialize` from before the build never waits on, nor loops into, it."""
    building, built = threading.Event(), threading.Event()
    schemas: list[str] = []

    class Slow(int):
        @classmethod
        def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
            schemas.append(threading.current_thread().name)
            if len(schemas) == 2:  # the first build's (the adapter below made the first)
                building.set()
                built.wait(10)
            return core_schema.int_schema()

    adapter: TypeAdapter[Any] = TypeAdapter(list[Slow])
    encoder = TypedEncoder(list[Slow], dump_json=adapter.dump_json, serialization=DEFAULTS)
    serialize = encoder.serialize
    written: dict[str, bytes] = {}
    first = threading.Thread(target=lambda: written.setdefault("first", serialize([1, 2])))
    first.start()
    building.wait(10)
    try:
        written["meanwhile"] = serialize([3])
    finally:
        built.set()
        first.join()
    assert written == {"first": b"[1,2]", "meanwhile": b"[3]"}


def test_an_unhashable_annotation_is_served() -> None:
    """Annotated metadata may be unhashable: the encoder is then built for each value."""
    declared = Annotated[list[int], {"unhashable": []}]
    assert dumps([1, 2], response_model=declared) == fastapi_typed(declared, [1, 2])
