"""Leaf values and the sample classes the generated values are built from.

Leaves are what no container holds inside: numbers of every size, text with awkward characters,
temporal types with odd UTC offsets, UUID, Decimal, bytes, paths, IP addresses, secrets, enum
members (also of ``hostile``'s enums whose value is not their content or not writable by
``json.dumps``) and numpy scalars/arrays. The sample classes (``Point``, ``Attrs``, ``Leaf``, the
enums, ``Tag``) are the kinds of objects FastAPI's encoder treats each in its own way.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import ipaddress
import math
import pathlib
import string
import types
from collections import deque
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import numpy as np
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field, SecretStr

from tests.orjson_dispatch.strategies.hostile import DISGUISED_ENUMS, UNWRITABLE_ENUMS, Letter
from tests.orjson_dispatch.versions import BY_NAME_AND_ALIAS

#: Integers of every size: 64-bit edges and integers far beyond 64 bits (JSON has no limit, and
#: FastAPI's ``json.dumps`` and pydantic both write them exactly).
big_ints = st.one_of(
    st.integers(min_value=-(2**63), max_value=2**64),
    st.sampled_from([2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63), -(2**63) - 1]),
    st.integers(min_value=2**64, max_value=2**200),
    st.integers(min_value=-(2**200), max_value=-(2**63) - 1),
)
finite_floats = st.floats(allow_nan=False, allow_infinity=False)
any_floats = st.one_of(
    finite_floats, st.sampled_from([math.nan, math.inf, -math.inf, -0.0, 1e-7, 1e16, 5e-324])
)
#: Mostly ordinary text; sometimes keys FastAPI's encoder treats specially (``_sa`` prefix) and
#: rarely a lone surrogate, which no JSON encoder can write as UTF-8.
texts = st.one_of(
    st.text(max_size=8),
    st.sampled_from(["", "_sa_instance_state", "_sa", "é\u2028\x00", "\U0001f600", '"\\/']),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=4).map(lambda s: s + "\ud800"),
)


def _fixed_offsets() -> st.SearchStrategy[dt.tzinfo | None]:
    # Offsets with seconds (allowed by Python since 3.7) are deliberate: encoders that format
    # offsets themselves tend to drop them.
    return st.one_of(
        st.none(),
        st.just(dt.timezone.utc),
        st.integers(min_value=-23 * 3600 - 59 * 60, max_value=23 * 3600 + 59 * 60).map(
            lambda s: dt.timezone(dt.timedelta(seconds=s))
        ),
        st.sampled_from([-840, -330, 0, 60, 330, 345, 840]).map(
            lambda m: dt.timezone(dt.timedelta(minutes=m))
        ),
    )


datetimes = st.builds(
    lambda d, tz: d.replace(tzinfo=tz),
    st.datetimes(min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(9999, 12, 31)),
    _fixed_offsets(),
)
dates = st.dates()
times = st.builds(lambda t, tz: t.replace(tzinfo=tz), st.times(), _fixed_offsets())
timedeltas = st.timedeltas(
    min_value=dt.timedelta(days=-(10**6)), max_value=dt.timedelta(days=10**6)
)
uuids = st.uuids()
finite_decimals = st.decimals(allow_nan=False, allow_infinity=False, places=None).filter(
    lambda d: abs(d.adjusted()) < 30
)
any_decimals = st.one_of(
    finite_decimals,
    st.sampled_from([Decimal("1E+2"), Decimal("-0"), Decimal("0.000"), Decimal("NaN")]),
    st.sampled_from([Decimal("Infinity"), Decimal("-Infinity"), Decimal("sNaN")]),
)


def _is_utf8(b: bytes) -> bool:
    try:
        b.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


utf8_bytes = st.text(max_size=8).map(lambda s: s.encode("utf-8"))
#: Mostly UTF-8 (FastAPI decodes bytes as UTF-8); rarely invalid UTF-8, which FastAPI cannot send.
any_bytes = st.one_of(
    utf8_bytes, utf8_bytes, st.binary(min_size=1, max_size=4).filter(lambda b: not _is_utf8(b))
)


paths = st.builds(
    lambda parts, absolute: pathlib.PurePosixPath("/" if absolute else ".", *parts),
    st.lists(st.text(alphabet=string.ascii_letters + "._-", min_size=1, max_size=5), max_size=3),
    st.booleans(),
).map(lambda p: pathlib.Path(str(p)))
ip_values = st.one_of(
    st.ip_addresses(v=4),
    st.ip_addresses(v=6),
    st.ip_addresses(v=4).map(lambda a: ipaddress.IPv4Network(f"{a}/32")),
    st.ip_addresses(v=6).map(lambda a: ipaddress.IPv6Interface(f"{a}/64")),
)
secrets = st.text(max_size=6).map(SecretStr)


class Color(enum.Enum):
    """A plain enum with str values."""

    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    """An int enum (also an int)."""

    LOW = 1
    HIGH = 2


class Mixed(enum.Enum):
    """An enum whose values are not all of one JSON type."""

    NONE = None
    FLOAT = 1.5
    TEXT = "t"


class Kind(str, enum.Enum):
    """A str-mixin enum (a str subclass)."""

    A = "a"
    B = "b"


class Tag(str):
    """A str subclass (as str-mixin enums and many libraries' string types are)."""


_TAGS = [Tag(""), Tag("t"), Tag("_sa_tag"), Tag("é")]

ENUMS: tuple[type[enum.Enum], ...] = (
    Color,
    Level,
    Mixed,
    Kind,
    *DISGUISED_ENUMS,
    *UNWRITABLE_ENUMS,
)


def enum_members(*, str_members: bool = True) -> st.SearchStrategy[Any]:
    """Members of ``ENUMS``, optionally without the str enums' members."""
    members = [m for e in ENUMS for m in e if str_members or not isinstance(m, str)]
    # Drawn by index and mapped: Hypothesis 6.170 cannot replay a str-subclass member drawn by
    # sampled_from while shrinking (FlakyStrategyDefinition: KeyError <enum 'Kind'>).
    return st.integers(0, len(members) - 1).map(members.__getitem__)


non_str_enum_members = enum_members(str_members=False)
#: Dict keys that are str subclasses, drawn in dicts of their own (see ``untyped_values``).
STR_SUBCLASS_KEYS: list[str] = [*_TAGS, *Kind, *Letter]


@dataclasses.dataclass
class Point:
    """A dataclass, encoded by FastAPI through ``dataclasses.asdict``."""

    x: int
    y: Any
    label: str = "p"


class Attrs:
    """A plain object: FastAPI's encoder falls back to ``vars(obj)``."""

    def __init__(self, a: Any, b: Any) -> None:
        self.a = a
        self.b = b

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Attrs) and (self.a, self.b) == (other.a, other.b)

    __hash__ = None  # type: ignore[assignment]


