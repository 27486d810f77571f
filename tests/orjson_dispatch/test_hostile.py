"""Hostile endpoints and values: ``@dispatch`` must answer exactly as FastAPI itself does.

Each test builds the same app twice with one builder, once as FastAPI runs it and once with
``@dispatch`` on the endpoint (``both``), requests both in process (httpx's ASGI transport) and
compares status, headers and parsed body (``compare``). Every JSON body either side sends must
parse with a strict parser (no ``NaN``/``Infinity`` tokens). FastAPI's answer is the expectation.

Where dispatch differs on purpose (FastAPI answers 500 or sends invalid JSON, dispatch sends
strict JSON), the test says so and pins both answers.
"""

import asyncio
import datetime
import decimal
import enum
import functools
import gc
import itertools
import json
import os
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeAlias

import httpx
import pytest
from fastapi import APIRouter, FastAPI, Request
from fastapi.exceptions import RequestValidationError, ResponseValidationError
from fastapi.responses import JSONResponse, PlainTextResponse
from fastapi.routing import APIRoute
from pydantic import BaseModel, ConfigDict, create_model
from starlette.applications import Starlette
from starlette.routing import Route

import orjson_dispatch
from orjson_dispatch import dispatch
from tests.orjson_dispatch import hostile_models
from tests.orjson_dispatch.versions import (
    FASTAPI,
    FASTAPI_DUMPS_JSON,
    NAN_AS_STRINGS,
    NEEDS_NAN_AS_STRINGS,
)

Decorate: TypeAlias = Callable[[Any], Any]
Builder: TypeAlias = Callable[[Decorate], Starlette]
Answer: TypeAlias = tuple[int, dict[str, str], Any]

ROOT = Path(__file__).resolve().parents[2]


def undecorated(endpoint: Any) -> Any:
    return endpoint


def both(build: Builder) -> tuple[Starlette, Starlette]:
    """The app as FastAPI runs it, and the same app with ``@dispatch`` on its endpoints."""
    return build(undecorated), build(dispatch)


async def _get_all(
    app: Starlette, paths: tuple[str, ...], *, raise_errors: bool
) -> list[httpx.Response]:
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=raise_errors)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        return [await client.get(path) for path in paths]


def get(app: Starlette, *paths: str) -> list[httpx.Response]:
    """GET each path; an exception in the app becomes Starlette's 500, as under a server."""
    return asyncio.run(_get_all(app, paths, raise_errors=False))


def raised(app: Starlette, path: str) -> BaseException:
    """GET ``path`` and return the exception the app raised while answering it."""
    with pytest.raises(Exception) as info:  # noqa: PT011 - each caller checks the class
        asyncio.run(_get_all(app, (path,), raise_errors=True))
    return info.value


def _refuse(token: str) -> Any:
    raise ValueError(f"invalid JSON: {token} is not a JSON value")


class Exact:
    """A parsed JSON number, equal only to the same JSON: 0 is not 0.0, 1 is not true."""

    __hash__ = None  # type: ignore[assignment]

    def __init__(self, value: float) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Exact)
            and type(other.value) is type(self.value)
            and other.value == self.value
        )

    def __repr__(self) -> str:
        return repr(self.value)


def parse_json(body: bytes) -> Any:
    """Parse strictly (NaN and Infinity are no JSON), numbers as `Exact`."""
    return json.loads(
        body,
        parse_constant=_refuse,
        parse_int=lambda text: Exact(int(text)),
        parse_float=lambda text: Exact(float(text)),
    )


def answer(response: httpx.Response) -> Answer:
    """Status, headers (without the length, which follows the body) and the body.

    A JSON body is parsed (`parse_json`).
    """
    headers = {k: v for k, v in response.headers.items() if k != "content-length"}
    body: Any = response.content
    if headers.get("content-type") == "application/json":
        body = parse_json(body)
    return response.status_code, headers, body


def compare(build: Builder, *paths: str) -> list[Answer]:
    """Assert that ``@dispatch`` answers every path as FastAPI does; return FastAPI's answers."""
    fastapi_app, dispatch_app = both(build)
    expected = [answer(r) for r in get(fastapi_app, *paths)]
    ours = [answer(r) for r in get(dispatch_app, *paths)]
    assert dict(zip(paths, ours, strict=True)) == dict(zip(paths, expected, strict=True))
    return expected


class Item(BaseModel):
    name: str


# --- a model class created per request ------------------------------------------------------------

_MEMORY_REQUESTS = 4000
_MEMORY_SLACK = 10 * 2**20


