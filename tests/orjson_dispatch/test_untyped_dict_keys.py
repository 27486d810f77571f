"""Dict keys of untyped values are written as FastAPI writes them, each against FastAPI itself.

FastAPI's ``jsonable_encoder`` drops SQLAlchemy's ``_sa`` keys, turns every key into a str the way
``json.dumps`` does (``float.__repr__``, ``true``, ``null``, exact digits beyond 64 bits) and keys
of str subclasses and enums into their str. orjson writes some keys itself and leaves the rest to
the exact path: both must agree with FastAPI.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from typing import Any

import pydantic
import pytest
from fastapi.encoders import jsonable_encoder

from orjson_dispatch import dumps
from tests.orjson_dispatch.apps import serve_both
from tests.orjson_dispatch.compare import json_pairs
from tests.orjson_dispatch.oracles import fastapi_untyped
from tests.orjson_dispatch.strategies.leaves import Kind, Tag

# --- SQLAlchemy's state keys ----------------------------------------------------------------------


def test_sqlalchemy_state_keys_are_dropped_like_jsonable_encoder() -> None:
    """jsonable_encoder(sqlalchemy_safe=True) drops str keys starting with ``_sa``."""
    value = {"_sa_instance_state": object(), "_sa": 1, "name": "x", "_s": 2}
    assert fastapi_untyped(value) == b'{"name":"x","_s":2}'
    assert json_pairs(dumps(value)) == [("name", "x"), ("_s", 2)]
    fastapi, ours = serve_both(value)
    assert (ours.status_code, json_pairs(ours.content)) == (
        fastapi.status_code,
        json_pairs(fastapi.content),
    )


def snake_case_body(keys: int) -> dict[str, Any]:
    # The SQLAlchemy-key scan walks from underscore to underscore for a budget that grows with
    # the body's size, then searches the rest: few keys around a long array of numbers end
    # within the walk, many keys (200, 5000) go past it.
    return {"token_ids": list(range(20_000)), **{f"field_{i}_name": i for i in range(keys)}}


@pytest.mark.parametrize("keys", [0, 10, 200, 5000])
@pytest.mark.parametrize("where", ["first", "last", "nested", "after_sa_in_words"])
def test_sqlalchemy_keys_are_dropped_wherever_they_are(keys: int, where: str) -> None:
    value: dict[str, Any] = snake_case_body(keys)
    if where == "first":
        value = {"_sa_instance_state": None, **value}
    elif where == "last":
        value["_sa_instance_state"] = None
    elif where == "nested":
        value["nested"] = [{"inner_key": 1, "_sa_x": 2}]
    else:  # "_sa" inside words (keys and text) before the key: the search looks past them
        value = {**value, "is_safe": "max_samples", "_sa_instance_state": None}
    body = dumps(value)
    assert b'"_sa' not in body
    assert json.loads(body) == jsonable_encoder(value)


@pytest.mark.parametrize("keys", [0, 200, 5000])
def test_a_string_that_begins_with_sa_is_kept(keys: int) -> None:
    value = {**snake_case_body(keys), "note": "_sample text", "_sample": 1}
    assert (
        json.loads(dumps(value))
        == jsonable_encoder(value)
        == {**snake_case_body(keys), "note": "_sample text"}
    )


class _Extra(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="allow")
    name: str = "x"


@pytest.mark.parametrize("where", ["extra", "dict_value", "nested_dict", "in_a_string"])
def test_sqlalchemy_keys_of_a_small_body_are_dropped(where: str) -> None:
    """Below one walk step (700 bytes), the scan is one search for ``"_sa``: each place a key
    can be, and a string that only begins with it, against FastAPI."""
    value: Any
    if where == "extra":
        value = _Extra.model_validate({"_sa_instance_state": 1, "other": 2})
    elif where == "dict_value":
        value = {"model": _Extra(), "_sa": [1]}
    elif where == "nested_dict":
        value = _Extra.model_validate({"meta": {"k": {"_sa_x": 1, "y": 2}}})
    else:
        value = _Extra(name="_sa not a key")
    body = dumps(value)
    assert len(body) < 700
    assert body == fastapi_untyped(value)
    fastapi, ours = serve_both(value)
    assert (ours.status_code, ours.content) == (fastapi.status_code, fastapi.content)


# --- keys that are not str ---------------------------------------------------------------------


def test_non_str_keys_are_written_as_json_dumps_writes_them() -> None:
    value = {1: "a", 1.5e-7: "b", False: "c", None: "d", 2**70: "e"}
    assert json.loads(dumps(value)) == json.loads(json.dumps(jsonable_encoder(value)))


@pytest.mark.parametrize("key", [2**64, 2**100, -(2**63) - 1])
def test_integer_keys_beyond_64_bits_are_written_exactly(key: int) -> None:
    value = {key: "v"}
    expected = fastapi_untyped(value)
    assert expected == b'{"%d":"v"}' % key
    assert dumps(value) == expected
    fastapi, ours = serve_both(value)
    assert (ours.status_code, ours.content) == (fastapi.status_code, fastapi.content)
    assert (fastapi.status_code, fastapi.content) == (200, expected)


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
    fastapi, ours = serve_both(value)
    assert (ours.status_code, json_pairs(ours.content)) == (
        fastapi.status_code,
        json_pairs(fastapi.content),
    )


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