class Leaf(BaseModel):
    """A small fixed model with an alias, for values nested in untyped data."""

    model_config = ConfigDict(**BY_NAME_AND_ALIAS)  # type: ignore[typeddict-item]

    name: str = Field(alias="Name")
    score: float = 0.0
    when: dt.datetime | None = None
    tags: set[str] = Field(default_factory=set)
    secret: SecretStr | None = Field(default=None, exclude=True)


_leaves_but_enums: st.SearchStrategy[Any] = st.one_of(
    st.none(),
    st.booleans(),
    big_ints,
    any_floats,
    texts,
    datetimes,
    dates,
    times,
    timedeltas,
    uuids,
    any_decimals,
    any_bytes,
    paths,
    ip_values,
    secrets,
)


leaves = st.one_of(_leaves_but_enums, enum_members())

#: Leaves that are always valid JSON data for FastAPI's untyped path (used for extra fields).
json_leaves: st.SearchStrategy[Any] = st.one_of(
    st.none(), st.booleans(), big_ints, finite_floats, st.text(max_size=8)
)

numpy_values: st.SearchStrategy[Any] = st.one_of(
    st.integers(min_value=-(2**63), max_value=2**63 - 1).map(np.int64),
    st.integers(min_value=0, max_value=255).map(np.uint8),
    st.floats(width=32).map(np.float32),
    any_floats.map(np.float64),
    st.booleans().map(np.bool_),
    st.lists(st.integers(min_value=-(2**31), max_value=2**31), max_size=5).map(
        lambda xs: np.array(xs, dtype=np.int64)
    ),
    st.lists(any_floats, max_size=5).map(lambda xs: np.array(xs, dtype=np.float64)),
    st.lists(st.lists(st.integers(-9, 9), min_size=3, max_size=3), min_size=1, max_size=3).map(
        lambda xs: np.array(xs, dtype=np.int32)
    ),
)


def walk_any(value: Any, predicate: Callable[[Any], bool], *, stored: bool = False) -> bool:
    """Whether ``predicate`` holds for ``value`` or anything inside it (keys included).

    Dicts are walked through ``items()`` and sequences through ``iter()``, as FastAPI's
    ``jsonable_encoder`` walks them; with ``stored``, a dict, list or tuple subclass also
    through what it stores, which pydantic's serializer reads whatever the subclass shows
    (``hostile.HidingDict``). Iteratively, as values nest deeper than Python's recursion
    limit allows a recursive walk.
    """
    stack = [value]
    while stack:
        item = stack.pop()
        if predicate(item):
            return True
        if isinstance(item, (dict, types.MappingProxyType)):
            stack.extend(part for pair in item.items() for part in pair)
            if stored and isinstance(item, dict) and type(item) is not dict:
                stack.extend(part for pair in dict.items(item) for part in pair)
        elif isinstance(item, (list, tuple, set, frozenset, deque)):
            stack.extend(item)
            if stored and isinstance(item, list) and type(item) is not list:
                stack.extend(list.__iter__(item))
            elif stored and isinstance(item, tuple) and type(item) is not tuple:
                stack.extend(tuple.__iter__(item))
        elif isinstance(item, BaseModel):
            # iter(): `dict(model)` calls a field named `keys` (the mapping protocol).
            stack.extend([dict(iter(item)), item.__pydantic_extra__ or {}])
        elif (dataclasses.is_dataclass(item) and not isinstance(item, type)) or isinstance(
            item, Attrs
        ):
            stack.append(vars(item))
    return False


def contains_numpy(value: Any) -> bool:
    """Whether a numpy scalar or array occurs anywhere in ``value`` (keys included), also where
    a container's own iteration hides it (``walk_any(stored=True)``)."""
    return walk_any(value, lambda v: isinstance(v, (np.generic, np.ndarray)), stored=True)
