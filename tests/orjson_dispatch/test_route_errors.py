"""What cannot be answered answers 500 as under FastAPI, and errors name the user's endpoint.

A returned value that does not fit the declared type raises FastAPI's ``ResponseValidationError``
(the filtering cases are parity examples in ``parity_cases.py``), an unencodable value answers
500 and logs the endpoint and the type, and validation errors carry the location of the user's
endpoint (FastAPI 0.124+), not of dispatch's wrapper.
"""

from typing import Any

import pytest
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError, ResponseValidationError
from fastapi.responses import JSONResponse

from tests.orjson_dispatch.apps import Ask, Decorate, Twin, built_both, make_endpoint
from tests.orjson_dispatch.compare import assert_answers_alike
from tests.orjson_dispatch.samples import Account, Item


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


# --- validation errors name the user's endpoint -------------------------------------------------


def assert_same_location(ours: Exception, expected: Exception) -> None:
    """Both errors name the same endpoint location; FastAPI's names this file, when it can."""
    if hasattr(expected, "endpoint_ctx"):
        assert expected.endpoint_ctx["file"] == __file__
    assert (str(ours), getattr(ours, "endpoint_ctx", None)) == (
        str(expected),
        getattr(expected, "endpoint_ctx", None),
    )


@pytest.mark.usefixtures("fresh_endpoint_context")
def test_response_validation_error_names_the_endpoint(ask: Ask) -> None:
    def build(decorate: Decorate) -> FastAPI:
        app = FastAPI()

        @app.get("/bad")
        @decorate
        def bad() -> Item:
            return {"nom": 1}  # type: ignore[return-value]

        return app

    raised = []
    for app in built_both(build):
        with pytest.raises(ResponseValidationError) as info:
            ask(app, "GET", "/bad", raise_errors=True)
        raised.append(info.value)
    expected, ours = raised
    assert_same_location(ours, expected)


@pytest.mark.usefixtures("fresh_endpoint_context")
def test_request_validation_error_names_the_endpoint() -> None:
    errors: list[RequestValidationError] = []

    def build(decorate: Decorate) -> FastAPI:
        app = FastAPI()

        @app.exception_handler(RequestValidationError)
        async def keep(request: Request, error: Exception) -> JSONResponse:
            assert isinstance(error, RequestValidationError)
            errors.append(error)
            return JSONResponse({}, status_code=422)

        @app.get("/x")
        @decorate
        def x(q: int) -> Item:
            return Item(name=f"x{q}", price=q)

        return app

    assert_answers_alike(build, "/x?q=not-an-int")
    expected, ours = errors
    assert_same_location(ours, expected)