def rss_growth(decorated: bool, typed: bool, requests: int) -> int:
    """Bytes the process's RSS grows over ``requests`` GETs, each creating a model class.

    Run in a fresh interpreter (``_measure``) so that both sides start from the same state.
    """

    def build(decorate: Decorate) -> FastAPI:
        app = FastAPI()
        counter = itertools.count()

        async def endpoint() -> Any:
            model = create_model(f"PerRequest{next(counter)}", __base__=Item, extra=(int, 0))
            return model(name="n")

        app.get("/x", response_model=Item if typed else None)(decorate(endpoint))
        return app

    app = build(dispatch) if decorated else build(undecorated)

    async def run() -> int:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            for _ in range(200):  # warm up: first-request caches, allocator arenas
                assert (await client.get("/x")).status_code == 200
            before = _rss()
            for _ in range(requests):
                assert (await client.get("/x")).status_code == 200
            return _rss() - before

    return asyncio.run(run())


def _rss() -> int:
    gc.collect()
    status = Path("/proc/self/status").read_text()
    kilobytes = next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:"))
    return int(kilobytes) * 1024


def _measure(decorated: bool, typed: bool) -> int:
    code = (
        "from tests.orjson_dispatch.test_hostile import rss_growth; "
        f"print(rss_growth({decorated}, {typed}, {_MEMORY_REQUESTS}))"
    )
    result = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", code],
        cwd=ROOT,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        },
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return int(result.stdout)


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmRSS from /proc")
@pytest.mark.parametrize(
    "typed",
    [
        pytest.param(
            False,
            id="untyped",
        ),
        pytest.param(True, id="typed"),
    ],
)
def test_model_class_per_request_does_not_grow_memory(typed: bool) -> None:
    fastapi = _measure(decorated=False, typed=typed)
    ours = _measure(decorated=True, typed=typed)
    assert ours - fastapi < _MEMORY_SLACK, (
        f"dispatch +{ours / 1e6:.1f} MB, FastAPI +{fastapi / 1e6:.1f} MB"
    )


# --- functools.partial and callable objects as endpoints ------------------------------------------


def item(prefix: str, q: int = 1) -> Item:
    """Read an item."""
    return Item(name=f"{prefix}{q}")


class AsyncItem:
    async def __call__(self, q: int = 1) -> Item:
        return Item(name=f"async{q}")


class SyncItem:
    def __call__(self, q: int = 1) -> Item:
        return Item(name=f"sync{q}")


# What FastAPI itself cannot serve before these releases: nothing to compare with.
_EVALUATES = pytest.mark.skipif(
    FASTAPI < (0, 123, 7),
    reason="FastAPI evaluates the postponed annotations of partials and callable objects "
    "from 0.123.7 (inspect.signature(eval_str=True))",
)
_AWAITS_CALL = pytest.mark.skipif(
    FASTAPI < (0, 124),
    reason="FastAPI awaits an object's async __call__ from 0.124 (Dependant.is_coroutine_callable)",
)


@pytest.mark.parametrize(
    "endpoint",
    [
        pytest.param(hostile_models.ITEM_PARTIAL, id="postponed-partial", marks=_EVALUATES),
        pytest.param(hostile_models.AsyncItem(), id="postponed-async-call", marks=_EVALUATES),
        pytest.param(hostile_models.SyncItem(), id="postponed-sync-call", marks=_EVALUATES),
        pytest.param(functools.partial(item, "partial"), id="partial"),
        pytest.param(AsyncItem(), id="async-call", marks=_AWAITS_CALL),
        pytest.param(SyncItem(), id="sync-call"),
    ],
)
def test_partial_and_callable_object_endpoints(endpoint: Any) -> None:
    def build(decorate: Decorate) -> FastAPI:
        app = FastAPI()
        app.get("/x")(decorate(endpoint))
        return app

    compare(build, "/x?q=3", "/openapi.json")


# --- deeply nested values -------------------------------------------------------------------------


