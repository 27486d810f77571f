"""How two answers are compared: JSON bodies, headers in order, cookies without the clock."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import re
import sys
from collections.abc import Callable, Iterator
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
import orjson
from hypothesis import event
from starlette.types import ASGIApp

from tests.orjson_dispatch.apps import Decorate, built_both, get_all


def outcome(function: Callable[..., bytes], *args: Any, **kwargs: Any) -> bytes | Exception:
    """What ``function(*args, **kwargs)`` gives: the bytes, or the exception it raises."""
    try:
        return function(*args, **kwargs)
    except Exception as exc:  # the failure is the observed behaviour
        return exc


def same_json(ours: bytes, expected: bytes) -> bool:
    """Whether two bodies parse to equal values (``json.loads``: key order and duplicates aside).

    Numbers are compared with their JSON type (``typed_json``): ``1`` is not ``1.0`` nor ``true``.
    ``ours`` must be strict JSON (RFC 8259 has no NaN or Infinity): where ``expected`` holds the
    NaN and Infinity tokens of pydantic's ``ser_json_inf_nan="constants"``, null is expected, a
    deliberate difference. Records a hypothesis event when the values are equal but the key
    order (or the duplicate keys) differ, so that such differences show in
    ``--hypothesis-show-statistics``.
    """
    with deep_enough():
        if not _equal(typed_json(ours, strict=True), typed_json(expected)):
            return False
        if not _equal(json_pairs(ours), json_pairs(expected)):
            event("same JSON value, different key order or duplicate keys")
    return True


def _equal(left: Any, right: Any) -> bool:
    """``left == right``, without recursion: on Python 3.12, ``==`` of values nested 750 levels
    deep exceeds the C recursion limit, which ``sys.setrecursionlimit`` does not raise."""
    pending = [(left, right)]
    while pending:
        one, other = pending.pop()
        if type(one) in (list, tuple) and type(other) is type(one):
            if len(one) != len(other):
                return False
            pending.extend(zip(one, other, strict=True))
        elif type(one) is dict and type(other) is dict:
            if one.keys() != other.keys():
                return False
            pending.extend((one[key], other[key]) for key in one)
        elif one != other:
            return False
    return True


@contextlib.contextmanager
def deep_enough() -> Iterator[None]:
    """Let the test parse and compare values nested 900 levels deep, under its own stack.

    ``json.loads`` and ``==`` on nested lists count each level against Python's recursion
    limit, which the test's own frames already use a part of. Only test code runs here, never
    FastAPI's or dispatch's, whose limits stay as they are.
    """
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(limit + 2000)
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)


def typed_json(body: bytes, *, strict: bool = False) -> Any:
    """The JSON value of ``body``, each number as ``("int", value)`` or ``("float", value)``.

    Python's ``1 == 1.0 == True`` would hide a number written with another JSON type. NaN and
    Infinity tokens are null, or refused with ``strict``.
    """
    return json.loads(
        body,
        parse_int=lambda text: ("int", int(text)),
        parse_float=lambda text: ("float", float(text)),
        parse_constant=_refuse if strict else _as_null,
    )


def json_pairs(body: bytes, *, strict: bool = False) -> Any:
    """Parse a JSON body keeping object key order and duplicate keys (as lists of pairs).

    NaN and Infinity tokens are null, or refused with ``strict``.
    """
    return json.loads(body, object_pairs_hook=list, parse_constant=_refuse if strict else _as_null)


def _refuse(name: str) -> Any:
    msg = f"{name} is not JSON (RFC 8259 section 6)"
    raise ValueError(msg)


def _as_null(name: str) -> Any:
    return None


def header_list(response: httpx.Response) -> list[tuple[str, str]]:
    """Every header in order (duplicates kept), names lower-cased."""
    return [(name.lower(), value) for name, value in response.headers.multi_items()]


_MAX_AGE_ZERO = re.compile(r";\s*max-age=0\s*(;|$)", re.IGNORECASE)
_EXPIRES = re.compile(r"(;\s*expires=)([^;]*)", re.IGNORECASE)


def comparable_headers(response: httpx.Response) -> list[tuple[str, str]]:
    """``header_list`` with the clock-made date of each deleted cookie checked and set aside.

    Starlette's ``delete_cookie`` sends ``Max-Age=0`` and ``expires=0``, which ``http.cookies``
    writes as the date of the moment the header is built: two answers a second apart differ
    there. Such a date must be a valid HTTP date not after now (a cookie already expired); it is
    then written ``<past>``, so that everything else in the header is compared exactly.
    """
    return [
        (
            name,
            _EXPIRES.sub(_past, value)
            if name == "set-cookie" and _MAX_AGE_ZERO.search(value)
            else value,
        )
        for name, value in header_list(response)
    ]


def _past(match: re.Match[str]) -> str:
    expires = parsedate_to_datetime(match[2])
    assert expires.tzinfo is not None, f"expires={match[2]} is not a GMT date"
    assert expires <= dt.datetime.now(dt.timezone.utc), f"expires={match[2]} is in the future"
    return f"{match[1]}<past>"


def assert_identical(ours: httpx.Response, fastapi: httpx.Response) -> None:
    """Same status, same headers in the same order, same body bytes (deleted cookies' dates
    aside, see ``comparable_headers``)."""
    assert ours.status_code == fastapi.status_code
    assert comparable_headers(ours) == comparable_headers(fastapi)
    assert ours.content == fastapi.content


def assert_equivalent(ours: httpx.Response, fastapi: httpx.Response) -> None:
    """Same status, same headers except content-length, same JSON."""
    assert ours.status_code == fastapi.status_code, ours.content
    drop = {"content-length"}
    assert [h for h in comparable_headers(ours) if h[0] not in drop] == [
        h for h in comparable_headers(fastapi) if h[0] not in drop
    ]
    assert orjson.loads(ours.content) == orjson.loads(fastapi.content)


Answer = tuple[int, dict[str, str], Any]
"""Status, headers (without the length) and body, the body parsed if JSON (``answer``)."""


def answer(response: httpx.Response) -> Answer:
    """Status, headers (without the length, which follows the body) and the body.

    A JSON body is parsed strictly, numbers with their JSON type (``typed_json``): a body that
    is not JSON (NaN or Infinity tokens) fails the test.
    """
    headers = {k: v for k, v in response.headers.items() if k != "content-length"}
    body: Any = response.content
    if headers.get("content-type") == "application/json":
        body = typed_json(body, strict=True)
    return response.status_code, headers, body


def assert_answers_alike(build: Callable[[Decorate], ASGIApp], *paths: str) -> list[Answer]:
    """Assert that the app ``build`` makes answers every path alike with and without
    ``@dispatch`` (``answer``: status, headers, strict JSON); return FastAPI's answers."""
    fastapi_app, dispatch_app = built_both(build)
    expected = [answer(r) for r in get_all(fastapi_app, *paths)]
    ours = [answer(r) for r in get_all(dispatch_app, *paths)]
    assert dict(zip(paths, ours, strict=True)) == dict(zip(paths, expected, strict=True))
    return expected


def assert_same_answer(
    ours: httpx.Response,
    fastapi: httpx.Response,
    same_body: Callable[[bytes, bytes], bool] = same_json,
) -> None:
    """Same status; for answers below 500 also the same content type and, by `same_body`
    (default `same_json`), the same body."""
    assert ours.status_code == fastapi.status_code, ours.content
    if fastapi.status_code >= 500:
        return  # Starlette's plain-text "Internal Server Error" on both sides
    assert ours.headers.get("content-type") == fastapi.headers.get("content-type")
    assert same_body(ours.content, fastapi.content)
