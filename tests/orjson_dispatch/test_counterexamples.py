"""Single examples the parity property tests found, each against FastAPI itself.

Every case here was a counterexample once (or is a deliberate difference pinned down exactly);
they run on every commit, fast, with a readable name, whatever hypothesis draws that day.
"""

import datetime as dt
import math
from decimal import Decimal
from typing import Any

import numpy as np
import pytest
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, TypeAdapter, computed_field

from orjson_dispatch import dispatch, dumps
from tests.orjson_dispatch.apps import UNTYPED, Route, make_endpoint, serve
from tests.orjson_dispatch.compare import json_pairs
from tests.orjson_dispatch.oracles import fastapi_untyped
from tests.orjson_dispatch.strategies.hostile import Day, Price, RenamingDict, ReversedList
from tests.orjson_dispatch.strategies.leaves import Attrs, Kind, Point, Tag
from tests.orjson_dispatch.versions import (
    FASTAPI_DUMPS_JSON,
    NAN_AS_STRINGS,
    NEEDS_NAN_AS_STRINGS,
)


def answers(value: Any, annotation: Any = UNTYPED, **route: Any) -> tuple[int, bytes, int, bytes]:
    """FastAPI's and dispatch's (status, body) for an endpoint returning ``value``."""
    got = serve(
        Route("/fastapi", make_endpoint(value, annotation=annotation, is_async=True), route),
        Route(
            "/dispatch",
            dispatch(make_endpoint(value, annotation=annotation, is_async=True)),
            route,
        ),
    )
    fastapi, ours = got["/fastapi"], got["/dispatch"]
    return fastapi.status_code, fastapi.content, ours.status_code, ours.content


# --- untyped: dict keys ----------------------------------------------------------------------


def test_sqlalchemy_state_keys_are_dropped_like_jsonable_encoder() -> None:
    """jsonable_encoder(sqlalchemy_safe=True) drops str keys starting with ``_sa``."""
    value = {"_sa_instance_state": object(), "_sa": 1, "name": "x", "_s": 2}
    assert fastapi_untyped(value) == b'{"name":"x","_s":2}'
    assert json_pairs(dumps(value)) == [("name", "x"), ("_s", 2)]
    status, body, our_status, our_body = answers(value)
    assert (our_status, json_pairs(our_body)) == (status, json_pairs(body))


@pytest.mark.parametrize("key", [2**64, 2**100, -(2**63) - 1])
def test_integer_keys_beyond_64_bits_are_written_exactly(key: int) -> None:
    value = {key: "v"}
    expected = fastapi_untyped(value)
    assert expected == b'{"%d":"v"}' % key
    assert dumps(value) == expected
    status, body, our_status, our_body = answers(value)
    assert (our_status, our_body) == (status, body) == (200, expected)


@pytest.mark.parametrize("key", [5.960464477539063e-08, 1e-7, 1e16, 1.5e300, -2.5e-5])
def test_float_keys_are_written_like_python(key: float) -> None:
    """json.dumps writes float keys with ``float.__repr__`` (``1e-07``, ``1e+16``)."""
    value = {key: 1}
    assert fastapi_untyped(value) == b'{"%s":1}' % repr(key).encode()
    assert json_pairs(dumps(value)) == json_pairs(fastapi_untyped(value))


@pytest.mark.parametrize("key", [Kind.A, Tag("t")], ids=["str-enum", "str-subclass"])
def test_str_subclass_keys_are_written_like_str(key: str) -> None:
    value = {key: None, "n": {key: 1}}
    expected = fastapi_untyped(value)
    assert json_pairs(dumps(value)) == json_pairs(expected)
    status, body, our_status, our_body = answers(value)
    assert (our_status, json_pairs(our_body)) == (status, json_pairs(body))


@pytest.mark.parametrize(
    ("key", "written"), [(math.nan, "NaN"), (math.inf, "Infinity"), (-math.inf, "-Infinity")]
)
def test_non_finite_float_keys_are_written_as_fastapi_streams_write_them(
    key: float, written: str
) -> None:
    """A deliberate difference: FastAPI's responses answer 500, its streams write the key."""
    with pytest.raises(ValueError, match="Out of range float values"):
        fastapi_untyped({key: 1})
    assert (
        dumps({key: 1, "n": {key: None}}) == f'{{"{written}":1,"n":{{"{written}":null}}}}'.encode()
    )


@pytest.mark.parametrize("seconds", [1, 59, -3601, 5 * 3600 + 30 * 60 + 15])
def test_datetime_keys_keep_sub_minute_utc_offsets(seconds: int) -> None:
    tz = dt.timezone(dt.timedelta(seconds=seconds))
    value = {dt.datetime(2000, 1, 1, tzinfo=tz): 1, dt.time(1, 2, tzinfo=tz): 2}
    expected = fastapi_untyped(value)
    assert json_pairs(dumps(value)) == json_pairs(expected)
    # Values were always right; keys go through another encoder.
    assert dumps(list(value)) == fastapi_untyped(list(value))


