"""Untyped values: the fast path and the exact path agree with jsonable_encoder."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.encoders import jsonable_encoder

from orjson_dispatch import dumps


def snake_case_body(keys: int) -> dict[str, Any]:
    # The SQLAlchemy-key scan walks from underscore to underscore for a budget that grows with
    # the body's size, then searches the rest: few keys around a long array of numbers end
    # within the walk, many keys (200, 5000) go past it.
    return {"token_ids": list(range(20_000)), **{f"field_{i}_name": i for i in range(keys)}}


@pytest.mark.parametrize("keys", [0, 10, 200, 5000])
@pytest.mark.parametrize("where", ["first", "last", "nested"])
def test_sqlalchemy_keys_are_dropped_wherever_they_are(keys: int, where: str) -> None:
    value: dict[str, Any] = snake_case_body(keys)
    if where == "first":
        value = {"_sa_instance_state": None, **value}
    elif where == "last":
        value["_sa_instance_state"] = None
    else:
        value["nested"] = [{"inner_key": 1, "_sa_x": 2}]
    body = dumps(value)
    assert b"_sa" not in body
    assert json.loads(body) == jsonable_encoder(value)


@pytest.mark.parametrize("keys", [0, 200, 5000])
def test_a_string_that_begins_with_sa_is_kept(keys: int) -> None:
    value = {**snake_case_body(keys), "note": "_sample text", "_sample": 1}
    assert (
        json.loads(dumps(value))
        == jsonable_encoder(value)
        == {
            **snake_case_body(keys),
            "note": "_sample text",
        }
    )


def test_non_str_keys_are_written_as_json_dumps_writes_them() -> None:
    value = {1: "a", 1.5e-7: "b", False: "c", None: "d", 2**70: "e"}
    assert json.loads(dumps(value)) == json.loads(json.dumps(jsonable_encoder(value)))


def test_numpy_values_encode_alike_on_both_paths() -> None:
    numpy = pytest.importorskip("numpy")
    values = {"empty": numpy.array([], dtype=numpy.int64), "grid": numpy.arange(4).reshape(2, 2)}
    expected = {"empty": [], "grid": [[0, 1], [2, 3]]}
    assert json.loads(dumps(values)) == expected
    # A non-str key sends the whole value down the exact path.
    assert json.loads(dumps({**values, 0: None})) == {**expected, "0": None}
