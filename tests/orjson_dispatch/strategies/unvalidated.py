"""Model fields assigned without validation after construction.

pydantic validates assignments only under ``validate_assignment=True``; otherwise
``model.score = 0`` stores the int in a ``float`` field as it is, and pydantic's serializer then
converts what its declared type allows: the int in a ``float`` field is written ``0.0``, a bool in
an ``int`` field ``1``, a str subclass or str enum in a ``str`` field its characters.
``assign_unvalidated`` draws such assignments for any model instance; ``holds_unvalidated`` tells
the oracle where ``dispatch`` writes such a value as held, as the contract's second tier allows
(``HELD_STRINGS``: what a held str subclass is written as, its value, beside its characters).
"""

from __future__ import annotations

import types
import typing
from typing import Any, Union

from hypothesis import strategies as st
from pydantic import BaseModel

from tests.orjson_dispatch.strategies.hostile import Letter
from tests.orjson_dispatch.strategies.leaves import Kind, Tag, walk_any

_STR_STANDINS: list[str] = [Tag("t"), Tag(""), *Kind, *Letter]
#: Each str stand-in as written held (an enum by its value, as orjson's callback infers it) and
#: as pydantic's ``str`` serializer writes it (its characters).
HELD_STRINGS = frozenset(
    (s.value if isinstance(s, (Kind, Letter)) else str.__str__(s), str.__str__(s))
    for s in _STR_STANDINS
)
# By index: Hypothesis 6.170 cannot replay a str-subclass value drawn by sampled_from.
_str_standins = st.integers(0, len(_STR_STANDINS) - 1).map(_STR_STANDINS.__getitem__)
_ints = st.one_of(st.integers(-(2**53), 2**53), st.integers(2**64, 2**200))

#: For a declared field type, what may be assigned to it without validation that pydantic's
#: serializer converts without a warning.
_STANDINS: dict[Any, st.SearchStrategy[Any]] = {
    float: st.one_of(_ints, st.booleans()),
    int: st.booleans(),
    str: _str_standins,
    # Containers: written as held too (the contract's second tier, see oracles.held_as_written).
    list[float]: st.lists(st.one_of(st.integers(-9, 9), st.booleans()), min_size=1, max_size=3),
    list[int]: st.lists(st.booleans(), min_size=1, max_size=3),
}


def _declared(annotation: Any) -> Any:
    """``annotation`` without ``Optional``/``| None``, ``typing.List[X]`` as ``list[X]`` (the
    SDKs' spelling, which does not compare equal to the builtin's)."""
    if typing.get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            annotation = args[0]
    if typing.get_origin(annotation) is list:
        return list[typing.get_args(annotation)]  # type: ignore[misc]
    return annotation


def assign_unvalidated(draw: st.DrawFn, instance: BaseModel) -> BaseModel:
    """Assign (without validation) stand-ins to some of ``instance``'s fields; return it."""
    for name, info in type(instance).model_fields.items():
        standins = _STANDINS.get(_declared(info.annotation))
        if standins is not None and draw(st.integers(0, 2)) == 0:
            setattr(instance, name, draw(standins))
    return instance


def _holds_unvalidated_values(value: Any) -> bool:
    if not isinstance(value, BaseModel):
        return False
    for name, info in type(value).model_fields.items():
        held = getattr(value, name, None)
        declared = _declared(info.annotation)
        items = held if isinstance(held, list) else [held]
        if declared in (float, list[float]) and any(type(i) in (int, bool) for i in items):
            return True
        if declared in (int, list[int]) and any(type(i) is bool for i in items):
            return True
        if declared is str and type(held) is not str and isinstance(held, str):
            return True
    return False


def holds_unvalidated(value: Any) -> bool:
    """Whether a model inside ``value`` holds a stand-in that ``assign_unvalidated`` assigns."""
    return walk_any(value, _holds_unvalidated_values)
