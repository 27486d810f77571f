"""The plans of model classes (private `_plans` and `_classes`), tested directly.

These tests reach into ``_plans.plan`` and ``_classes.json_writer``: they pin down which classes
orjson writes from their ``__dict__``, which fields pydantic converts, and what is written. When
the modules change, adapt them here; the behaviour seen through the public API is tested in
``test_typed_models.py``. ``ORJSON_DISPATCH_PYDANTIC_MODELS=1`` makes pydantic write every model.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import warnings
from collections.abc import Callable
from datetime import datetime, timezone
from decimal import Decimal
from typing import Annotated, Any, ClassVar, Literal
from uuid import UUID

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from orjson_dispatch._classes import json_writer
from orjson_dispatch._plans import plan
from orjson_dispatch._results import KeepResultsError, keeping_results
from pydantic import VERSION as PYDANTIC_VERSION
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    computed_field,
    field_serializer,
)

from orjson_dispatch import dumps
from tests.hypothesis_runs import examples
from tests.orjson_dispatch.fast_path_models import (
    Camel,
    Completion,
    FunctionCall,
    Holder,
    Message,
    Open,
)
from tests.orjson_dispatch.oracles import fastapi_typed, fastapi_untyped


class WithSerializer(BaseModel):
    when: datetime

    @field_serializer("when")
    def _when(self, value: datetime) -> str:
        return "custom"


class WithAnnotatedSerializer(BaseModel):
    value: Annotated[int, PlainSerializer(lambda v: v * 2)]


class Tree(BaseModel):
    children: list[Tree] = []


def written(value: Any, *, by_alias: bool) -> bytes:
    """`json_writer` as the untyped path calls it: again, its results kept, if user code runs."""
    try:
        return json_writer(type(value), by_alias)(value)
    except KeepResultsError:
        return keeping_results(lambda: json_writer(type(value), by_alias)(value))


def test_plain_classes_are_written_from_their_dict() -> None:
    for cls in (Message, FunctionCall, Completion, Open, Holder, Tree):
        found = plan(cls, by_alias=True)
        assert not found.whole, cls
        assert not found.converted, cls


def test_pydantic_writes_whole_a_class_whose_serializer_reads_the_model() -> None:
    assert plan(WithSerializer, by_alias=True).whole
    assert plan(Camel, by_alias=True).whole  # a computed field


def test_a_field_with_a_serializer_is_pydantics_and_its_siblings_are_not() -> None:
    found = plan(WithAnnotatedSerializer, by_alias=True)
    assert not found.whole
    assert set(found.converted) == {"value"}
    value = WithAnnotatedSerializer(value=2)
    assert written(value, by_alias=True) == value.model_dump_json().encode()


def test_recursive_models_are_written_as_pydantic_writes_them() -> None:
    value = Tree(children=[Tree(), Tree(children=[Tree()])])
    assert written(value, by_alias=True) == value.model_dump_json().encode()


def test_aliases_excluded_and_computed_fields() -> None:
    value = Camel(token_ids=[5, 6])
    assert json.loads(written(value, by_alias=True)) == {"tokenIds": [5, 6], "tokenCount": 2}
    assert json.loads(written(value, by_alias=False)) == {"token_ids": [5, 6], "token_count": 2}


def test_extra_fields_are_serialized() -> None:
    value = Open(a=1, b={"c": [1, 2]})  # type: ignore[call-arg]
    assert json.loads(written(value, by_alias=True)) == {"a": 1, "b": {"c": [1, 2]}}


def test_constructed_instance_with_missing_field_takes_pydantic_path() -> None:
    value = Completion.model_construct(ids=[1], logprobs=[], output=[])
    assert json.loads(written(value, by_alias=True)) == json.loads(
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
    assert json.loads(written(value, by_alias=True)) == {"a": 1}


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


@settings(max_examples=examples(300))
@given(models(), st.booleans())
def test_fast_path_matches_pydantic(model: BaseModel, by_alias: bool) -> None:
    expected = json.loads(model.model_dump_json(by_alias=by_alias))
    assert json.loads(written(model, by_alias=by_alias)) == expected
    typed = json.loads(dumps(model, response_model=type(model), by_alias=by_alias))
    assert typed == expected


# --- one field pydantic's, its siblings the generated code's ------------------------------------


class Instructions(BaseModel):
    """Like `openai.types.responses.Response.instructions`: a union holding a list of models."""

    instructions: str | list[Message] | None = None
    ids: list[int] = []


@pytest.mark.parametrize("instructions", [None, "be terse", [Message(content="hi")]])
def test_a_union_holding_a_list_of_models_is_written_from_the_dict(instructions: Any) -> None:
    assert not plan(Instructions, by_alias=True).converted
    value = Instructions(instructions=instructions, ids=[1, 2])
    assert written(value, by_alias=True) == value.model_dump_json().encode()
    assert dumps(value) == fastapi_untyped(value)
    assert dumps(value, response_model=Instructions) == fastapi_typed(Instructions, value)


class Counted(BaseModel):
    """A computed field counting its evaluations, returning a value of another type at will."""

    big: int = 0
    bigs: list[int] = []
    result: Any = 1
    calls: ClassVar[list[int]] = []

    @computed_field  # type: ignore[prop-decorator]
    @property
    def total(self) -> int:
        self.calls.append(1)
        return self.result  # type: ignore[no-any-return]


# pydantic's JSON writer (`dump_json`, the typed oracle's) reads a computed field twice before
# pydantic 2.12 (pydantic-core 2.35), once since; its JSON-mode conversion (`model_dump(mode=
# "json")`, jsonable_encoder's) reads it once. dispatch reads it once on every version.
_WRITER_READS = 2 if tuple(map(int, PYDANTIC_VERSION.split(".")[:2])) < (2, 12) else 1


@pytest.mark.parametrize(
    "fields",
    [{}, {"result": "one"}, {"result": 2.5}, {"big": 2**70}, {"bigs": [1, -(2**64)]}],
    ids=["int", "str", "float", "big-int", "big-int-in-a-list"],
)
def test_a_computed_field_is_evaluated_once(fields: dict[str, Any]) -> None:
    value = Counted(**fields)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pydantic warns of a value of another type
        paths: list[tuple[Callable[[], bytes], Callable[[], bytes], int]] = [
            (lambda: dumps(value), lambda: fastapi_untyped(value), 1),
            (
                lambda: dumps(value, response_model=Counted),
                lambda: fastapi_typed(Counted, value),
                _WRITER_READS,
            ),
        ]
        for ours, fastapi, reads in paths:
            Counted.calls.clear()
            expected = fastapi()
            assert len(Counted.calls) == reads
            Counted.calls.clear()
            assert ours() == expected
            assert len(Counted.calls) == 1


# --- deferred schemas ------------------------------------------------------------------------


def test_a_class_met_before_its_schema_is_built_gets_code() -> None:
    class Part(BaseModel):
        model_config = ConfigDict(defer_build=True)
        text: str

    class Whole(BaseModel):
        model_config = ConfigDict(defer_build=True)
        parts: list[Part]

    value = Whole.model_construct(parts=[Part.model_construct(text="a")])
    assert not Whole.__pydantic_complete__
    assert not Part.__pydantic_complete__
    assert written(value, by_alias=True) == b'{"parts":[{"text":"a"}]}'
    assert not plan(Whole, by_alias=True).whole
    assert not plan(Part, by_alias=True).whole


# --- unions of bulk data: list[float] | str, X | Any | None -----------------------------------


class Vector(BaseModel):
    embedding: list[float] | str
    logprobs: Message | Any | None = None
    items: list[Message] | dict[str, Message] | None = None


class SubMessage(Message):
    secret: str = "s3cret"


_UNION_VALUES: list[dict[str, Any]] = [
    {"embedding": [0.5, 1.5]},
    {"embedding": "AAAA", "logprobs": Message(content="a")},
    {"embedding": [1, 2], "logprobs": {"content": [1, 2.5]}},  # ints held by list[float]
    {"embedding": [], "logprobs": 3, "items": {"k": Message(content="b")}},
    {"embedding": [0.25], "logprobs": SubMessage(content="c"), "items": [Message(content="d")]},
    {"embedding": [0.25], "items": [SubMessage(content="e")]},
]


@pytest.mark.parametrize("fields", _UNION_VALUES)
def test_unions_of_bulk_data_are_written_from_the_dict(fields: dict[str, Any]) -> None:
    assert not plan(Vector, by_alias=True).converted
    value = Vector.model_construct(**{"logprobs": None, "items": None, **fields})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pydantic warns of values of other types
        # Constructed: ints in a `list[float]` are written as held (the contract's second tier),
        # where pydantic before 2.9 converts them; the same numbers.
        expected = value.model_dump_json().encode()
        assert json.loads(written(value, by_alias=True)) == json.loads(expected)
        assert json.loads(dumps(value)) == json.loads(fastapi_untyped(value))
        validated = Vector.model_validate(fields)
        assert dumps(validated, response_model=Vector) == fastapi_typed(Vector, validated)


class HeldNumbers(BaseModel):
    """Unions whose container's numbers pydantic converts on some releases and not on others."""

    floats_or_int: list[float] | int = 0
    floats_or_str: list[float] | str = ""
    tuple_or_str: tuple[float, ...] | str = ""
    dict_or_str: dict[str, float] | str = ""
    nested_or_str: list[list[float]] | str = ""
    ints_or_str: list[int] | str = ""