def nested_lists(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


def nested_dicts(depth: int) -> Any:
    value: Any = {}
    for _ in range(depth):
        value = {"a": value}
    return value


@pytest.mark.parametrize("make", [nested_lists, nested_dicts])
@pytest.mark.parametrize("depth", [300, 900])
def test_deeply_nested_untyped_value(make: Callable[[int], Any], depth: int) -> None:
    def build(decorate: Decorate) -> FastAPI:
        app = FastAPI()
        app.get("/x")(decorate(lambda: make(depth)))
        return app

    [(status, _, _)] = compare(build, "/x")
    assert status == 200


# --- enums whose value is not their str/int content -----------------------------------------------


class Letter(str, enum.Enum):
    ALPHA = "Alpha"

    def __new__(cls, value: str) -> "Letter":
        member = str.__new__(cls, "a")
        member._value_ = value
        return member


class Number(int, enum.Enum):
    HUNDRED = 100

    def __new__(cls, value: int) -> "Number":
        member = int.__new__(cls, 1)
        member._value_ = value
        return member


class Enums(BaseModel):
    letter: Letter
    number: Number


def test_enum_value_differs_from_content() -> None:
    def build(decorate: Decorate) -> FastAPI:
        app = FastAPI()
        app.get("/values")(decorate(lambda: {"letter": Letter.ALPHA, "number": Number.HUNDRED}))
        app.get("/keys")(decorate(lambda: {Letter.ALPHA: 1, Number.HUNDRED: 2}))
        enums = Enums(letter=Letter.ALPHA, number=Number.HUNDRED)
        app.get("/model", response_model=Enums)(decorate(lambda: enums))
        return app

    assert (Letter.ALPHA.value, str.__str__(Letter.ALPHA), int(Number.HUNDRED)) == ("Alpha", "a", 1)
    compare(build, "/values", "/keys", "/model")


# --- values FastAPI cannot encode -----------------------------------------------------------------


class NanConstants(BaseModel):
    model_config = ConfigDict(ser_json_inf_nan="constants")
    f: float


class NanStrings(BaseModel):
    model_config = ConfigDict(ser_json_inf_nan="strings" if NAN_AS_STRINGS else "null")
    f: float


class DecimalEnum(enum.Enum):
    D = decimal.Decimal("1.5")


class DateEnum(enum.Enum):
    D = datetime.date(2020, 1, 2)


class FrozensetEnum(enum.Enum):
    F = frozenset({1})


@pytest.mark.parametrize(
    ("value", "body"),
    [
        pytest.param(NanConstants(f=float("nan")), {"f": None}, id="nan-constants"),
        pytest.param(
            NanStrings(f=float("nan")),
            {"f": "NaN"},
            id="nan-strings",
            marks=pytest.mark.skipif(not NAN_AS_STRINGS, reason=NEEDS_NAN_AS_STRINGS),
        ),
        pytest.param(DecimalEnum.D, Exact(1.5), id="decimal-enum"),
        pytest.param(DateEnum.D, "2020-01-02", id="date-enum"),
        pytest.param(FrozensetEnum.F, [Exact(1)], id="frozenset-enum"),
    ],
)
def test_value_fastapi_cannot_encode_is_encoded_as_strict_json(value: Any, body: Any) -> None:
    """A deliberate difference: FastAPI answers 500, dispatch strict JSON.

    NaN becomes null as everywhere in the untyped path (a model whose configuration writes it
    as a string keeps the string); an enum's value is encoded by the rules for that value
    (orjson reads an enum's value itself).
    """

    def build(decorate: Decorate) -> FastAPI:
        app = FastAPI()
        app.get("/x")(decorate(lambda: {"v": value}))
        return app

    fastapi_app, dispatch_app = both(build)
    [fastapi] = get(fastapi_app, "/x")
    [ours] = get(dispatch_app, "/x")
    assert fastapi.status_code == 500
    assert answer(ours) == (200, {"content-type": "application/json"}, {"v": body})


def test_typed_nan_constants_is_written_as_null() -> None:
    """A deliberate difference: FastAPI writes the NaN token, which no JSON parser accepts."""

    def nan() -> NanConstants:
        return NanConstants(f=float("nan"))

    # FastAPI before 0.130 renders typed values with json.dumps(allow_nan=False): a 500.
    fastapi = (200, b'{"f":NaN}') if FASTAPI_DUMPS_JSON else (500, b"Internal Server Error")
    for decorate, expected in ((undecorated, fastapi), (dispatch, (200, b'{"f":null}'))):
        app = FastAPI()
        app.get("/x")(decorate(nan))
        [response] = get(app, "/x")
        assert (response.status_code, response.content) == expected


@pytest.mark.filterwarnings("ignore:ORJSONResponse is deprecated:DeprecationWarning")
def test_big_int_with_orjson_response_class() -> None:
    """A deliberate difference: orjson's ORJSONResponse refuses integers beyond 64 bits (500);
    dispatch writes their digits, as FastAPI's default response class does."""
    from fastapi import responses

    if not hasattr(responses, "ORJSONResponse"):
        pytest.skip("this FastAPI has no ORJSONResponse")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        response_class = responses.ORJSONResponse

    def build(decorate: Decorate) -> FastAPI:
        app = FastAPI()
        app.get("/x", response_class=response_class)(decorate(lambda: {"n": 2**70}))
        return app

    fastapi_app, dispatch_app = both(build)
    [fastapi] = get(fastapi_app, "/x")
    [ours] = get(dispatch_app, "/x")
    assert fastapi.status_code == 500
    assert (ours.status_code, ours.content) == (200, b'{"n":1180591620717411303424}')


# --- model fields assigned without validation -----------------------------------------------------


class Scores(BaseModel):
    score: float
    count: int


@pytest.mark.parametrize("declared", ["untyped", "response_model", "annotation"])
def test_field_assigned_without_validation(declared: str) -> None:
    def scores() -> Scores:
        value = Scores(score=1.5, count=2)
        value.score = 0  # pydantic does not validate assignment by default
        value.count = True
        return value

    def build(decorate: Decorate) -> FastAPI:
        app = FastAPI()
        # An explicit response_model=None turns FastAPI's typed path off despite the annotation.
        options: dict[str, dict[str, Any]] = {
            "untyped": {"response_model": None},
            "response_model": {"response_model": Scores},
        }
        app.get("/x", **options.get(declared, {}))(decorate(scores))
        return app

    compare(build, "/x")


# --- containers whose iteration differs from their storage ----------------------------------------


class HidingDict(dict[str, Any]):
    """A dict whose keys()/items() leave out "secret" (FastAPI's jsonable_encoder uses them)."""

    def keys(self) -> Any:
        return {k: v for k, v in super().items() if k != "secret"}.keys()

    def items(self) -> Any:
        return {k: v for k, v in super().items() if k != "secret"}.items()


class RewritingList(list[int]):
    def __iter__(self) -> Iterator[int]:
        return iter([10, 20])


@pytest.mark.parametrize(
    "value",
    [
        pytest.param(
            HidingDict(a=1, secret="s3cr3t"),
            id="dict-hiding-a-key",
        ),
        pytest.param(
            RewritingList([1, 2]),
            id="list-overriding-iter",
        ),
    ],
)
def test_container_subclass_untyped(value: Any) -> None:
    def build(decorate: Decorate) -> FastAPI:
        app = FastAPI()
        app.get("/x")(decorate(lambda: value))
        return app

    compare(build, "/x")


# --- a response class that sets a header ----------------------------------------------------------


class HeaderResponse(JSONResponse):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.headers["x-custom"] = "set by the response class"


def test_response_class_setting_a_header() -> None:
    def build(decorate: Decorate) -> FastAPI:
        app = FastAPI()
        app.get("/untyped", response_class=HeaderResponse)(decorate(lambda: {"a": 1}))

        def typed() -> Item:
            return Item(name="n")

        app.get("/typed", response_class=HeaderResponse)(decorate(typed))
        return app

    [(_, headers, _), _] = compare(build, "/untyped", "/typed")
    assert headers["x-custom"] == "set by the response class"


# --- dispatch twice; a route class applying dispatch ----------------------------------------------


def test_dispatch_twice_is_dispatch_once() -> None:
    def build(decorate: Decorate) -> FastAPI:
        app = FastAPI()

        @app.get("/x")
        @decorate
        @decorate
        def x(q: int = 1) -> Item:
            return Item(name=f"x{q}")

        return app

    compare(build, "/x?q=2", "/openapi.json")


@pytest.mark.parametrize(
    "endpoint_decorated",
    [
        pytest.param(False, id="plain-endpoint"),
        pytest.param(
            True,
            id="dispatched-endpoint",
        ),
    ],
)
def test_route_class_applying_dispatch(endpoint_decorated: bool) -> None:
    def build(decorate: Decorate) -> FastAPI:
        class DecoratingRoute(APIRoute):
            def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
                super().__init__(path, decorate(endpoint), **kwargs)

        router = APIRouter(route_class=DecoratingRoute)

        def x(q: int = 1) -> Item:
            return Item(name=f"x{q}")

        router.get("/x")(decorate(x) if endpoint_decorated else x)
        app = FastAPI()
        app.include_router(router)
        app.include_router(router, prefix="/again")
        return app

    compare(build, "/x?q=2", "/again/x?q=3", "/openapi.json")


# --- errors at decoration time; dumps of a cycle --------------------------------------------------


def test_unresolvable_return_annotation_fails_at_decoration() -> None:
    def missing_return(request: Request) -> Any:
        return {"a": 1}

    missing_return.__annotations__["return"] = "Missing"
    with pytest.raises(TypeError, match="missing_return"):
        Route("/x", dispatch(missing_return))


def test_dumps_of_a_cycle_raises_type_error() -> None:
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    with pytest.raises(TypeError):
        orjson_dispatch.dumps(cyclic)


# --- an async wrapper around a sync endpoint ------------------------------------------------------


def async_wrapper(endpoint: Callable[..., Any]) -> Callable[..., Any]:
    """An ``async def`` wrapper calling a sync function, as FastAPI's own tests have one."""

    @functools.wraps(endpoint)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        return endpoint(*args, **kwargs)

    return wrapper


def sync_item(q: int = 1) -> Item:
    return Item(name=f"w{q}")


@pytest.mark.parametrize(
    "dispatch_on_top",
    [
        pytest.param(
            True,
            id="dispatch-on-top",
        ),
        pytest.param(False, id="dispatch-below"),
    ],
)
def test_async_wrapper_around_sync_endpoint(dispatch_on_top: bool) -> None:
    def build(decorate: Decorate) -> FastAPI:
        endpoint = (
            decorate(async_wrapper(sync_item))
            if dispatch_on_top
            else async_wrapper(decorate(sync_item))
        )
        app = FastAPI()
        app.get("/x")(endpoint)
        return app

    compare(build, "/x?q=4")


# --- validation errors name the user's endpoint ---------------------------------------------------


def assert_same_location(ours: Exception, expected: Exception) -> None:
    """Both errors name the same endpoint location; FastAPI's names this file, when it can."""
    if hasattr(expected, "endpoint_ctx"):
        assert expected.endpoint_ctx["file"] == __file__
    assert (str(ours), getattr(ours, "endpoint_ctx", None)) == (
        str(expected),
        getattr(expected, "endpoint_ctx", None),
    )


@pytest.mark.usefixtures("fresh_endpoint_context")
def test_response_validation_error_names_the_endpoint() -> None:
    def build(decorate: Decorate) -> FastAPI:
        app = FastAPI()

        @app.get("/bad")
        @decorate
        def bad() -> Item:
            return {"nom": 1}  # type: ignore[return-value]

        return app

    expected, ours = (raised(app, "/bad") for app in both(build))
    assert isinstance(expected, ResponseValidationError)
    assert isinstance(ours, ResponseValidationError)
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
            return Item(name=f"x{q}")

        return app

    compare(build, "/x?q=not-an-int")
    expected, ours = errors
    assert_same_location(ours, expected)


# --- the response class in force from an included router ------------------------------------------


def test_default_response_class_of_router_and_app() -> None:
    def build(decorate: Decorate) -> FastAPI:
        app = FastAPI(default_response_class=PlainTextResponse)
        app.get("/app")(decorate(lambda: "hello"))
        router = APIRouter(default_response_class=PlainTextResponse)
        router.get("/x")(decorate(lambda: "hello"))
        app.include_router(router, prefix="/router")
        return app

    [(_, app_headers, _), (_, router_headers, _)] = compare(build, "/app", "/router/x")
    assert (
        app_headers["content-type"]
        == router_headers["content-type"]
        == ("text/plain; charset=utf-8")
    )


def test_default_response_class_of_include_router() -> None:
    def build(decorate: Decorate) -> FastAPI:
        app = FastAPI()
        router = APIRouter()
        router.get("/x")(decorate(lambda: "hello"))
        app.include_router(router, prefix="/text", default_response_class=PlainTextResponse)
        app.include_router(router, prefix="/json")
        return app

    [(_, text_headers, _), (_, json_headers, _)] = compare(build, "/text/x", "/json/x")
    assert text_headers["content-type"] == "text/plain; charset=utf-8"
    assert json_headers["content-type"] == "application/json"


# --- containers of scalars assigned without validation ----------------------------------------


class Tokens(BaseModel):
    logprobs: list[float]
    ids: list[int]


def test_scalar_containers_assigned_without_validation_are_written_as_held() -> None:
    """A deliberate difference: only scalar fields are checked value by value.

    Checking every element of a list of tens of thousands of tokens would cost more than
    pydantic's own serializer; FastAPI (pydantic) converts each element to the declared type.
    """

    def tokens() -> Tokens:
        value = Tokens(logprobs=[-0.5], ids=[1])
        value.logprobs = [0, -0.25]  # an int where floats are declared
        value.ids = [True, 2]  # a bool where ints are declared
        return value

    for decorate, expected in (
        (undecorated, b'{"logprobs":[0.0,-0.25],"ids":[1,2]}'),
        (dispatch, b'{"logprobs":[0,-0.25],"ids":[true,2]}'),
    ):
        app = FastAPI()
        app.get("/x")(decorate(tokens))
        [response] = get(app, "/x")
        assert (response.status_code, response.content) == (200, expected)