# --- untyped: dataclasses ------------------------------------------------------------------------


def test_dataclass_holding_a_set_keeps_fastapis_element_order() -> None:
    """FastAPI encodes dataclasses through ``dataclasses.asdict``, which deep-copies a set.

    The copy can iterate in another order than the original (hash collisions): inserted as
    0, 3, 11, this frozenset iterates 0, 11, 3 and its copy 0, 3, 11.
    """
    value = Point(x=0, y=frozenset([0, 3, 11]))
    assert list(value.y) == [0, 11, 3]
    assert fastapi_untyped(value) == b'{"x":0,"y":[0,3,11],"label":"p"}'
    assert dumps(value) == fastapi_untyped(value)


class Bag(BaseModel):
    """A model with a set field, for sets reached through a dataclass."""

    ids: set[int]


def test_set_inside_a_model_inside_a_dataclass_keeps_fastapis_element_order() -> None:
    """``asdict`` deep-copies the model too, and with it the set (see above)."""
    bag = Bag(ids=[0, 3, 11])  # type: ignore[arg-type]  # validated into a set, in this order
    assert list(bag.ids) == [0, 11, 3]
    value = Point(x=0, y=bag)
    assert fastapi_untyped(value) == b'{"x":0,"y":{"ids":[0,3,11]},"label":"p"}'
    assert dumps(value) == fastapi_untyped(value)
    assert dumps([Point(x=0, y=[bag])]) == fastapi_untyped([Point(x=0, y=[bag])])


def test_set_inside_a_plain_object_inside_a_dataclass_keeps_fastapis_element_order() -> None:
    """``asdict`` deep-copies objects FastAPI then encodes through ``vars()``, sets included."""
    import types

    for value in (
        Point(x=0, y=Attrs(a=frozenset([0, 3, 11]), b="")),
        Point(x=0, y=types.SimpleNamespace(s={0, 3, 11})),
    ):
        assert dumps(value) == fastapi_untyped(value)


def test_dataclass_holding_what_asdict_cannot_copy_is_encoded_field_by_field() -> None:
    """Deliberate difference: FastAPI's ``dataclasses.asdict`` deep-copies and fails (500)."""
    import types

    value = Point(x=0, y=types.MappingProxyType({"a": 1}))
    with pytest.raises(TypeError, match="pickle"):
        fastapi_untyped(value)
    assert dumps(value) == fastapi_untyped({"x": 0, "y": {"a": 1}, "label": "p"})


@pytest.mark.parametrize(
    ("x", "options"),
    [(1, {"exclude_none": True}), (2**64, {}), (2**64, {"exclude_unset": True})],
    ids=["options", "big-int", "big-int-and-options"],
)
def test_dataclass_is_not_copied_on_the_exact_path_either(x: int, options: dict[str, bool]) -> None:
    """The deliberate difference above holds whichever encoder path the value takes."""
    import types

    value = Point(x=x, y=types.MappingProxyType({"a": 1}))
    expected = fastapi_untyped({"x": x, "y": {"a": 1}, "label": "p"})
    assert dumps(value, **options) == expected


# --- numpy ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("flag", ["exclude_none", "exclude_unset", "exclude_defaults"])
def test_empty_numpy_array_is_an_empty_list_with_every_option(flag: str) -> None:
    """Deliberate numpy support: an array is its ``tolist()``, whatever the options.

    (FastAPI answers ``{}`` for an empty array: ``dict(array)`` of nothing succeeds.)
    """
    value = [np.array([], dtype=np.int64), np.zeros((0, 3))]
    assert dumps(value) == b"[[],[]]"
    assert dumps(value, **{flag: True}) == b"[[],[]]"


def test_float32_is_written_with_its_own_shortest_representation() -> None:
    assert dumps(np.float32(43328352.0)) == b"43328350.0"
    assert dumps(np.float64(0.1)) == fastapi_untyped(np.float64(0.1)) == b"0.1"


# --- typed ---------------------------------------------------------------------------------------


class Item(BaseModel):
    """A model with a float."""

    name: str
    price: float


def test_explicit_json_response_class_writes_nan_as_null() -> None:
    """Deliberate difference: with ``response_class=JSONResponse`` FastAPI dumps to Python and
    renders with ``json.dumps(allow_nan=False)``, so NaN answers 500; dispatch writes ``null``,
    as FastAPI's default typed path does."""
    nan_item = Item(name="x", price=math.nan)
    default = answers(nan_item, Item)
    assert default[2:] == (200, b'{"name":"x","price":null}')
    if FASTAPI_DUMPS_JSON:  # before 0.130 FastAPI's default class was JSONResponse too (500)
        assert default[:2] == (200, b'{"name":"x","price":null}')
    status, _, our_status, our_body = answers(nan_item, Item, response_class=JSONResponse)
    assert status == 500
    assert (our_status, our_body) == (200, b'{"name":"x","price":null}')


