"""What cannot be answered answers 500, as under FastAPI (the filtering cases are in
``parity_cases.py``)."""

from typing import Any

import pytest
from fastapi.exceptions import ResponseValidationError

from tests.orjson_dispatch.apps import Ask, Twin, make_endpoint
from tests.orjson_dispatch.samples import Account


@pytest.mark.parametrize(
    "value",
    [{"id": "not a number", "email": "x"}, {"email": "x"}, None, [1, 2], "text"],
)
@pytest.mark.parametrize("is_async", [True, False])
def test_value_not_fitting_the_declared_type_answers_500(
    value: Any, is_async: bool, twin: Twin, ask: Ask
) -> None:
    twin.add("GET", "/me", make_endpoint(value, annotation=Account, is_async=is_async))
    fastapi, ours = twin.both("GET", "/me")
    assert fastapi.status_code == 500
    assert ours.status_code == 500
    with pytest.raises(ResponseValidationError):
        ask(twin.app, "GET", "/fastapi/me", raise_errors=True)
    with pytest.raises(ResponseValidationError):
        ask(twin.app, "GET", "/dispatch/me", raise_errors=True)


def test_unencodable_value_answers_500_and_logs_the_endpoint_and_type(
    caplog: pytest.LogCaptureFixture, twin: Twin
) -> None:
    class Opaque:
        __slots__ = ()

    async def opaque_endpoint():  # type: ignore[no-untyped-def]  # deliberately untyped
        return {"x": Opaque()}

    twin.add("GET", "/o", opaque_endpoint)
    fastapi, ours = twin.both("GET", "/o")
    assert fastapi.status_code == ours.status_code == 500
    assert "opaque_endpoint" in caplog.text
    assert "Opaque" in caplog.text
