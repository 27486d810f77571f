"""Models returned without a declared type are written as ``jsonable_encoder`` writes them.

``jsonable_encoder`` calls the model's own ``model_dump(mode="json", ...)``: a class overriding it
(to leave out a secret) is honoured, in a returned model, a model inside a dict and an untyped
stream item. It raises for a ``pydantic.v1`` model (FastAPI 0.128+), and reads its table of
encoders for UUIDs, which an app may change.
"""

from __future__ import annotations

import uuid
import warnings
from typing import Any

import orjson
import pytest
from fastapi import encoders
from fastapi.encoders import jsonable_encoder
from pydantic import BaseModel

from orjson_dispatch import DispatchRoute, dumps
from tests.orjson_dispatch.apps import Twin
from tests.orjson_dispatch.compare import assert_same_answer
from tests.orjson_dispatch.oracles import fastapi_typed, fastapi_untyped

ROUTE_CLASSES = [None, DispatchRoute]


class Account(BaseModel):
    """A model whose own `model_dump` leaves the password out, as applications write it."""

    user: str
    password: str

    def model_dump(self, **kwargs: Any) -> dict[str, Any]:
        kwargs["exclude"] = {*(kwargs.get("exclude") or ()), "password"}
        return super().model_dump(**kwargs)


class Renamed(BaseModel):
    """A model whose `model_dump` returns something else than its fields, not JSON-ready."""

    n: int

    def model_dump(self, **kwargs: Any) -> dict[str, Any]:
        return {"n": self.n, "at": uuid.UUID(int=self.n), "_sa_state": 1, "kwargs": sorted(kwargs)}


ACCOUNT = Account(user="ada", password="s3cret")
VALUES = [
    ACCOUNT,
    {"account": ACCOUNT, "n": [1, 2]},
    [ACCOUNT, Renamed(n=3)],
    {"nested": {1: Renamed(n=2**70)}},  # the exact path: a non-str key, a big integer
]


@pytest.mark.parametrize("value", VALUES)
def test_dumps_calls_the_models_own_model_dump(value: Any) -> None:
    expected = fastapi_untyped(value)
    assert b"s3cret" not in expected
    assert dumps(value) == expected


def test_dumps_calls_the_own_model_dump_with_the_settings() -> None:
    for options in ({"exclude_none": True}, {"include": {"user"}}, {"by_alias": False}):
        assert dumps(ACCOUNT, **options) == fastapi_untyped(ACCOUNT, **options)


class Tagged(BaseModel):
    name: str | None = None
    tags: dict[str, Any] = {}


@pytest.mark.parametrize(
    "value",
    [
        Tagged(tags={"a": None, "b": 1}),
        Tagged(tags={"_sa_instance_state": 1, "b": [None]}),
        Tagged(name="x", tags={"n": 2**70, "c": None}),  # orjson refuses the integer
    ],
)
def test_exclude_none_leaves_out_the_none_items_of_the_dumped_dicts(value: Tagged) -> None:
    """pydantic leaves out the None fields, ``jsonable_encoder`` then every None dict item."""
    expected = fastapi_untyped(value, exclude_none=True)
    assert b":null" not in expected
    assert dumps(value, exclude_none=True) == expected


@pytest.mark.parametrize("twin", ROUTE_CLASSES, indirect=True)
@pytest.mark.parametrize("value", VALUES[:3])
def test_untyped_endpoint_sends_what_the_own_model_dump_returns(value: Any, twin: Twin) -> None:
    twin.add("GET", "/a", lambda: value)
    fastapi, ours = twin.both("GET", "/a")
    assert fastapi.status_code == 200
    assert b"s3cret" not in ours.content
    assert_same_answer(ours, fastapi)


@pytest.mark.parametrize("kind", ["jsonl", "sse"])
def test_untyped_stream_items_use_the_own_model_dump(kind: str, route_twin: Twin) -> None:
    pytest.importorskip("fastapi.sse", reason="FastAPI 0.135 streams generator endpoints")
    from tests.orjson_dispatch.streams_harness import KINDS, assert_same_stream, both

    def items():  # type: ignore[no-untyped-def]  # untyped items: jsonable_encoder
        yield ACCOUNT
        yield {"account": ACCOUNT}

    route_twin.add("GET", "/s", items, **KINDS[kind])
    fastapi, ours = both(route_twin, "/s")
    assert fastapi.error is None
    assert ours.error is None
    assert not any(b"s3cret" in chunk for chunk in fastapi.chunks)
    assert_same_stream(ours, fastapi, sse=kind == "sse")


# --- pydantic.v1 ---------------------------------------------------------------------------------