@pytest.mark.parametrize(
    "fields",
    [
        {"floats_or_int": [1, True], "floats_or_str": [1.5]},
        {"floats_or_str": [1, 2], "tuple_or_str": (1, 2.5)},
        {"dict_or_str": {"k": 1}, "nested_or_str": [[1, 0.5]]},
        {"ints_or_str": [True, 2], "floats_or_str": [0.5, True]},
        {"floats_or_int": [0.5], "tuple_or_str": (0.5,), "nested_or_str": [[0.5]]},
    ],
)
def test_numbers_held_by_a_union_are_written_as_held(fields: dict[str, Any]) -> None:
    # The contract's second tier: pydantic writes them as held or converted depending on the
    # union and on its release (`list[float] | str` converts an int before pydantic 2.9 only);
    # they are written as held, the same numbers.
    value = HeldNumbers.model_construct(**fields)
    held = json.loads(json.dumps({**HeldNumbers().model_dump(), **fields}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pydantic warns of values of other types
        assert json.loads(written(value, by_alias=True)) == held
        assert written(value, by_alias=True) == orjson.dumps(held)
        assert json.loads(dumps(value)) == json.loads(fastapi_untyped(value))


# --- the switch: pydantic writes every model ----------------------------------------------------

_SWITCH_PROBE = """
from orjson_dispatch._plans import plan
from orjson_dispatch._results import KeepResultsError, keeping_results
from orjson_dispatch import dumps
from tests.orjson_dispatch.fast_path_models import Message
value = Message(content="hi")
print(bool(plan(Message, by_alias=True).whole), dumps(value).decode())
"""


def _run(switch: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ORJSON_DISPATCH_PYDANTIC_MODELS": switch}
    return subprocess.run(
        [sys.executable, "-c", _SWITCH_PROBE], env=env, capture_output=True, text=True, check=False
    )


def test_the_switch_sends_every_model_to_pydantic() -> None:
    on, off = _run("1"), _run("0")
    assert on.returncode == 0, on.stderr
    assert off.returncode == 0, off.stderr
    used_pydantic, body = on.stdout.split(" ", 1)
    assert used_pydantic == "True"
    assert off.stdout.split(" ", 1) == ["False", body]


def test_a_bad_switch_value_names_the_variable() -> None:
    bad = _run("yes")
    assert bad.returncode != 0
    assert "ORJSON_DISPATCH_PYDANTIC_MODELS must be 1 or 0" in bad.stderr
