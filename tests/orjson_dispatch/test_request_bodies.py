"""JSON request bodies: a `DispatchRoute` parses them with orjson, with FastAPI's answers.

Each body is posted to one app, to an `APIRoute` and to a `DispatchRoute` endpoint that answers
an exact description of the value it got (`fingerprint`: types, key order, float bits, lone
surrogates): the two answers (status and body, FastAPI's 422 ``json_invalid`` and 400 included)
must be equal. Whether orjson parsed is seen by counting ``json.loads`` calls on the body.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Annotated, Any

import httpx
import pytest
from fastapi import Body, Depends, FastAPI, Request
from fastapi.responses import PlainTextResponse
from hypothesis import event, given, note, settings
from orjson_dispatch._route import DispatchRoute

from orjson_dispatch import _request_body
from tests.orjson_dispatch.apps import Twin, ask
from tests.orjson_dispatch.strategies import examples
from tests.orjson_dispatch.strategies.request_bodies import HOSTILE_BODIES, json_bodies

JSON = {"content-type": "application/json"}
SMALL = _request_body._SMALL


@pytest.fixture(autouse=True, scope="module")
def orjson_at_every_size() -> Iterator[None]:
    """Let orjson parse bodies of any size (json.loads parses those of up to 2 KB)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_request_body, "_SMALL", -1)
        yield


def fingerprint(value: Any) -> str:
    """Describe `value` exactly, without recursion (values nest deeper than repr can go)."""
    lines: list[str] = []
    pending: list[Any] = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, _Key):
            lines.append(f"key {item.name!a}")
        elif type(item) is list:
            lines.append(f"list {len(item)}")
            pending.extend(reversed(item))
        elif type(item) is dict:
            lines.append(f"dict {len(item)}")
            for name, child in reversed(item.items()):
                pending.extend((child, _Key(name)))
        elif type(item) is float:
            lines.append(f"float {item.hex()}")
        else:
            lines.append(f"{type(item).__name__} {item!a}")
    return "\n".join(lines)


class _Key:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


async def echo(body: Annotated[Any, Body()]) -> PlainTextResponse:
    """Answer the fingerprint of the body FastAPI gives the endpoint."""
    return PlainTextResponse(fingerprint(body))


def _twin(**settings: Any) -> Twin:
    twin = Twin(FastAPI(**settings), DispatchRoute)
    twin.add("POST", "", echo)
    return twin


TWIN = _twin()


def both(body: bytes, twin: Twin = TWIN, **kwargs: Any) -> tuple[httpx.Response, httpx.Response]:
    """FastAPI's answer and DispatchRoute's to `body` (JSON unless told), in that order."""
    kwargs.setdefault("headers", JSON)
    return twin.both("POST", "", content=body, **kwargs)


def assert_same(fastapi: httpx.Response, ours: httpx.Response) -> None:
    """The same status, content type and body."""
    assert (ours.status_code, ours.headers.get("content-type"), ours.content) == (
        fastapi.status_code,
        fastapi.headers.get("content-type"),
        fastapi.content,
    ), f"FastAPI: {fastapi.status_code} {fastapi.text[:300]!r}"