def _v1_model() -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            from pydantic import v1
        except ImportError:
            pytest.skip("this pydantic has no pydantic.v1")

    class Old(v1.BaseModel):
        n: int

    return Old(n=1)


@pytest.mark.skipif(
    not hasattr(encoders, "PydanticV1NotSupportedError"),
    reason="FastAPI 0.128 refuses pydantic.v1 models",
)
@pytest.mark.parametrize("twin", ROUTE_CLASSES, indirect=True)
def test_untyped_pydantic_v1_model_fails_as_under_fastapi(twin: Twin) -> None:
    old = _v1_model()
    refused = encoders.PydanticV1NotSupportedError  # type: ignore[attr-defined]
    with pytest.raises(refused):
        fastapi_untyped({"old": old})
    with pytest.raises(refused):
        dumps({"old": old})
    twin.add("GET", "/v1", lambda: {"old": old})
    fastapi, ours = twin.both("GET", "/v1")
    assert fastapi.status_code == 500
    assert ours.status_code == 500


# --- FastAPI's table of encoders -----------------------------------------------------------------


@pytest.fixture
def uuid_as_hex(monkeypatch: pytest.MonkeyPatch) -> None:
    """An app's own encoder for UUIDs in FastAPI's table (``ENCODERS_BY_TYPE``)."""
    monkeypatch.setitem(encoders.ENCODERS_BY_TYPE, uuid.UUID, lambda value: value.hex)


@pytest.mark.usefixtures("uuid_as_hex")
@pytest.mark.parametrize("twin", ROUTE_CLASSES, indirect=True)
def test_an_apps_uuid_encoder_is_applied(twin: Twin) -> None:
    value = {"id": uuid.UUID(int=7), "ids": [uuid.UUID(int=8)]}
    expected = fastapi_untyped(value)
    assert uuid.UUID(int=7).hex.encode() in expected
    assert dumps(value) == expected
    twin.add("GET", "/u", lambda: value)
    fastapi, ours = twin.both("GET", "/u")
    assert_same_answer(ours, fastapi)


# --- layout options ------------------------------------------------------------------------------


class Pair(BaseModel):
    b: list[int] = [1]
    a: dict[str, int] = {"z": 1, "y": 2}


@pytest.mark.parametrize(
    "option",
    [orjson.OPT_INDENT_2, orjson.OPT_SORT_KEYS, orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS],
    ids=["indent", "sort", "both"],
)
def test_layout_options_lay_out_models_too(option: int) -> None:
    for value in (Pair(), {"pair": Pair(), "n": 1}):
        expected = orjson.dumps(jsonable_encoder(value), option=option)
        assert dumps(value, option=option) == expected


class Labelled(BaseModel):
    label: str


def test_a_returned_model_holding_a_lone_surrogate_is_sent_escaped() -> None:
    # FastAPI fails to encode it (UnicodeEncodeError, a 500); dispatch escapes it, as in dicts.
    assert dumps(Labelled(label="\ud800")) == b'{"label":"\\ud800"}'


class Lookup(BaseModel):
    """A model whose own `__getattr__` raises KeyError, not AttributeError, for a missing name."""

    data: dict[str, int] = {}

    def __getattr__(self, name: str) -> Any:
        return self.data[name]


@pytest.mark.parametrize("typed", [False, True], ids=["untyped", "typed"])
def test_a_model_whose_getattr_raises_for_a_missing_name_is_written(typed: bool) -> None:
    """The encoder's own lookups on a fresh class never reach the class's `__getattr__` error."""
    value = Lookup(data={"a": 1})
    for _ in range(2):  # the first value builds what the class keeps, the second reads it
        if typed:
            assert dumps(value, response_model=Lookup) == b'{"data":{"a":1}}'
        else:
            assert dumps(value) == fastapi_untyped(value)


def _strict() -> type[BaseModel]:
    """A new class whose own ``__getattr__`` raises for every name it does not hold."""

    class Strict(BaseModel):
        x: int = 1

        def __getattr__(self, name: str) -> Any:
            raise RuntimeError(f"no attribute {name}")

    return Strict


@pytest.mark.parametrize("nested", [False, True], ids=["model", "nested"])
def test_a_model_whose_getattr_raises_is_written_as_fastapi_writes_it(nested: bool) -> None:
    """What the package keeps on a class is read through the instance, before it exists too."""
    cls = _strict()
    value = {"held": [cls(x=2)]} if nested else cls()
    assert dumps(value) == fastapi_untyped(value)
    if not nested:
        assert dumps(value, response_model=cls) == fastapi_typed(cls, value)
