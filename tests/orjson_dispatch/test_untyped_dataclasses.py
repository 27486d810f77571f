"""Dataclasses are encoded as FastAPI encodes them, field by field, without the deep copy.

FastAPI encodes a dataclass through ``dataclasses.asdict``, which deep-copies every field: sets
come out in the order of the copy (which can differ from the original's), and a field
``copy.deepcopy`` cannot copy fails (500). ``dispatch`` walks the dataclass once without copying
(a deliberate difference where FastAPI fails) and still writes sets in the copy's order.
"""

from __future__ import annotations

import types
from typing import Any

import pytest
from pydantic import BaseModel

from orjson_dispatch import dumps
from tests.orjson_dispatch.compare import json_pairs
from tests.orjson_dispatch.oracles import fastapi_untyped
from tests.orjson_dispatch.strategies.hostile import RenamingDict, ReversedList
from tests.orjson_dispatch.strategies.leaves import Attrs, Point
from tests.orjson_dispatch.strategies.untyped import KnownDiscrepancy

# --- sets keep the order of FastAPI's copy -------------------------------------------------------


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
    for value in (
        Point(x=0, y=Attrs(a=frozenset([0, 3, 11]), b="")),
        Point(x=0, y=types.SimpleNamespace(s={0, 3, 11})),
    ):
        assert dumps(value) == fastapi_untyped(value)


# --- no deep copy: a deliberate difference -------------------------------------------------------


def test_dataclass_holding_what_asdict_cannot_copy_is_encoded_field_by_field() -> None:
    """Deliberate difference: FastAPI's ``dataclasses.asdict`` deep-copies and fails (500)."""
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
    value = Point(x=x, y=types.MappingProxyType({"a": 1}))
    expected = fastapi_untyped({"x": x, "y": {"a": 1}, "label": "p"})
    assert dumps(value, **options) == expected


# --- known discrepancy (strict xfail; the strategies leave its inputs out) -----------------------


@KnownDiscrepancy.CONTAINER_SUBCLASS_REBUILT_BY_ASDICT.xfail
@pytest.mark.parametrize(
    ("held", "fastapi"),
    [(ReversedList([1, 2]), [1, 2]), (RenamingDict(h=None), [])],  # as json_pairs parses
    ids=["list-overriding-iter", "dict-renaming-in-items"],
)
def test_container_subclass_inside_a_dataclass(held: Any, fastapi: Any) -> None:
    value = Point(x=0, y=held)
    assert json_pairs(fastapi_untyped(value))[1] == ("y", fastapi)
    assert dumps(value) == fastapi_untyped(value)
