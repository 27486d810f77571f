"""The per-class fast path: taken where it is exact, never where it is not."""

from __future__ import annotations

import functools
import json
import math
from datetime import datetime, timezone
from decimal import Decimal
from typing import Annotated, Any, Literal
from uuid import UUID

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from orjson_dispatch._models import model_json, model_plan
from pydantic import (
    AliasGenerator,
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    TypeAdapter,
    computed_field,
    field_serializer,
)
from pydantic.alias_generators import to_camel

from orjson_dispatch import dumps


class Message(BaseModel):
    type: Literal["message"] = "message"
    content: str


class FunctionCall(BaseModel):
    type: Literal["function_call"] = "function_call"
    name: str
    call_id: str = Field(alias="callId")


class Completion(BaseModel):
    ids: list[int]
    logprobs: list[float]
    output: list[Message | FunctionCall]
    meta: dict[str, Any] = {}
    finished: datetime | None = None


class SecretCompletion(Completion):
    password: str


class Camel(BaseModel):
    model_config = ConfigDict(alias_generator=AliasGenerator(serialization_alias=to_camel))
    token_ids: list[int]
    hidden: str = Field(default="x", exclude=True)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def token_count(self) -> int:
        return len(self.token_ids)


class Open(BaseModel):
    model_config = ConfigDict(extra="allow")
    a: int


class WithSerializer(BaseModel):
    when: datetime

    @field_serializer("when")
    def _when(self, value: datetime) -> str:
        return "custom"


class WithAnnotatedSerializer(BaseModel):
    value: Annotated[int, PlainSerializer(lambda v: v * 2)]


class Holder(BaseModel):
    inner: Message
    many: dict[str, Message] = {}


class Tree(BaseModel):
    children: list[Tree] = []


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
    for cls in (Completion, Message, FunctionCall, Camel, Open):
        counter = CountingSerializer(cls.__pydantic_serializer__)
        monkeypatch.setattr(cls, "__pydantic_serializer__", counter)
        counters[cls] = counter
    return counters