@pytest.fixture
def loads_calls(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """The documents `json.loads` is called with (bytes ones: the bodies) during the test."""
    calls: list[bytes] = []
    original = json.loads

    def counting(document: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(document, bytes):
            calls.append(document)
        return original(document, *args, **kwargs)

    monkeypatch.setattr(json, "loads", counting)
    return calls


@pytest.mark.parametrize("name", sorted(HOSTILE_BODIES))
def test_hostile_body_answers_as_fastapi(name: str) -> None:
    assert_same(*both(HOSTILE_BODIES[name]))


@settings(max_examples=examples(300))
@given(body=json_bodies())
def test_any_body_answers_as_fastapi(body: bytes) -> None:
    note(f"body: {body!r}")
    fastapi, ours = both(body)
    event(f"FastAPI answers {fastapi.status_code}")
    assert_same(fastapi, ours)


@pytest.mark.parametrize(
    "body",
    [
        b'{"a": [1, 2.5, "x", null, true, {"b": -0}], "c": "\\u00e9\\ud83d\\ude00"}',
        b"[" * 20 + b"]" * 20,
        b'{"stop": [' + b'"a",' * 16 + b'"b"], "logit_bias": {' + b'"1": -1.5,' * 16 + b'"2": 0}}',
        b'{"tags": [' + b'"a",null,' * 16 + b'{"deep": [[1]]}]}',
    ],
)
def test_orjson_parses_a_json_body(body: bytes, loads_calls: list[bytes]) -> None:
    fastapi, ours = both(body)
    assert_same(fastapi, ours)
    assert loads_calls == [body], "json.loads parsed the body for FastAPI only"


@pytest.mark.parametrize(
    "name",
    [
        "NaN",
        "integer beyond u64",
        "integer beyond u64 after 16 integers",
        "integer beyond u64 in a list after 16 strings",
        "integer beyond u64 after 16 strings and null",
        "UTF-8 byte order mark",
        "truncated",
    ],
)
def test_json_loads_answers_where_orjson_could_differ(name: str, loads_calls: list[bytes]) -> None:
    assert_same(*both(HOSTILE_BODIES[name]))
    assert loads_calls == [HOSTILE_BODIES[name]] * 2


def test_json_loads_parses_bodies_of_up_to_2_kb(
    loads_calls: list[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_request_body, "_SMALL", SMALL)
    small, large = (b'{"a": "' + b"x" * size + b'"}' for size in (SMALL - 9, SMALL - 8))
    assert len(small) == SMALL
    for body in (small, large):
        assert_same(*both(body))
    assert loads_calls == [small, small, large]


def _nested(depth: int) -> bytes:
    return b'{"a":' + b"[" * (depth - 1) + b"]" * (depth - 1) + b"}"


def _deepest_parsed(answer: int) -> int:
    """The deepest nesting parsed by FastAPI (answer 0) or DispatchRoute (1), from one depth."""
    low, high = 1, 20_000
    while low < high:
        middle = (low + high + 1) // 2
        parsed = both(_nested(middle))[answer].status_code == 200
        low, high = (middle, high) if parsed else (low, middle - 1)
    return low


def test_nesting_answers_as_fastapi_around_its_recursion_limit() -> None:
    # FastAPI's json.loads stops where the stack meets Python's recursion limit (about 950
    # levels on Python 3.11, further on later versions). On Python 3.10 and 3.11 the frame of
    # DispatchRoute's handler wrapper counts against the same limit: one level fewer.
    low = _deepest_parsed(0)
    assert _deepest_parsed(1) == low - (1 if sys.version_info < (3, 12) else 0)
    for depth in sorted({low - 1, low + 1, low + 2, 1024, 1025}):
        _assert_same_at(depth, low)


def _assert_same_at(depth: int, low: int) -> None:
    fastapi, ours = both(_nested(depth))  # at the stack depth of _deepest_parsed's
    assert ours.status_code == fastapi.status_code, f"depth {depth}, FastAPI's limit {low}"
    assert_same(fastapi, ours)


@pytest.mark.parametrize(
    "content_type",
    [
        None,
        "application/json",
        "application/json; charset=utf-8",
        "application/vnd.api+json",
        "application/geo+json; charset=latin-1",
        "APPLICATION/JSON",
        "text/plain",
        "application/x-www-form-urlencoded",
        "application/jsonx",
        "text/json",
    ],
)
@pytest.mark.parametrize("strict", [None, True, False])
def test_content_type_rules_are_fastapi_s(content_type: str | None, strict: bool | None) -> None:
    settings = {} if strict is None else {"strict_content_type": strict}
    try:
        twin = _twin(**settings)
    except TypeError:
        pytest.skip("this FastAPI has no strict_content_type setting")
    headers = {} if content_type is None else {"content-type": content_type}
    for body in (b'{"a": [1, 2]}', b"[NaN]", b"{"):
        assert_same(*both(body, twin, headers=headers))


_seen: list[Any] = []


async def reads_json(request: Request) -> Any:
    """A dependency awaiting the body's JSON value."""
    value = await request.json()
    _seen.append(value)
    return value


async def reads_twice(
    request: Request,
    body: Annotated[dict[str, Any], Body()],
    read: Annotated[Any, Depends(reads_json)],
) -> Any:
    """An endpoint with a body, a dependency reading the JSON value, and its own read."""
    _seen.append(await request.json())
    return {"body": body, "same": all(value is _seen[0] for value in _seen)}


def test_dependencies_and_the_endpoint_get_one_parse(loads_calls: list[bytes]) -> None:
    _seen.clear()
    app = FastAPI()
    app.router.add_api_route("/", reads_twice, methods=["POST"], route_class_override=DispatchRoute)
    answer = ask(app, "POST", "/", content=b'{"a": [1, 2]}', headers=JSON)
    assert loads_calls == [], "json.loads parsed the body"
    assert answer.json() == {"body": {"a": [1, 2]}, "same": True}
    assert len(_seen) == 2


def test_a_form_body_is_fastapi_s() -> None:
    pytest.importorskip("multipart")
    from fastapi import Form

    async def form(name: Annotated[str, Form()]) -> dict[str, str]:
        return {"name": name}

    twin = Twin(route_class=DispatchRoute)
    twin.add("POST", "", form)
    for data in ({"name": "x"}, {}):
        assert_same(*both(b"", twin, data=data, headers={}))


def test_a_body_size_limit_is_fastapi_s() -> None:
    try:
        twin = _twin(max_body_size=64)
    except TypeError:
        pytest.skip("this FastAPI has no max_body_size setting")
    for size in (10, 64, 65, 1000):
        assert_same(*both(b'"' + b"x" * size + b'"', twin))


def test_a_request_class_with_its_own_json_keeps_it() -> None:
    class Request42(Request):
        async def json(self) -> Any:
            return 42

    class Route42(DispatchRoute):
        def get_route_handler(self) -> Any:
            handler = super().get_route_handler()

            async def with_request_42(request: Request) -> Any:
                return await handler(Request42(request.scope, request.receive))

            return with_request_42

    app = FastAPI()
    app.router.add_api_route("/", echo, methods=["POST"], route_class_override=Route42)
    assert ask(app, "POST", "/", content=b'{"a": 1}', headers=JSON).text == "int 42"


def test_a_large_body_over_a_real_server(live_server: Any) -> None:
    body = json.dumps(
        {"ids": list(range(50_000)), "logprobs": [-i / 7 for i in range(20_000)], "big": 2**70}
    ).encode()
    with httpx.Client(base_url=live_server(TWIN.app)) as client:
        answers = both(body, via=client.request)
    assert answers[0].status_code == 200
    assert_same(*answers)
