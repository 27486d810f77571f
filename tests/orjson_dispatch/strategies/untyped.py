"""Arbitrary values for FastAPI's untyped path (``jsonable_encoder``).

Nested lists, tuples, deques, sets, dicts (with str, str-subclass, enum and non-str keys), mapping
proxies, dicts and sequences whose iteration hides or reorders what they store, dataclasses,
plain objects and models (a fixed one and classes created per draw, with fields assigned without
validation) around the leaves of ``leaves.py``; now and then all of it nested 250 to 900 levels
deep.
"""

from __future__ import annotations

import enum
import math
import types
from collections import deque
from typing import Any, Literal

import numpy as np
import pytest
from hypothesis import assume
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic.alias_generators import to_camel

from tests.orjson_dispatch.strategies.hostile import (
    HidingDict,
    RenamingDict,
    ReversedList,
    ReversedTuple,
)
from tests.orjson_dispatch.strategies.leaves import (
    STR_SUBCLASS_KEYS,
    Attrs,
    Leaf,
    Point,
    any_floats,
    big_ints,
    dates,
    datetimes,
    leaves,
    non_str_enum_members,
    numpy_values,
    texts,
    uuids,
    walk_any,
)
from tests.orjson_dispatch.strategies.unvalidated import assign_unvalidated
from tests.orjson_dispatch.versions import BY_NAME_AND_ALIAS, INF_NAN_MODES


class KnownDiscrepancy(enum.Enum):
    """Differences from FastAPI the property tests found that are not fixed yet.

    Each member is pinned by a strict xfail example (``@KnownDiscrepancy.X.xfail``), and the
    strategies here stop drawing its inputs so that the property tests keep finding new
    problems. When a fix lands the strict xfail fails; the member then goes, and every place
    still naming it fails with ``AttributeError`` until it goes too: no entry is disabled by a
    misspelt or forgotten name.
    """

    #: dataclasses.asdict rebuilds a list, tuple or dict subclass from its own iteration
    #: (items()), and FastAPI then walks the rebuilt one; dispatch walks the original once.
    CONTAINER_SUBCLASS_REBUILT_BY_ASDICT = (
        "container subclass rebuilt by dataclasses.asdict: FastAPI's asdict rebuilds a list from "
        "its own iteration (a dict from its items()) and jsonable_encoder walks the rebuilt one"
    )
    #: A model with ser_json_inf_nan="strings" holding NaN or an infinity: "NaN" on orjson's
    #: path, null on the exact path (options, big integers, non-str keys, ...).
    NAN_IN_STRINGS_MODEL_ON_THE_EXACT_PATH = (
        "non-finite float in a 'strings' model on the exact path: orjson's path writes the "
        'model\'s own JSON ("NaN"), the exact path model_dump(mode="json"), which leaves NaN a '
        "float that then becomes null"
    )

    @property
    def xfail(self) -> pytest.MarkDecorator:
        """A strict xfail mark giving this discrepancy as the reason."""
        return pytest.mark.xfail(strict=True, reason=self.value)

    def leave_out(self, shown: bool) -> None:
        """Drop the current draw when it shows this discrepancy (``hypothesis.assume``).

        ``assume()``, not ``.filter()``: a filter's retry events carry the whole strategy's repr.
        """
        assume(not shown)


def _points(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Point]:
    @st.composite
    def build(draw: st.DrawFn) -> Point:
        y = draw(children)
        KnownDiscrepancy.CONTAINER_SUBCLASS_REBUILT_BY_ASDICT.leave_out(
            walk_any(y, lambda v: isinstance(v, _REBUILT_DIFFERENTLY))
        )
        return Point(x=draw(big_ints), y=y)

    return build()


# What dataclasses.asdict rebuilds into something its own iteration shows differently.
_REBUILT_DIFFERENTLY = (ReversedList, ReversedTuple, RenamingDict)


_DYNAMIC_FIELDS: dict[str, Any] = {
    "ratio": float,
    "count": int,
    "label": str,
    "maybe": float | None,
    "floats": list[float],
    "ints": list[int],
    "anything": Any,
}