def completion() -> Completion:
    return Completion(
        ids=[1, 2, 3],
        logprobs=[-0.5, math.nan, -1.25],
        output=[Message(content="hi"), FunctionCall(name="f", callId="c1")],
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
    assert json.loads(dumps(value, response_model=Completion)) == expected
    assert json.loads(dumps(value)) == expected
    assert {cls: counter.calls for cls, counter in pydantic_calls.items() if counter.calls} == {}


def test_plans_exist_for_plain_classes() -> None:
    for cls in (Message, FunctionCall, Completion, Camel, Open, Holder):
        assert model_plan(cls, by_alias=True) is not None, cls


@pytest.mark.parametrize("cls", [WithSerializer, WithAnnotatedSerializer, Tree])
def test_no_plan_where_pydantic_differs(cls: type[BaseModel]) -> None:
    assert model_plan(cls, by_alias=True) is None


def test_aliases_excluded_and_computed_fields() -> None:
    value = Camel(token_ids=[5, 6])
    assert json.loads(model_json(value, by_alias=True)) == {"tokenIds": [5, 6], "tokenCount": 2}
    assert json.loads(model_json(value, by_alias=False)) == {"token_ids": [5, 6], "token_count": 2}


def test_extra_fields_are_serialized() -> None:
    value = Open(a=1, b={"c": [1, 2]})  # type: ignore[call-arg]
    assert json.loads(model_json(value, by_alias=True)) == {"a": 1, "b": {"c": [1, 2]}}


def test_subclass_instance_is_filtered_to_the_declared_class() -> None:
    value = SecretCompletion(ids=[1], logprobs=[0.0], output=[], password="hunter2")
    body = dumps(value, response_model=Completion)
    assert b"hunter2" not in body
    assert json.loads(body) == as_pydantic(value, Completion)


def test_nested_subclass_instance_is_filtered() -> None:
    class LoudMessage(Message):
        volume: int

    value = Holder(
        inner=LoudMessage(content="x", volume=11), many={"a": LoudMessage(content="y", volume=3)}
    )
    for body in (dumps(value), dumps(value, response_model=Holder)):
        assert b"volume" not in body
        assert json.loads(body) == as_pydantic(value)


def test_big_integers_are_exact() -> None:
    value = Completion(ids=[2**70, -(2**65)], logprobs=[], output=[])
    assert json.loads(dumps(value, response_model=Completion))["ids"] == [2**70, -(2**65)]
    assert json.loads(dumps({"n": 2**80, "m": value}))["n"] == 2**80


def test_constructed_instance_with_missing_field_takes_pydantic_path() -> None:
    value = Completion.model_construct(ids=[1], logprobs=[], output=[])
    assert json.loads(model_json(value, by_alias=True)) == json.loads(
        value.model_dump_json(by_alias=True, warnings=False)
    )


def test_cached_property_value_does_not_leak() -> None:
    class Cached(BaseModel):
        model_config = ConfigDict(ignored_types=(functools.cached_property,))
        a: int

        @functools.cached_property
        def expensive(self) -> int:
            return 42

    value = Cached(a=1)
    assert value.expensive == 42
    assert json.loads(model_json(value, by_alias=True)) == {"a": 1}


def test_dict_is_validated_and_filtered() -> None:
    body = dumps(
        {"ids": [1], "logprobs": [1], "output": [], "password": "x"}, response_model=Completion
    )
    assert json.loads(body) == {
        "ids": [1],
        "logprobs": [1.0],
        "output": [],
        "meta": {},
        "finished": None,
    }


# Field types whose values the strategies below generate, with the strategy for each.
_FIELD_TYPES: dict[str, tuple[Any, st.SearchStrategy[Any]]] = {
    "int": (int, st.integers()),
    "float": (float, st.floats()),
    "str": (str, st.text(max_size=8)),
    "bool": (bool, st.booleans()),
    "optional_int": (int | None, st.none() | st.integers()),
    "ints": (list[int], st.lists(st.integers(), max_size=4)),
    "floats": (list[float], st.lists(st.floats(), max_size=4)),
    "mapping": (dict[str, int], st.dictionaries(st.text(max_size=4), st.integers(), max_size=3)),
    "any": (Any, st.none() | st.integers() | st.text(max_size=4) | st.datetimes()),
    "datetime": (datetime, st.datetimes(timezones=st.none() | st.just(timezone.utc))),
    "uuid": (UUID, st.uuids()),
    "decimal": (Decimal, st.decimals(allow_nan=False, allow_infinity=False, places=3)),
    "literal": (Literal["a", "b"], st.sampled_from(["a", "b"])),
    "message": (Message, st.builds(Message, content=st.text(max_size=4))),
    "union": (
        Message | FunctionCall | None,
        st.none()
        | st.builds(Message, content=st.text(max_size=4))
        | st.builds(FunctionCall, name=st.text(max_size=4), callId=st.text(max_size=4)),
    ),
}


@st.composite
def models(draw: st.DrawFn) -> BaseModel:
    from pydantic import create_model

    kinds = draw(st.lists(st.sampled_from(sorted(_FIELD_TYPES)), min_size=1, max_size=5))
    fields: dict[str, Any] = {}
    values: dict[str, Any] = {}
    for index, kind in enumerate(kinds):
        annotation, values_strategy = _FIELD_TYPES[kind]
        name = f"f{index}_{kind}"
        alias_stem = draw(st.sampled_from([None, "A", "b-c", "ß"]))
        alias = None if alias_stem is None else f"{alias_stem}{index}"
        exclude = draw(st.integers(0, 4)) == 0
        fields[name] = (annotation, Field(alias=alias, exclude=exclude or None))
        values[alias or name] = draw(values_strategy)
    extra: Literal["ignore", "allow"] = draw(st.sampled_from(["ignore", "allow"]))
    cls = create_model("Generated", __config__=ConfigDict(extra=extra), **fields)
    if extra == "allow":
        values["extra_field"] = draw(st.integers() | st.text(max_size=3))
    model: BaseModel = cls.model_validate(values)
    return model


@settings(max_examples=300, deadline=None)
@given(models(), st.booleans())
def test_fast_path_matches_pydantic(model: BaseModel, by_alias: bool) -> None:
    expected = json.loads(model.model_dump_json(by_alias=by_alias))
    assert json.loads(model_json(model, by_alias=by_alias)) == expected
    typed = json.loads(dumps(model, response_model=type(model), by_alias=by_alias))
    assert typed == expected
