"""JSON request bodies parsed by orjson, with the value and the errors of `json.loads`.

Starlette's `Request.json()`, which FastAPI's request handler awaits for a JSON body (and
dependencies and endpoints may await too), is `json.loads(await request.body())`, kept on the
request as `_json` (Starlette 0.37 to 1.x) so that the body is parsed once. `request_json` gives
the same value, kept the same way, parsed by orjson wherever orjson's value is the one
`json.loads` gives, and by `json.loads` itself everywhere else:

* a body orjson refuses (NaN and Infinity tokens, numbers too large for a double, a byte order
  mark, UTF-16 and UTF-32 text, lone surrogates, invalid UTF-8, nesting deeper than orjson's
  1024 levels, and every invalid document) is parsed by `json.loads`, which returns its value or
  raises its own error (FastAPI answers `json.JSONDecodeError` with its 422 `json_invalid` and
  any other error with its 400);
* a value holding a float of magnitude 2**63 or more: orjson reads an integer beyond 64 bits as
  a float, `json.loads` as an int;
* a value nested deeper than `json.loads` can go from here (it counts each level against
  Python's recursion limit: about 950 levels on Python 3.11, where orjson goes to 1024).

On Python 3.10 and 3.11, where a document's levels and Python's frames count against one
recursion limit, `parsing_json`'s frame under FastAPI's handler leaves `json.loads` one level
fewer than in FastAPI's own handler: a body nested exactly to FastAPI's limit is refused as one
level deeper would be. Later versions count a document's levels apart from Python frames.

Bodies of up to 2 KB are parsed by `json.loads` itself, as fast there as orjson with the
checks above. Everything else orjson and `json.loads` read alike: the same whitespace (RFC
8259's four characters), the last of duplicate keys at the place of the first, `-0` as the int
0, correctly rounded floats, and the same strings (the tests compare them on arbitrary
documents).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Coroutine
from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import Response

__all__ = ["parsing_json", "request_json"]

# orjson reads an integer token beyond 64 bits as a float (3.10 to 3.11): no float of smaller
# magnitude can stand for one, since every integer of 19 digits or fewer below it fits in 64 bits.
_FLOAT_FROM_BIG_INTEGER = 2.0**63
# Below it json.loads is as fast as orjson with the checks a value needs (a chat request of 2 KB:
# a few us either way), and exact by definition.
_SMALL = 2048
_ORJSON_DEPTH = 1024  # orjson's nesting limit (yyjson's, as orjson builds it)
_OPEN = "[" * (_ORJSON_DEPTH + 2)
_CLOSE = "]" * (_ORJSON_DEPTH + 2)


async def request_json(request: Request) -> Any:
    """Return the JSON value of the request's body, as `await request.json()` returns it.

    The value (and every error) is the one Starlette's `Request.json()` gives, that is
    `json.loads(await request.body())`'s, parsed by orjson where that gives the same value (see
    the module's docstring for where `json.loads` parses instead). It is kept on the request as
    Starlette keeps it: a later `await request.json()`, or `request_json(request)`, returns the
    same object without parsing again.

    Args:
        request: A Starlette (or FastAPI) request; its `body()` is awaited, whatever reads it.

    Raises:
        json.JSONDecodeError: The body is not JSON, as `json.loads` says (its position,
            message and document).
        ValueError: The body is not text `json.loads` can decode (`UnicodeDecodeError`), or holds
            an integer longer than Python's `int` digit limit.
        RecursionError: The body is nested deeper than `json.loads` can go.
    """
    try:
        return request._json
    except AttributeError:
        pass
    body = await request.body()
    value = orjson_value(body) if len(body) > _SMALL else _UNSURE
    if value is _UNSURE:
        value = json.loads(body)
    request._json = value
    return value


class _Unsure:
    """The marker `orjson_value` returns where `json.loads` must parse the body."""


_UNSURE: Any = _Unsure()


def orjson_value(body: bytes | str) -> Any:
    """Return orjson's value of `body` where it is `json.loads`'s, else the marker `_UNSURE`."""
    try:
        value = orjson.loads(body)
    except Exception:  # orjson refuses it: json.loads has the answer, a value or the error
        return _UNSURE
    depth = _depth(value)
    if depth < 0 or (depth and not _json_loads_reaches(depth)):
        return _UNSURE
    return value


def _depth(value: Any) -> int:
    """How deep lists and dicts nest in `value` (0: a scalar), or -1 for a float >= 2**63.

    Long lists and dicts of numbers only (token ids, logprobs) are looked at in C
    (`_numbers_in_range`), and so are long ones of strings only (`_strings_only`) or holding
    no list, dict or float; the others item by item.
    """
    kind = type(value)
    if kind is float:
        return 0 if -_FLOAT_FROM_BIG_INTEGER < value < _FLOAT_FROM_BIG_INTEGER else -1
    if kind is not list and kind is not dict:
        return 0
    deepest = 1
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        node, level = pending.pop()
        items = node.values() if type(node) is dict else node
        if len(items) >= _LONG:
            first = type(next(iter(items)))
            if first is str and _strings_only(items):
                continue
            numbers = _numbers_in_range(items) if first in _NUMBERS else None
            if numbers is not None:
                if not numbers:
                    return -1
                continue
            if _NESTED_OR_FLOAT.isdisjoint(map(type, items)):  # strings and None, say
                continue
        for item in items:
            kind = type(item)
            if kind is list or kind is dict:
                if level >= deepest:
                    deepest = level + 1
                if item:
                    pending.append((item, level + 1))
            elif kind is float and not -_FLOAT_FROM_BIG_INTEGER < item < _FLOAT_FROM_BIG_INTEGER:
                return -1
    return deepest


_NESTED_OR_FLOAT = frozenset((list, dict, float))
_NUMBERS = frozenset((int, float, bool))
_LONG = 16  # below it, trying hypot() (an exception where not numbers only) costs more than a loop


def _strings_only(items: Any) -> bool:
    """Whether `items` are strings only: `str.join` checks each in C (and copies the text)."""
    try:
        "".join(items)
    except TypeError:
        return False
    return True


def _numbers_in_range(items: Any) -> bool | None:
    """None where `items` are not numbers only, else whether no float is of 2**63 or more.

    A list of ints (its first item one) whose `sum` is an int holds no float: exact as orjson
    read it (ints of 64 bits). Otherwise `math.hypot`, at least the largest magnitude, runs in
    C without making objects (several times faster than `min` and `max`).
    """
    try:
        if type(next(iter(items))) is int and type(sum(items)) is int:
            return True
        return math.hypot(*items) < _FLOAT_FROM_BIG_INTEGER
    except TypeError:
        return None
    except OverflowError:  # an int beyond a double among floats: json.loads decides
        return False


def _json_loads_reaches(depth: int) -> bool:
    """Whether `json.loads`, called where `request_json` calls it, parses `depth` levels.

    Python 3.10 and 3.11 count each level against the recursion limit, as Python calls, so the
    answer depends on the stack in use; later versions count C recursion or stack space. Each
    level of arrays and of objects counts alike (`_json.c`'s `scan_once_unicode`). The scanner
    is called here directly, at the Python depth `json.loads` calls it from (`json.loads`,
    `JSONDecoder.decode` and `raw_decode` from `request_json`; `orjson_value` and this function
    here), with two levels more for safety: a doubt only sends the body to `json.loads`.
    """
    levels = depth + 2
    try:
        _scan_once(_OPEN[:levels] + _CLOSE[:levels], 0)
    except RecursionError:
        return False
    return True


# The C scanner json.loads runs (JSONDecoder sets it in __init__; typeshed leaves it out).
_scan_once: Callable[[str, int], tuple[Any, int]] = vars(json.JSONDecoder())["scan_once"]


Handler = Callable[[Request], Coroutine[Any, Any, Response]]


def parsing_json(
    handler: Handler, first_request: Callable[[Request], None] | None = None
) -> Handler:
    """Wrap a route's request handler so that `request.json()` is `request_json(request)`.

    FastAPI's handler awaits `request.json()` where the content type calls for it (its own rules,
    `strict_content_type` included), and so do dependencies and endpoints: all of them get the
    orjson parse, once. A request class with a `json()` of its own keeps it. The method is set
    on the request for the handler's run only, not to keep the request in a reference cycle.

    Args:
        handler: The route's request handler.
        first_request: Called with the first request the wrapped handler serves, before it.
    """
    pending = first_request

    async def parse_with_orjson(request: Request) -> Response:
        nonlocal pending
        if pending is not None:
            check, pending = pending, None
            check(request)
        if type(request).json is not Request.json:
            return await handler(request)
        attributes = vars(request)
        attributes["json"] = _RequestJSON(request)
        try:
            return await handler(request)
        finally:
            attributes.pop("json", None)

    return parse_with_orjson


class _RequestJSON:
    """`request.json` while a handler runs: `await request.json()` is `request_json(request)`."""

    __slots__ = ("_request",)

    def __init__(self, request: Request) -> None:
        self._request = request

    def __call__(self) -> Coroutine[Any, Any, Any]:
        return request_json(self._request)
