"""JSON Lines and Server-Sent Events of generator endpoints under ``DispatchRoute``, vs FastAPI.

Each endpoint is served by a plain ``APIRoute`` and by a ``DispatchRoute`` (``Twin``) and called
through the app's ASGI interface (``streams_harness``): the two answers must have the same
status, the same headers and the same events.
"""

import asyncio
import dataclasses
import logging
from collections.abc import AsyncIterable, AsyncIterator
from typing import Annotated, Any

import orjson
import pytest

pytest.importorskip("fastapi.sse", reason="FastAPI 0.135 streams Server-Sent Events")

from fastapi import Depends, FastAPI, Response
from fastapi.exceptions import ResponseValidationError
from fastapi.sse import ServerSentEvent
from hypothesis import event, given, note, settings

from orjson_dispatch import DispatchRoute, dispatch
from tests.orjson_dispatch.apps import UNTYPED, Twin, get_all
from tests.orjson_dispatch.samples import ITEM, Item
from tests.orjson_dispatch.strategies import examples
from tests.orjson_dispatch.strategies.streams import StreamCase, generator, stream_cases
from tests.orjson_dispatch.strategies.unvalidated import holds_unvalidated
from tests.orjson_dispatch.streams_harness import (
    KINDS,
    SSE,
    Answer,
    Seen,
    assert_same_stream,
    assert_streamed_alike,
    both,
    call,
    innermost,
    raw_events,
    shape,
)

# --- items ---------------------------------------------------------------------------------------

TYPED_ITEMS = [
    ITEM,
    {"name": "caf\u00e9 \u2603", "price": 2, "tags": ["a"]},
    Item(name="", price=0),
]
UNTYPED_ITEMS = [
    {"text": "caf\u00e9 \u2603 \U0001f600", "n": [1, 2.5, None, True], "nan": float("nan")},
    "a string",
    [1, {"nested": {"deep": []}}],
    42,
    ITEM,
]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("typed", [True, False], ids=["typed", "untyped"])
@pytest.mark.parametrize("is_async", [True, False], ids=["async", "sync"])
def test_items_are_streamed_like_fastapi(
    kind: str, typed: bool, is_async: bool, route_twin: Twin
) -> None:
    items = TYPED_ITEMS if typed else UNTYPED_ITEMS
    annotation = Item if typed else UNTYPED
    assert_streamed_alike(route_twin, items, kind, annotation=annotation, is_async=is_async)


@pytest.mark.parametrize("kind", KINDS)
def test_untyped_item_with_a_lone_surrogate_is_sent_escaped(kind: str, route_twin: Twin) -> None:
    items: list[Any] = ["\ud800", {"key": "x\udfff"}]
    if kind == "sse":
        items.append(ServerSentEvent(data="\ud800"))
    route_twin.add("GET", "/u", generator(items), **KINDS[kind])
    fastapi, ours = both(route_twin, "/u")
    assert fastapi.error is None
    assert b"\\ud800" in fastapi.chunks[0]
    assert ours.error is None
    assert_same_stream(ours, fastapi, sse=kind == "sse")


@pytest.mark.parametrize("kind", KINDS)
def test_untyped_item_with_a_non_finite_float_key_is_sent(kind: str, route_twin: Twin) -> None:
    items: list[Any] = [{float("nan"): 1, float("-inf"): 2}]
    if kind == "sse":
        items.append(ServerSentEvent(data={float("inf"): None}))
    route_twin.add("GET", "/k", generator(items), **KINDS[kind])
    fastapi, ours = both(route_twin, "/k")
    assert fastapi.error is None
    assert ours.error is None
    assert_same_stream(ours, fastapi, sse=kind == "sse")


EVENTS = [
    ITEM,
    ServerSentEvent(data=ITEM),
    ServerSentEvent(data={"caf\u00e9": [1, 2.5], "none": None}, event="update", id="7"),
    ServerSentEvent(data="a string", retry=3000),
    ServerSentEvent(raw_data="[DONE]"),
    ServerSentEvent(raw_data="two\nlines", event="raw"),
    ServerSentEvent(comment="a comment\non two lines", data=[1, 2]),
    ServerSentEvent(comment="only a comment"),
    ServerSentEvent(id="", event=""),
    {"name": "from a dict", "price": 1},
]


