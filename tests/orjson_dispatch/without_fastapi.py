"""What orjson-dispatch answers in a Starlette app's install, without FastAPI: run as a script.

``python without_fastapi.py`` (in ``.venv-starlette``, tests/docs/environments.py) prints one
JSON object: whether FastAPI imports, the error that asks for it, ``dumps`` of every value of
``SAMPLES`` and the answers of a Starlette app. The samples hold a value of every type in
FastAPI's table of encoders (``fastapi.encoders.ENCODERS_BY_TYPE``), and of the classes that
``jsonable_encoder`` converts by their parents, its dataclass and ``vars()`` rules:
test_without_fastapi.py builds them again with FastAPI and compares. It imports nothing of the
tests, nor anything FastAPI's install alone brings.
"""

from __future__ import annotations

import collections
import dataclasses
import datetime as dt
import decimal
import enum
import importlib
import importlib.util
import ipaddress
import json
import pathlib
import re
import uuid
import warnings
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from pydantic import AnyUrl, BaseModel, NameEmail, SecretBytes, SecretStr
from pydantic_core import Url
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

import orjson_dispatch
from orjson_dispatch import dispatch, dumps, json_lines, request_json, server_sent_events


class Shade(enum.Enum):
    DARK = "dark"


class Stamp(dt.datetime):
    """A subclass: FastAPI's table applies to it by its parent."""


@dataclasses.dataclass
class Point:
    x: int
    when: dt.date


class Plain:
    """Neither a mapping nor a model: written as its ``vars()``."""

    def __init__(self) -> None:
        self.size = decimal.Decimal("2.50")


class Account(BaseModel):
    id: int


class SecretAccount(Account):
    password: str


def _numbers() -> Iterator[int]:
    yield from (1, 2)


def _color() -> Any:
    with warnings.catch_warnings():  # deprecated since pydantic 2.0, still in FastAPI's table
        warnings.simplefilter("ignore", DeprecationWarning)
        return importlib.import_module("pydantic.color").Color("red")


def _extra_color() -> Any:
    return importlib.import_module("pydantic_extra_types.color").Color("red")


#: A builder per value (each call a fresh one: a generator is read once).
SAMPLES: dict[str, Callable[[], Any]] = {
    "bytes": lambda: b"ab",
    "pydantic.color.Color": _color,
    "pydantic_extra_types Color": _extra_color,
    "date": lambda: dt.date(2024, 2, 29),
    "datetime": lambda: dt.datetime(2024, 2, 29, 1, 2, 3, 4),
    "datetime with an offset": lambda: dt.datetime(
        2024, 2, 29, tzinfo=dt.timezone(dt.timedelta(hours=5, minutes=30))
    ),
    "datetime subclass": lambda: Stamp(2024, 2, 29),
    "time": lambda: dt.time(1, 2, 3),
    "timedelta": lambda: dt.timedelta(days=1, microseconds=5),
    "integral Decimal": lambda: decimal.Decimal("10"),
    "Decimal": lambda: decimal.Decimal("1.25"),
    "IPv4Address": lambda: ipaddress.IPv4Address("192.0.2.1"),
    "IPv4Interface": lambda: ipaddress.IPv4Interface("192.0.2.1/24"),
    "IPv4Network": lambda: ipaddress.IPv4Network("198.51.100.0/24"),
    "IPv6Address": lambda: ipaddress.IPv6Address("2001:db8::1"),
    "IPv6Interface": lambda: ipaddress.IPv6Interface("2001:db8::1/64"),
    "IPv6Network": lambda: ipaddress.IPv6Network("2001:db8::/32"),
    "NameEmail": lambda: NameEmail("Ann", "ann@example.com"),
    "Pattern": lambda: re.compile("a+b"),
    "SecretBytes": lambda: SecretBytes(b"s3cret"),
    "SecretStr": lambda: SecretStr("s3cret"),
    "UUID": lambda: uuid.UUID(int=7),
    "Url": lambda: Url("https://example.com/a?b=1"),
    "AnyUrl": lambda: AnyUrl("https://example.com/a"),
    "Enum": lambda: Shade.DARK,
    "Path": lambda: pathlib.Path("/srv/a"),
    "deque": lambda: collections.deque([1, 2]),
    "frozenset": lambda: frozenset({3}),
    "set": lambda: {4},
    "generator": _numbers,
    "dataclass": lambda: Point(1, dt.date(2024, 2, 29)),
    "an object's vars()": Plain,
    "model": lambda: SecretAccount(id=1, password="s3cret"),
}


def built() -> dict[str, Any]:
    """Return the value of every sample whose packages are installed."""
    values = {}
    for name, build in SAMPLES.items():
        try:
            values[name] = build()
        except ImportError:
            continue
    return values


def _written(value: Any) -> str:
    """Return the JSON of ``{"v": value}``, or the error that ``dumps`` raised for it."""
    try:
        return dumps({"v": value}).decode()
    except ValueError as error:  # jsonable_encoder's, for a value it cannot encode
        return f"ValueError: {error}"


def report() -> dict[str, Any]:
    """Return what this install answers (see the module docstring)."""
    # Here only: an old Starlette's client warns on import beside a newer anyio.
    from starlette.testclient import TestClient

    found: dict[str, Any] = {"fastapi": importlib.util.find_spec("fastapi") is not None}
    try:
        _ = orjson_dispatch.DispatchRoute
    except ImportError as error:
        found["DispatchRoute"] = str(error)
    found["dumps"] = {name: _written(value) for name, value in built().items()}

    async def untyped(request: Request):  # type: ignore[no-untyped-def]  # FastAPI's untyped path
        return {"path": request.url.path, "when": dt.date(2024, 2, 29), "ids": {7}}

    async def typed(request: Request) -> Account:  # filtered to the declared class
        return SecretAccount(id=1, password="s3cret")

    async def echo(request: Request) -> dict[str, Any]:
        return {"got": await request_json(request)}

    async def items() -> AsyncIterator[dict[str, int]]:
        for n in range(2):
            yield {"n": n}

    async def lines(request: Request) -> Response:
        return json_lines(items())

    async def events(request: Request) -> Response:
        return server_sent_events(items())

    app = Starlette(
        routes=[
            Route("/untyped", dispatch(untyped)),
            Route("/typed", dispatch(typed)),
            Route("/echo", dispatch(echo), methods=["POST"]),
            Route("/lines", lines),
            Route("/events", events),
        ]
    )
    with TestClient(app) as client:
        answers = [
            client.get("/untyped"),
            client.get("/typed"),
            client.post("/echo", content=b'{"a": [1, 2.5, null]}'),
            client.get("/lines"),
            client.get("/events"),
        ]
    found["answers"] = {
        answer.request.url.path: [answer.status_code, answer.headers["content-type"], answer.text]
        for answer in answers
    }
    return found


if __name__ == "__main__":
    print(json.dumps(report()))