def test_extra_fields_come_before_computed_fields_like_pydantic() -> None:
    """pydantic writes fields, then extra fields, then computed fields."""

    class Open(BaseModel):
        model_config = ConfigDict(extra="allow")

        a: int

        @computed_field  # type: ignore[prop-decorator]
        @property
        def total(self) -> int:
            return self.a + 1

    value = Open(a=1, z=5)  # type: ignore[call-arg]  # an extra field
    expected = TypeAdapter(Open).dump_json(value, by_alias=True)
    assert expected == b'{"a":1,"z":5,"total":2}'
    assert dumps(value, response_model=Open) == expected
    assert dumps(value) == fastapi_untyped(value)


# --- found by the extended strategies, not fixed yet (strategies.untyped.KNOWN_DISCREPANCIES) -----


def _nested(inner: Any, depth: int) -> Any:
    for _ in range(depth):
        inner = [inner]
    return inner


@pytest.mark.parametrize("inner", [[], {}], ids=["list", "dict"])
def test_empty_container_at_orjsons_depth_limit(inner: Any) -> None:
    value = _nested(inner, 254)
    assert dumps(value) == fastapi_untyped(value)


@pytest.mark.parametrize("leaf", [2**64, np.int64(7)], ids=["big-int", "numpy"])
def test_big_integer_or_numpy_nested_deeper_than_orjsons_limit(leaf: Any) -> None:
    value = _nested(leaf, 255)
    assert dumps(value) == fastapi_untyped(_nested(int(leaf), 255))


def test_dict_whose_items_show_keys_its_keys_has_not() -> None:
    value = RenamingDict(a=1)
    assert fastapi_untyped(value) == b"{}"
    assert dumps(value) == b"{}"


@pytest.mark.xfail(
    strict=True,
    reason="container subclass rebuilt by dataclasses.asdict: FastAPI's asdict rebuilds a list "
    "from its own iteration (a dict from its items()) and jsonable_encoder walks the rebuilt one",
)
@pytest.mark.parametrize(
    ("held", "fastapi"),
    [(ReversedList([1, 2]), [1, 2]), (RenamingDict(h=None), [])],  # as json_pairs parses
    ids=["list-overriding-iter", "dict-renaming-in-items"],
)
def test_container_subclass_inside_a_dataclass(held: Any, fastapi: Any) -> None:
    value = Point(x=0, y=held)
    assert json_pairs(fastapi_untyped(value))[1] == ("y", fastapi)
    assert dumps(value) == fastapi_untyped(value)


@pytest.mark.parametrize(
    ("value", "options", "plain"),
    [
        ({"v": Price.HALF}, {"exclude_none": True}, {"v": Decimal("0.5")}),
        ([2**64, Day.LEAP], {}, [2**64, dt.date(2024, 2, 29)]),
    ],
    ids=["options", "big-int"],
)
def test_unwritable_enum_value_on_the_exact_path(
    value: Any, options: dict[str, bool], plain: Any
) -> None:
    with pytest.raises(TypeError):
        fastapi_untyped(value, **options)  # FastAPI: 500
    assert dumps(value, **options) == fastapi_untyped(plain, **options)  # the deliberate rule


class Loose(BaseModel):
    """A model with an int field and an Any field."""

    n: int
    a: Any


def test_numpy_value_inside_a_model_is_encoded_whichever_path_the_model_takes() -> None:
    fast = Loose(n=1, a=np.False_)
    assert dumps(fast) == b'{"n":1,"a":false}'
    slow = Loose(n=1, a=np.False_)
    slow.n = True  # pydantic does not validate assignment: written 1
    assert dumps(slow) == b'{"n":1,"a":false}'


class NanStrings(BaseModel):
    """A model writing NaN as the string "NaN"."""

    model_config = ConfigDict(ser_json_inf_nan="strings" if NAN_AS_STRINGS else "null")

    f: float


@pytest.mark.skipif(not NAN_AS_STRINGS, reason=NEEDS_NAN_AS_STRINGS)
@pytest.mark.xfail(
    strict=True,
    reason="non-finite float in a 'strings' model on the exact path: orjson's path writes the "
    'model\'s own JSON ("NaN"), the exact path model_dump(mode="json"), which leaves NaN a float '
    "that then becomes null",
)
@pytest.mark.parametrize(
    ("value", "options"),
    [
        ({"v": NanStrings(f=math.nan), "b": 2**64}, {}),
        ({"v": NanStrings(f=math.nan)}, {"exclude_none": True}),
    ],
    ids=["big-int", "options"],
)
def test_nan_in_a_strings_model_is_a_string_on_every_path(
    value: dict[str, Any], options: dict[str, bool]
) -> None:
    assert dumps({"v": NanStrings(f=math.nan)}) == b'{"v":{"f":"NaN"}}'  # the deliberate rule
    assert json_pairs(dumps(value, **options))[0] == ("v", [("f", "NaN")])