@pytest.mark.parametrize("typed", [True, False], ids=["typed", "untyped"])
@pytest.mark.parametrize("is_async", [True, False], ids=["async", "sync"])
def test_server_sent_event_items_give_their_fields(
    typed: bool, is_async: bool, route_twin: Twin
) -> None:
    endpoint = generator(EVENTS, annotation=Item if typed else UNTYPED, is_async=is_async)
    route_twin.add("GET", "/e", endpoint, **SSE)
    fastapi, ours = both(route_twin, "/e")
    assert fastapi.error is None
    assert ours.error is None
    assert_same_stream(ours, fastapi, sse=True, raw=raw_events(EVENTS))
    assert b"data: [DONE]\n\n" in ours.chunks
    assert b": a comment\n: on two lines\ndata: [1,2]\n\n" in ours.chunks


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    "options",
    [
        {"response_model_exclude": {"tags"}},
        {"response_model_include": {"name", "note"}},
        {"response_model_by_alias": False},
        {"response_model_exclude_none": True},
        {"response_model_exclude_unset": True, "response_model_exclude_defaults": True},
    ],
    ids=",".join,
)
def test_response_model_settings_filter_the_items(
    kind: str, options: dict[str, Any], route_twin: Twin
) -> None:
    route_twin.add("GET", "/f", generator(TYPED_ITEMS, annotation=Item), **options, **KINDS[kind])
    route_twin.add("GET", "/all", generator(TYPED_ITEMS, annotation=Item), **KINDS[kind])
    fastapi, ours = both(route_twin, "/f")
    assert_same_stream(ours, fastapi, sse=kind == "sse")
    assert fastapi.chunks != both(route_twin, "/all")[0].chunks  # the settings filter


@pytest.mark.parametrize("kind", KINDS)
def test_untyped_items_ignore_the_response_model_settings(kind: str, route_twin: Twin) -> None:
    route_twin.add("GET", "/u", generator([ITEM]), response_model_exclude={"name"}, **KINDS[kind])
    fastapi, ours = both(route_twin, "/u")
    assert b'"pen"' in fastapi.chunks[0]
    assert_same_stream(ours, fastapi, sse=kind == "sse")


def _failing_stream(seen: Seen, failure: Any) -> Any:
    async def stream() -> AsyncIterable[Item]:
        yield ITEM
        await seen.wait()  # the first event is on the wire before the failure
        if isinstance(failure, BaseException):
            raise failure
        yield failure
        yield ITEM  # never sent

    return stream


@pytest.mark.usefixtures("fresh_endpoint_context")
@pytest.mark.parametrize("kind", KINDS)
def test_item_failing_validation_ends_the_stream_as_under_fastapi(
    kind: str, route_twin: Twin
) -> None:
    seen = Seen()
    route_twin.add("GET", "/v", _failing_stream(seen, {"name": 1}), **KINDS[kind])
    fastapi, ours = both(route_twin, "/v", seen)
    assert_same_stream(ours, fastapi, sse=kind == "sse")
    assert len(ours.chunks) == 1
    assert shape(ours.error) == shape(fastapi.error)
    fastapi_error, ours_error = innermost(fastapi.error), innermost(ours.error)
    assert isinstance(fastapi_error, ResponseValidationError)
    assert isinstance(ours_error, ResponseValidationError)
    assert str(ours_error) == str(fastapi_error).replace("/fastapi/v", "/dispatch/v")
    assert "in stream" in str(ours_error)  # the endpoint's function, as FastAPI names it


@pytest.mark.parametrize("kind", KINDS)
def test_exception_mid_stream_ends_the_stream_as_under_fastapi(kind: str, route_twin: Twin) -> None:
    seen = Seen()
    route_twin.add("GET", "/x", _failing_stream(seen, RuntimeError("boom")), **KINDS[kind])
    fastapi, ours = both(route_twin, "/x", seen)
    assert_same_stream(ours, fastapi, sse=kind == "sse")
    assert len(ours.chunks) == 1
    assert shape(ours.error) == shape(fastapi.error)
    assert str(innermost(ours.error)) == "boom"


# --- status, headers, dependencies ---------------------------------------------------------------


def _set_on_response(response: Response) -> None:
    response.status_code = 202
    response.headers["x-trace"] = "t1"
    response.set_cookie("session", "abc")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("where", ["route", "dependency", "dependency-and-endpoint"])
def test_status_and_headers_of_the_route_and_the_injected_response(
    kind: str, where: str, route_twin: Twin
) -> None:
    async def stream() -> AsyncIterable[Item]:
        yield ITEM

    async def stream_with_response(response: Response) -> AsyncIterable[Item]:
        yield ITEM

    dependencies = [] if where == "route" else [Depends(_set_on_response)]
    endpoint = stream_with_response if where == "dependency-and-endpoint" else stream
    route_twin.add("GET", "/h", endpoint, status_code=201, dependencies=dependencies, **KINDS[kind])
    fastapi, ours = both(route_twin, "/h")
    assert fastapi.status == (201 if where == "route" else 202)
    assert_same_stream(ours, fastapi, sse=kind == "sse")


