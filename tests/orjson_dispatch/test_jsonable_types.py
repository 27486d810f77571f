"""Every type of FastAPI's ``jsonable_encoder`` table, and the standard library's containers,
views and abstract collections, are encoded as FastAPI encodes them or refused as FastAPI refuses
them: the same JSON, or an exception of the same type."""

from __future__ import annotations

import array
import collections
import datetime as dt
import enum
import ipaddress
import re
import types
import uuid
from collections.abc import Iterator, KeysView, Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any, NamedTuple

from fastapi.encoders import ENCODERS_BY_TYPE
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import AnyUrl, NameEmail, SecretBytes, SecretStr
from pydantic_core import Url

from orjson_dispatch import dumps
from tests.orjson_dispatch.compare import outcome, same_json
from tests.orjson_dispatch.oracles import fastapi_untyped
from tests.orjson_dispatch.strategies import examples


class Color(enum.Enum):
    RED = "red"
    ONE = 1


class Pair(NamedTuple):
    left: int
    right: str


class Keys(Mapping[str, int]):
    """A mapping that is not a dict: its views are abstract collections."""

    def __init__(self, data: dict[str, int]) -> None:
        self._data = data

    def __getitem__(self, key: str) -> int:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)


class Items(list[int]):
    """Stands for a generator of these items until ``made`` makes it (it can be read once)."""


_text = st.text(max_size=6)
_ints = st.lists(st.integers(-5, 5), max_size=3)
_pairs = st.dictionaries(_text, st.integers(-5, 5), max_size=3)
# An example of every type in FastAPI's table (the test below checks that none is missing).
_TABLE: dict[type[Any], st.SearchStrategy[Any]] = {
    bytes: st.binary(max_size=6),
    dt.date: st.dates(),
    dt.datetime: st.datetimes(timezones=st.none() | st.timezones()),
    dt.time: st.times(),
    dt.timedelta: st.timedeltas(),
    Decimal: st.decimals(allow_nan=False, allow_infinity=False, places=3),
    enum.Enum: st.sampled_from(Color),
    frozenset: st.frozensets(st.integers(-5, 5), max_size=3),
    collections.deque: _ints.map(collections.deque),
    types.GeneratorType: _ints.map(Items),
    ipaddress.IPv4Address: st.ip_addresses(v=4),
    ipaddress.IPv4Interface: st.ip_addresses(v=4).map(ipaddress.IPv4Interface),
    ipaddress.IPv4Network: st.just(ipaddress.IPv4Network("192.0.2.0/24")),
    ipaddress.IPv6Address: st.ip_addresses(v=6),
    ipaddress.IPv6Interface: st.ip_addresses(v=6).map(ipaddress.IPv6Interface),
    ipaddress.IPv6Network: st.just(ipaddress.IPv6Network("2001:db8::/32")),
    NameEmail: st.just(NameEmail("Ann", "ann@example.com")),
    Path: _text.map(Path),
    re.Pattern: st.sampled_from(["a+", "[0-9]{2}"]).map(re.compile),
    SecretBytes: st.binary(max_size=4).map(SecretBytes),
    SecretStr: _text.map(SecretStr),
    set: st.sets(st.integers(-5, 5), max_size=3),
    uuid.UUID: st.uuids(),
    Url: st.just(Url("https://example.com/a?b=1")),
    AnyUrl: st.just(AnyUrl("https://example.com/")),
}
# The standard library's containers, views and abstract collections outside the table.
_CONTAINERS: list[st.SearchStrategy[Any]] = [
    _pairs.map(lambda d: d.keys()),
    _pairs.map(lambda d: d.values()),
    _pairs.map(lambda d: d.items()),
    st.dictionaries(st.tuples(_text, st.integers()), st.integers(), max_size=2).map(
        lambda d: d.keys()  # keys that are pairs: dict() of the view works
    ),
    _pairs.map(collections.OrderedDict),
    _pairs.map(lambda d: collections.defaultdict(int, d)),
    _pairs.map(collections.Counter),
    _pairs.map(collections.ChainMap),
    _pairs.map(collections.UserDict),
    _ints.map(collections.UserList),
    _text.map(collections.UserString),
    _pairs.map(types.MappingProxyType),
    _pairs.map(lambda d: KeysView(Keys(d))),
    _pairs.map(Keys),
    _ints.map(lambda items: range(len(items))),
    _ints.map(lambda items: array.array("i", items)),
    st.binary(max_size=4).map(bytearray),
    st.binary(max_size=4).map(memoryview),
    st.tuples(st.integers(), _text).map(lambda t: Pair(*t)),
    _ints.map(tuple),
    st.just(types.SimpleNamespace(a=1, b="x")),
    st.just(object()),
]
_VALUES = st.one_of(*_TABLE.values(), *_CONTAINERS)


def made(value: Any) -> Any:
    """``value`` with a fresh generator for each ``Items``: each encoder reads its own."""
    if type(value) is Items:
        return (item for item in value)
    if type(value) is list:
        return [made(item) for item in value]
    if type(value) is dict:
        return {key: made(item) for key, item in value.items()}
    return value


def test_every_type_of_fastapis_table_is_drawn() -> None:
    # The colour types: pydantic's is deprecated, pydantic-extra-types' is not installed here.
    colours = {"Color", "PyExtraColor"}
    assert {cls for cls in ENCODERS_BY_TYPE if cls.__name__ not in colours} == set(_TABLE)


@settings(max_examples=examples(400))
@given(value=_VALUES | st.lists(_VALUES, max_size=3) | st.dictionaries(_text, _VALUES, max_size=3))
def test_value_is_encoded_or_refused_as_fastapi_does(value: Any) -> None:
    expected = outcome(fastapi_untyped, made(value))
    ours = outcome(dumps, made(value))
    if isinstance(expected, Exception):
        assert type(ours) is type(expected), (ours, expected)
    else:
        assert isinstance(ours, bytes), ours
        assert same_json(ours, expected)