@st.composite
def dynamic_models(draw: st.DrawFn, children: st.SearchStrategy[Any]) -> BaseModel:
    """An instance of a model class created for this draw (``pydantic.create_model``).

    Every class is named ``Dynamic``: an encoder that kept anything per class name (or per
    ``id()`` of a freed class) would mix them up. Fields may carry aliases, the class an alias
    generator, ``extra="allow"`` and a ``ser_json_inf_nan`` setting; after validation some fields
    are assigned stand-ins without validation (``assign_unvalidated``).
    """
    names = draw(st.lists(st.sampled_from(sorted(_DYNAMIC_FIELDS)), unique=True, max_size=4))
    config = ConfigDict(**BY_NAME_AND_ALIAS)  # type: ignore[typeddict-item]
    if draw(st.booleans()):
        config["alias_generator"] = to_camel
    if draw(st.booleans()):
        config["extra"] = "allow"
    inf_nan: Literal["null", "strings", "constants"] | None = draw(
        st.sampled_from([None, *INF_NAN_MODES])
    )
    if inf_nan is not None:
        config["ser_json_inf_nan"] = inf_nan
    fields: dict[str, Any] = {
        name: (_DYNAMIC_FIELDS[name], Field(alias=name.upper()) if draw(st.booleans()) else ...)
        for name in names
    }
    model: type[BaseModel] = create_model("Dynamic", __config__=config, **fields)
    values = {
        "ratio": any_floats,
        "count": big_ints,
        "label": texts,
        "maybe": st.none() | any_floats,
        "floats": st.lists(any_floats, max_size=3),
        "ints": st.lists(big_ints, max_size=3),
        "anything": children,
    }
    data = {name: draw(values[name]) for name in names}
    if config.get("extra") == "allow":
        data["x_extra"] = draw(children)
    if inf_nan == "strings":
        # Also a NaN a dict subclass hides from items(): pydantic's serializers read it.
        KnownDiscrepancy.NAN_IN_STRINGS_MODEL_ON_THE_EXACT_PATH.leave_out(
            walk_any(data, _non_finite, stored=True)
        )
    return assign_unvalidated(draw, model.model_validate(data))


def _non_finite(value: Any) -> bool:
    """Whether ``value`` is a NaN or an infinity: a float, a numpy float or in a numpy array."""
    if isinstance(value, np.ndarray):
        return value.dtype.kind == "f" and not np.isfinite(value).all()
    return isinstance(value, (float, np.floating)) and not math.isfinite(value)


def deep_values(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``inner`` nested in 250 to 900 lists or one-key dicts (orjson stops at 254 levels)."""

    @st.composite
    def build(draw: st.DrawFn) -> Any:
        value = draw(inner)
        shapes = draw(st.lists(st.booleans(), min_size=1, max_size=3))
        for level in range(draw(st.integers(250, 900))):
            value = [value] if shapes[level % len(shapes)] else {"k": value}
        return value

    return build()


def untyped_values(
    *, numpy: bool = False, max_leaves: int = 12, deep: bool = False
) -> st.SearchStrategy[Any]:
    """Arbitrary values an untyped endpoint may return.

    Args:
        numpy: Also draw numpy scalars and arrays (FastAPI answers 500 for most of them).
        max_leaves: Bound on the size of the generated tree.
        deep: One value in eight is nested 250 to 900 levels deep (``deep_values``).
    """
    base = st.one_of(leaves, numpy_values) if numpy else leaves
    keys = st.one_of(
        texts,
        texts,
        big_ints,
        any_floats,
        st.booleans(),
        st.none(),
        non_str_enum_members,
        uuids,
        dates,
        datetimes,
        # Unhashable-after-encoding keys: FastAPI turns a tuple key into a list and fails.
        st.tuples(st.integers(0, 3)),
    )
    hashables = st.one_of(
        st.none(),
        st.booleans(),
        big_ints,
        any_floats,
        texts,
        non_str_enum_members,
        uuids,
        dates,
    )
    # Keys starting "h" are the ones HidingDict hides.
    hostile_keys = st.one_of(st.sampled_from(["h", "hidden", "a", "k"]), texts)

    def extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.one_of(
            st.lists(children, max_size=4),
            st.lists(children, max_size=3).map(tuple),
            st.lists(children, max_size=3).map(deque),
            st.frozensets(hashables, max_size=3),
            st.sets(hashables, max_size=3),
            st.dictionaries(texts, children, max_size=4),
            st.dictionaries(keys, children, max_size=3),
            # Apart from the other keys, and by index: Hypothesis 6.170 cannot replay a
            # str-subclass value where it once drew a str (FlakyStrategyDefinition).
            st.dictionaries(
                st.integers(0, len(STR_SUBCLASS_KEYS) - 1).map(STR_SUBCLASS_KEYS.__getitem__),
                children,
                max_size=2,
            ),
            st.dictionaries(st.text(max_size=4), children, max_size=3).map(types.MappingProxyType),
            st.dictionaries(hostile_keys, children, max_size=3).map(HidingDict),
            st.dictionaries(hostile_keys, children, max_size=3).map(RenamingDict),
            st.lists(children, max_size=3).map(ReversedList),
            st.lists(children, max_size=3).map(ReversedTuple),
            _points(children),
            st.builds(Attrs, a=children, b=st.text(max_size=3)),
            st.builds(
                lambda name, score, when, tags: Leaf(Name=name, score=score, when=when, tags=tags),
                st.text(max_size=4),
                any_floats,
                st.none() | datetimes,
                st.sets(st.text(max_size=3), max_size=2),
            ),
            dynamic_models(children),
        )

    tree = st.recursive(base, extend, max_leaves=max_leaves)
    if not deep:
        return tree
    return st.one_of(*[tree] * 7, deep_values(st.recursive(base, extend, max_leaves=4)))