@pytest.mark.parametrize("kind", KINDS)
def test_dependency_with_yield_is_closed_when_fastapi_closes_it(
    kind: str, route_twin: Twin
) -> None:
    log: list[str] = []

    async def session() -> AsyncIterator[str]:
        log.append("open")
        yield "s1"
        log.append("close")

    async def stream(s: Annotated[str, Depends(session)]) -> AsyncIterable[Item]:
        for index in range(2):
            log.append(f"yield {index} with {s}")
            yield ITEM
        log.append("generator done")

    def sent(body: bytes) -> bool:
        log.extend(["sent"] * body.count(b'"pen"'))  # one per event, however grouped
        return False

    route_twin.add("GET", "/d", stream, **KINDS[kind])
    marks = []

    def request(method: str, path: str) -> Answer:
        marks.append(len(log))
        return asyncio.run(call(route_twin.app, method, path, Seen(sent)))

    route_twin.both("GET", "/d", via=request)
    # When the generator runs relative to the sends is FastAPI's scheduling (its Server-Sent
    # Events are produced one ahead); when the dependency opens and closes is the behaviour.
    fastapi_log, ours_log = (
        [entry for entry in part if not entry.startswith(("yield", "generator"))]
        for part in (log[marks[0] : marks[1]], log[marks[1] :])
    )
    assert ours_log == fastapi_log == ["open", "sent", "sent", "close"]


# --- @dispatch outside DispatchRoute ------------------------------------------------------------


@pytest.mark.parametrize("is_async", [True, False], ids=["async", "sync"])
def test_a_decorated_generator_is_streamed_by_fastapi_with_one_warning(
    is_async: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """Under a plain ``APIRoute``, FastAPI streams the decorated generator as it is."""
    endpoint = generator(TYPED_ITEMS, annotation=Item, is_async=is_async)
    app = FastAPI()
    app.add_api_route("/plain", endpoint)
    app.add_api_route("/decorated", dispatch(endpoint))
    with caplog.at_level(logging.WARNING, logger="orjson_dispatch"):
        plain, first, again = get_all(app, "/plain", "/decorated", "/decorated")
    assert plain.status_code == first.status_code == again.status_code == 200
    assert plain.headers["content-type"] == first.headers["content-type"]
    assert plain.content.count(b"\n") == len(TYPED_ITEMS)
    assert plain.content == first.content == again.content
    warnings = [record.getMessage() for record in caplog.records]
    assert warnings == [
        f"the generator endpoint {endpoint.__module__}.{endpoint.__qualname__} is streamed by "
        "FastAPI itself; serve it with orjson_dispatch.DispatchRoute to stream it with orjson"
    ]


# --- OpenAPI -------------------------------------------------------------------------------------


def test_openapi_document_is_identical() -> None:
    def build(route_class: Any) -> FastAPI:
        app = FastAPI(title="t")
        if route_class is not None:
            app.router.route_class = route_class
        app.add_api_route("/jsonl", generator([], annotation=Item))
        app.add_api_route("/sse", generator([], annotation=Item), **SSE)
        app.add_api_route("/untyped", generator([]), **SSE)
        app.add_api_route("/sync", generator([], annotation=Item, is_async=False), **SSE)
        return app

    plain, ours = build(None), build(DispatchRoute)
    document = orjson.dumps(plain.openapi(), option=orjson.OPT_SORT_KEYS)
    assert orjson.dumps(ours.openapi(), option=orjson.OPT_SORT_KEYS) == document
    assert b"itemSchema" in document


# --- hypothesis ----------------------------------------------------------------------------------


@settings(max_examples=examples(100))
@given(case=stream_cases(events=False))
def test_generated_json_lines_stream_like_fastapi(case: StreamCase) -> None:
    _check(case, sse=False)


@settings(max_examples=examples(100))
@given(case=stream_cases(events=True))
def test_generated_server_sent_events_stream_like_fastapi(case: StreamCase) -> None:
    _check(case, sse=True)


def _check(case: StreamCase, *, sse: bool) -> None:
    note(f"items: {case.items!r}")
    twin = Twin(route_class=DispatchRoute)
    twin.add("GET", "/g", case.endpoint(), **case.options, **(SSE if sse else {}))
    fastapi, ours = both(twin, "/g")
    note(f"FastAPI: {fastapi.chunks!r} {fastapi.error!r}")
    note(f"DispatchRoute: {ours.chunks!r} {ours.error!r}")
    if fastapi.error is not None:
        # FastAPI failed on an item: the events before it are the same, and ours fail too
        # unless on purpose (values FastAPI's encoders cannot copy or encode).
        event(f"FastAPI fails: {shape(fastapi.error)}")
        count = len(fastapi.chunks)
        assert_same_stream(
            dataclasses.replace(ours, chunks=ours.chunks[:count]),
            fastapi,
            sse=sse,
            raw=raw_events(case.items),
            held=holds_unvalidated(case.items),
        )
        return
    assert ours.error is None, ours.error
    held = holds_unvalidated(case.items)
    assert_same_stream(ours, fastapi, sse=sse, raw=raw_events(case.items), held=held)
