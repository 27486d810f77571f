"""Parity examples as data: one app built twice, once as FastAPI runs it, once under ``@dispatch``.

Each ``Case`` names a behaviour, builds its app given how to decorate the endpoints (unchanged, or
``dispatch``), and says which request to send. ``test_route_answers.py`` sends that request to
both apps, ``test_route_class.py`` to the app built with ``DispatchRoute``, and compares the
answers (by default: same status, same headers in the same order, same body bytes). What FastAPI
itself answers is checked too (``fastapi_status``, ``fastapi_body``), so a case keeps exercising
what its name says when FastAPI changes. A new example is one entry in ``CASES``.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

import httpx
from fastapi import FastAPI, Response
from fastapi.responses import (
    FileResponse,
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    StreamingResponse,
)
from fastapi.routing import APIRoute

from tests.orjson_dispatch.apps import UNTYPED, Decorate, declare, make_endpoint
from tests.orjson_dispatch.compare import assert_equivalent, assert_identical
from tests.orjson_dispatch.samples import ITEM, Account, AccountInDB, AccountRow, Item


class Build(Protocol):
    """Builds a case's app, each endpoint wrapped by ``decorate``, its routes ``route_class``."""

    def __call__(self, decorate: Decorate, route_class: type[APIRoute] = ...) -> FastAPI: ...


@dataclasses.dataclass(frozen=True)
class Case:
    """One parity example.

    Attributes:
        name: The behaviour, written as the test id.
        build: Builds the app, wrapping each endpoint with the ``Decorate`` it is given (and
            with ``route_class=DispatchRoute``, the app of the route class's parity test).
        fastapi_status: The status FastAPI itself answers.
        method: The request method.
        path: The request path (with its query string).
        request: More keyword arguments for ``httpx.AsyncClient.request``.
        fastapi_body: When given, the exact body FastAPI itself answers.
        absent_headers: Header names neither answer may carry.
        absent_text: Text neither answer's body may contain.
        compare: Asserts that ``dispatch``'s answer (first) matches FastAPI's (second).
    """

    name: str
    build: Build
    fastapi_status: int
    method: str = "GET"
    path: str = "/"
    request: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    fastapi_body: bytes | None = None
    absent_headers: tuple[str, ...] = ()
    absent_text: tuple[bytes, ...] = ()
    compare: Callable[[httpx.Response, httpx.Response], None] = assert_identical

    def check(self, ours: httpx.Response, fastapi: httpx.Response) -> None:
        """Assert FastAPI's expected answer, what neither answer may hold, and `compare`."""
        assert fastapi.status_code == self.fastapi_status
        if self.fastapi_body is not None:
            assert fastapi.content == self.fastapi_body
        for answer in (fastapi, ours):
            assert not [name for name in self.absent_headers if name in answer.headers]
            assert not [text for text in self.absent_text if text in answer.content]
        self.compare(ours, fastapi)


def route(endpoint: Callable[..., Any], method: str = "GET", **options: Any) -> Build:
    """A builder: an app with ``endpoint`` at ``/`` for ``method``, with route ``options``."""

    def build(decorate: Decorate, route_class: type[APIRoute] = APIRoute) -> FastAPI:
        app = FastAPI()
        app.router.route_class = route_class
        app.add_api_route("/", decorate(endpoint), methods=[method], **options)
        return app

    return build


# --- endpoints the cases share -------------------------------------------------------------------


def _setting_status(status: int, annotation: Any) -> Callable[..., Any]:
    """An endpoint setting ``status`` and an etag on the injected Response, returning ITEM."""

    async def endpoint(response: Response) -> Any:
        response.status_code = status
        response.headers["etag"] = '"v1"'
        return ITEM

    return declare(endpoint, annotation)


async def _no_content() -> None:
    return None


async def _chunks() -> AsyncIterator[bytes]:
    yield b"one,"
    yield b"two"


#: Responses an endpoint returns, by name, with the status each is sent with.
_RESPONSES: list[tuple[str, int, Callable[[], Response]]] = [
    ("streaming", 200, lambda: StreamingResponse(_chunks(), media_type="text/csv")),
    ("file", 200, lambda: FileResponse(Path(__file__), filename="report.csv")),
    ("json", 418, lambda: JSONResponse({"x": 1}, status_code=418, headers={"x-a": "b"})),
    ("plain", 200, lambda: PlainTextResponse("hi", status_code=200)),
    ("redirect", 307, lambda: RedirectResponse("/elsewhere")),
    ("bytes", 200, lambda: Response(b"\x00\x01", media_type="application/octet-stream")),
]


