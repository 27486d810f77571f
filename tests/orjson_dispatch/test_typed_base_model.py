"""Fields and routes declared with pydantic's ``BaseModel`` itself, compared with FastAPI.

pydantic writes no field of a value declared ``BaseModel`` (``{}``): its schema has none, and
it is never complete (``BaseModel.model_rebuild()`` raises). Routes declaring it are created
and answer as FastAPI answers, with both entry points.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from orjson_dispatch._encoders import left_to_fastapi, route_serializer
from orjson_dispatch._options import DEFAULTS
from pydantic import BaseModel

from orjson_dispatch import dumps
from tests.orjson_dispatch.apps import BOTH_ENTRY_POINTS, Twin
from tests.orjson_dispatch.compare import assert_same_answer, outcome
from tests.orjson_dispatch.oracles import fastapi_typed


class Detail(BaseModel):
    secret: str = "hidden"
    n: int = 1


class UserInfoResponse(BaseModel):
    info: dict[str, Any] | BaseModel | None = None
    items: list[BaseModel] = []
    by_name: dict[str, BaseModel] = {}


def _response() -> UserInfoResponse:
    return UserInfoResponse(info=Detail(), items=[Detail()], by_name={"a": Detail()})


CASES = [
    pytest.param(UserInfoResponse, _response, id="fields"),
    pytest.param(BaseModel, Detail, id="response_model=BaseModel"),
    pytest.param(list[BaseModel], lambda: [Detail(), Detail(n=2)], id="list[BaseModel]"),
    pytest.param(dict[str, BaseModel], lambda: {"a": Detail()}, id="dict[str, BaseModel]"),
]


@BOTH_ENTRY_POINTS
@pytest.mark.parametrize(("declared", "make"), CASES)
def test_routes_declaring_base_model_answer_as_fastapi(
    twin: Twin, declared: Any, make: Any
) -> None:
    twin.add("GET", "/info", lambda: make(), response_model=declared)  # noqa: PLW0108
    fastapi, ours = twin.both("GET", "/info")
    assert fastapi.status_code == 200
    assert b"hidden" not in fastapi.content
    assert_same_answer(ours, fastapi)


@pytest.mark.parametrize(("declared", "make"), CASES)
def test_dumps_of_a_type_declaring_base_model_is_fastapis(declared: Any, make: Any) -> None:
    expected = outcome(fastapi_typed, declared, make())
    ours = outcome(dumps, make(), response_model=declared)
    if isinstance(expected, Exception):  # pydantic before 2.8 refuses `TypeAdapter(BaseModel)`
        assert type(ours) is type(expected)
    else:
        assert ours == expected


class _Field:
    """Stands in for FastAPI's response field of a type no encoder can be built for."""

    class field_info:
        annotation = "not a type"

    calls = 0

    def serialize_json(self, value: Any, **options: Any) -> bytes:
        self.calls += 1
        return b'"by FastAPI"'


def test_a_type_without_an_encoder_is_written_by_fastapis_serializer(
    caplog: pytest.LogCaptureFixture,
) -> None:
    field = _Field()
    serialize = route_serializer(field, DEFAULTS)  # nothing built yet: no error at creation
    with caplog.at_level(logging.DEBUG, logger="orjson_dispatch"):
        assert serialize(1) == serialize(2) == b'"by FastAPI"'
    assert field.calls == 2
    reason = left_to_fastapi(field, DEFAULTS)
    assert reason is not None
    assert "no encoder could be built" in reason
    said = [record for record in caplog.records if "not a type" in record.getMessage()]
    assert len(said) == 1  # once, at the first value
