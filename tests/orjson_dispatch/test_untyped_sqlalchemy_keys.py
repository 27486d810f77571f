"""SQLAlchemy's ``_sa`` keys in a returned model, dropped where FastAPI's untyped path drops them.

``jsonable_encoder`` drops every dict key beginning with ``_sa``, in a model's ``model_dump``
too. Every body the untyped path writes is searched once for such a key; each place one can
be (extras, ``dict`` and ``Any`` values, what pydantic converts, an alias, a dict where a model
is declared) is compared with FastAPI, and the search with the plain substring test.
"""

from __future__ import annotations

from typing import Annotated, Any

import pydantic
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from orjson_dispatch._sqlalchemy import may_hold_sqlalchemy_key
from pydantic import BaseModel, Field, PlainSerializer, computed_field

from orjson_dispatch import _untyped, dumps
from tests.orjson_dispatch.apps import serve_both
from tests.orjson_dispatch.oracles import fastapi_untyped


class Open(BaseModel):
    model_config = pydantic.ConfigDict(extra="allow")
    name: str = "x"


class Free(BaseModel):
    meta: dict[str, Any] = {}
    anything: Any = None
    rows: list[dict[str, int]] = []
    inner: Open = Open()


class Converted(BaseModel):
    value: Annotated[int, PlainSerializer(lambda v: {"_sa_state": v, "v": v})] = 1


class Aliased(BaseModel):
    state: int = Field(1, serialization_alias="_sa_state")
    kept: int = 2


class Computes(BaseModel):
    @computed_field  # type: ignore[prop-decorator]
    @property
    def info(self) -> dict[str, int]:
        return {"_sa_x": 1, "y": 2}


CASES: dict[str, Any] = {
    "extras": lambda: Open.model_validate({"_sa_instance_state": 1, "other": {"_sa": 2}}),
    "dict field": lambda: Free(meta={"_sa_instance_state": 1, "k": 2}),
    "nested in a dict field": lambda: Free(meta={"k": [{"_sa_x": 1, "y": 2}]}),
    "Any field": lambda: Free(anything={"_sa": 1, "k": 2}),
    "list of dicts field": lambda: Free(rows=[{"a": 1, "_sa_b": 2}]),
    "extras of a nested model": lambda: Free(inner=Open.model_validate({"_sa": 1})),
    "model at an Any position": lambda: Free(anything=Open.model_validate({"_sa": 1})),
    "a serializer's dict": Converted,
    "an alias": Aliased,
    "a computed field's dict": Computes,
    "a string value is kept": lambda: Free(meta={"k": "_sa not a key"}, anything="_sample"),
}


@pytest.mark.parametrize("name", CASES)
def test_sqlalchemy_keys_in_models_are_dropped_as_fastapi_drops_them(name: str) -> None:
    value = CASES[name]()
    expected = fastapi_untyped(value)
    assert dumps(value) == expected
    assert (b'"_sa' in expected) is (name == "a string value is kept")
    fastapi, ours = serve_both(CASES[name]())
    assert (ours.status_code, ours.content) == (fastapi.status_code, fastapi.content)


class Inner(BaseModel):
    k: int = 0


class Outer(BaseModel):
    inner: Inner = Inner()


@pytest.mark.filterwarnings("ignore::UserWarning")  # pydantic warns of the dict
def test_a_dict_where_a_model_is_declared_has_its_sqlalchemy_keys_dropped() -> None:
    """``model_construct`` leaves a dict where a model is declared: orjson writes it as it is,
    so the model's body is searched too, and the key dropped as FastAPI drops it."""
    value = Outer.model_construct(inner={"_sa_instance_state": "state", "k": 1})
    expected = fastapi_untyped(value)
    assert b"_sa" not in expected
    assert dumps(value) == expected


def test_a_body_without_such_a_key_is_searched_once(monkeypatch: pytest.MonkeyPatch) -> None:
    searched: list[bytes] = []
    search = may_hold_sqlalchemy_key

    def searching(body: bytes) -> bool:
        searched.append(body)
        return search(body)

    monkeypatch.setattr(_untyped, "may_hold_sqlalchemy_key", searching)
    assert dumps(Free(meta={"k": 1})) == fastapi_untyped(Free(meta={"k": 1}))
    assert searched == [fastapi_untyped(Free(meta={"k": 1}))]
    dumps({"plain": {"k": 1}})
    assert searched[1:] == [b'{"plain":{"k":1}}']


# Pieces of JSON text dense and sparse in underscores, quotes and the letters of `_sa`.
_PIECES = [b"1234567,", b'"token_id":1,', b'"x":"_s",', b"_", b'"', b"sa", b'"_s', b"a_sa"]


# A large body without underscores, and one whose only underscore is a key's, near its end.
@example(pieces=[b"1234567,"], repeat=30_000, key_at=None)
@example(pieces=[b"1234567,"], repeat=30_000, key_at=0.99)
@given(
    pieces=st.lists(st.sampled_from(_PIECES), min_size=1, max_size=6),
    repeat=st.sampled_from([1, 40, 30_000]),  # up to 2 MB: the walk of large bodies too
    key_at=st.none() | st.floats(0, 1),
)
def test_the_search_finds_every_key_beginning_with_sa(
    pieces: list[bytes], repeat: int, key_at: float | None
) -> None:
    body = b"".join(pieces) * repeat
    if key_at is not None:
        cut = int(len(body) * key_at)
        body = body[:cut] + b'"_sa_instance_state":1,' + body[cut:]
    assert may_hold_sqlalchemy_key(body) == (b'"_sa' in body)