def _returning_response(make: Callable[[], Response]) -> Callable[..., Any]:
    """An untyped endpoint setting a header on the injected Response, then returning ``make()``."""

    async def endpoint(response: Response) -> Any:
        response.headers["x-injected"] = "ignored by FastAPI for returned Responses"
        return make()

    return declare(endpoint, UNTYPED)


class _Service:
    async def lookup(self, q: int = 1) -> dict[str, int]:
        return {"q": q}


async def _scaled(factor: int, q: int = 1) -> dict[str, int]:
    return {"q": q * factor}


_ROW = AccountInDB(id=1, email="a@example.com", password="hunter2")
_LEAKS = (b"hunter2", b"is_admin")

CASES: list[Case] = [
    # --- status codes -----------------------------------------------------------------------
    *(
        Case(
            f"route-status-code-is-kept-{kind}",
            route(make_endpoint(ITEM, is_async=kind == "async"), "POST", status_code=201),
            201,
            method="POST",
        )
        for kind in ("async", "sync")
    ),
    *(
        Case(
            f"injected-status-{status}-empties-the-body-{'typed' if typed else 'untyped'}",
            route(_setting_status(status, Item if typed else UNTYPED)),
            status,
            fastapi_body=b"",
        )
        for status, typed in [(204, False), (304, False), (204, True), (304, True)]
    ),
    Case(
        "route-status-204-answers-an-empty-body",
        # response_model=None: FastAPI 0.115 refuses a `-> None` annotation on a 204 route.
        route(_no_content, "DELETE", status_code=204, response_model=None),
        204,
        method="DELETE",
        fastapi_body=b"",
    ),
    # --- returned Responses pass through, the injected Response ignored ----------------------
    *(
        Case(
            f"returned-{name}-response-passes-through",
            route(_returning_response(make), status_code=201),
            status,
            absent_headers=("x-injected",),
        )
        for name, status, make in _RESPONSES
    ),
    # --- the route's response class ---------------------------------------------------------
    *(
        Case(
            f"route-response-class-{cls.__name__}-is-honoured",
            route(make_endpoint(value), response_class=cls),
            200,
        )
        for cls, value in [
            (HTMLResponse, "<b>hi</b>"),
            (PlainTextResponse, "plain"),
            (JSONResponse, {"a": [1, 2]}),
        ]
    ),
    # --- other callables as endpoints -------------------------------------------------------
    Case("bound-method-is-an-endpoint", route(_Service().lookup), 200, path="/?q=3"),
    Case(
        "functools-partial-is-an-endpoint",
        route(functools.partial(_scaled, factor=5)),
        200,
        path="/?q=2",
    ),
    # --- the declared type filters what is returned -----------------------------------------
    Case(
        "returned-subclass-is-filtered-by-the-return-annotation",
        route(make_endpoint(_ROW, annotation=Account)),
        200,
        fastapi_body=b'{"id":1,"email":"a@example.com"}',
        absent_text=_LEAKS,
        compare=assert_equivalent,
    ),
    Case(
        "returned-subclass-is-filtered-by-the-response-model",
        route(make_endpoint(_ROW, annotation=AccountInDB), response_model=Account),
        200,
        fastapi_body=b'{"id":1,"email":"a@example.com"}',
        absent_text=_LEAKS,
        compare=assert_equivalent,
    ),
    *(
        Case(
            f"extra-data-in-a-returned-{name}-is-filtered-by-the-declared-type",
            route(make_endpoint(value, annotation=annotation)),
            200,
            absent_text=_LEAKS,
            compare=assert_equivalent,
        )
        for name, value, annotation in [
            (
                "dict",
                {"id": 1, "email": "a@example.com", "password": "hunter2", "is_admin": True},
                Account,
            ),
            ("object", AccountRow(1, "a@example.com", "hunter2"), Account),
            ("list", [_ROW], list[Account]),
        ]
    ),
]
