"""One endpoint, a JSON body or a stream as the request asks (``Body | ServerSentEvents[Item]``).

Each branch is compared with FastAPI's own answer to the endpoint written for it alone: a plain
endpoint returning the body, and a generator endpoint streaming the items.
"""

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Annotated, Any

import orjson
import pytest

pytest.importorskip("fastapi.sse", reason="FastAPI 0.135 streams Server-Sent Events")

from fastapi import APIRouter, BackgroundTasks, Depends, FastAPI, Response
from fastapi.exceptions import FastAPIError

from orjson_dispatch import DispatchRoute, JSONLines, ServerSentEvents, dispatch
from tests.orjson_dispatch.samples import ITEM, Item
from tests.orjson_dispatch.streams_harness import KINDS, Answer, assert_same_stream, call

MARKERS: dict[str, Any] = {"jsonl": JSONLines, "sse": ServerSentEvents}
LOG: list[str] = []


async def session() -> AsyncIterator[str]:
    LOG.append("open")
    yield "s1"
    LOG.append("close")


def note(tasks: BackgroundTasks, response: Response) -> None:
    response.status_code = 202
    response.headers["x-trace"] = "t1"
    tasks.add_task(LOG.append, "background")


async def items(s: str) -> AsyncIterator[Item]:
    for _ in range(2):
        LOG.append(f"item with {s}")
        yield ITEM


def body() -> dict[str, Any]:
    return {"name": "pen", "price": 1.5, "secret": "filtered"}


def build(kind: str) -> FastAPI:
    """FastAPI's two endpoints under /fastapi, the one endpoint under /dispatch."""
    marker = MARKERS[kind]
    fastapi, dispatch = (
        APIRouter(dependencies=[Depends(note)]),
        APIRouter(route_class=DispatchRoute, dependencies=[Depends(note)]),
    )

    @fastapi.get("/json")
    async def whole(s: Annotated[str, Depends(session)]) -> Item:
        return body()  # type: ignore[return-value]

    @fastapi.get("/stream", **KINDS[kind])
    async def streamed(s: Annotated[str, Depends(session)]) -> AsyncIterator[Item]:
        async for item in items(s):
            yield item

    @dispatch.get("/one")
    async def one(s: Annotated[str, Depends(session)], stream: bool = False) -> Item | marker[Item]:  # type: ignore[valid-type]
        return marker(items(s)) if stream else body()

    app = FastAPI()
    app.include_router(fastapi, prefix="/fastapi")
    app.include_router(dispatch, prefix="/dispatch")
    return app


def answers(app: FastAPI, fastapi_path: str, dispatch_path: str) -> list[tuple[Answer, list[str]]]:
    """Each side's answer (neither failing), and what its dependencies, items and tasks did."""
    result = []
    for path in (fastapi_path, dispatch_path):
        LOG.clear()
        answer = asyncio.run(call(app, "GET", path))
        assert answer.error is None, path
        result.append((answer, list(LOG)))
    return result


@pytest.mark.parametrize("kind", KINDS)
def test_json_branch_is_fastapis_answer_of_the_body(kind: str) -> None:
    (fastapi, fastapi_log), (ours, ours_log) = answers(
        build(kind), "/fastapi/json", "/dispatch/one"
    )
    assert (ours.status, ours.headers) == (fastapi.status, fastapi.headers)
    assert ours.status == 202
    assert orjson.loads(b"".join(ours.bodies)) == orjson.loads(b"".join(fastapi.bodies))
    assert b"secret" not in b"".join(ours.bodies)
    assert ours_log == fastapi_log
    assert sorted(ours_log) == ["background", "close", "open"]


@pytest.mark.parametrize("kind", KINDS)
def test_stream_branch_is_fastapis_stream_of_the_items(kind: str) -> None:
    (fastapi, fastapi_log), (ours, ours_log) = answers(
        build(kind), "/fastapi/stream", "/dispatch/one?stream=true"
    )
    assert ours.status == 202
    assert_same_stream(ours, fastapi, sse=kind == "sse")
    assert ours_log == fastapi_log
    assert ours_log[0] == "open"
    assert set(ours_log[-2:]) == {"close", "background"}


@pytest.mark.parametrize("kind", KINDS)
def test_openapi_shows_the_body_and_the_items_as_fastapi_documents_each(kind: str) -> None:
    document = build(kind).openapi()
    paths = document["paths"]

    def content(path: str) -> dict[str, Any]:
        return paths[path]["get"]["responses"]["200"]["content"]  # type: ignore[no-any-return]

    stream_type = MARKERS[kind].media_type
    ours = content("/dispatch/one")
    assert set(ours) == {"application/json", stream_type}
    assert ours["application/json"] == content("/fastapi/json")["application/json"]
    items_schema, fastapi_items = (
        orjson.dumps(c[stream_type]["itemSchema"]).replace(b"Dispatch_One", b"X")
        for c in (ours, content("/fastapi/stream"))
    )
    assert b"#/components/schemas/Item" in items_schema
    assert orjson.loads(items_schema).keys() == orjson.loads(fastapi_items).keys()


def test_sync_endpoint_returns_a_sync_generator_streamed_in_the_threadpool() -> None:
    def lines() -> Iterator[Item]:
        yield ITEM

    app = FastAPI()

    @app.get("/one", response_model=None)
    def one(stream: bool = False) -> Item | JSONLines[Item]:
        return JSONLines(lines()) if stream else ITEM

    app.router.routes[-1] = DispatchRoute("/one", one, methods=["GET"])
    whole = asyncio.run(call(app, "GET", "/one"))
    streamed = asyncio.run(call(app, "GET", "/one?stream=1"))
    assert orjson.loads(whole.bodies[0])["name"] == "pen"
    assert streamed.chunks == [b'{"name":"pen","Price":1.5,"tags":[],"note":null}\n']


def test_a_plain_route_refuses_the_stream_naming_dispatch_route() -> None:
    app = FastAPI()

    async def one() -> Item | ServerSentEvents[Item]:
        return ITEM

    with pytest.raises((TypeError, FastAPIError), match="DispatchRoute"):
        app.add_api_route("/one", one)


def _with_dispatch(kind: str, **options: Any) -> FastAPI:
    """FastAPI's two endpoints set ``exclude_none``; the one endpoint has ``@dispatch(...)``."""
    marker = MARKERS[kind]
    fastapi, ours = APIRouter(), APIRouter(route_class=DispatchRoute)

    @fastapi.get("/json", response_model_exclude_none=True)
    async def whole() -> Item:
        return ITEM

    @fastapi.get("/stream", response_model_exclude_none=True, **KINDS[kind])
    async def streamed() -> AsyncIterator[Item]:
        yield ITEM

    @ours.get("/one")
    @dispatch(**options)
    async def one(stream: bool = False) -> Item | marker[Item]:  # type: ignore[valid-type]
        async def tokens() -> AsyncIterator[Item]:
            yield ITEM

        return marker(tokens()) if stream else ITEM

    app = FastAPI()
    app.include_router(fastapi, prefix="/fastapi")
    app.include_router(ours, prefix="/dispatch")
    return app


@pytest.mark.parametrize("kind", KINDS)
def test_dispatch_options_apply_to_both_branches(kind: str) -> None:
    app = _with_dispatch(kind, exclude_none=True)
    for fastapi_path, ours_path in [("/json", "/one"), ("/stream", "/one?stream=1")]:
        (fastapi, _), (ours, _) = answers(app, f"/fastapi{fastapi_path}", f"/dispatch{ours_path}")
        assert fastapi.error is None
        assert ours.error is None
        assert ours.status == fastapi.status == 200
        assert b"note" not in b"".join(fastapi.bodies)
        if fastapi_path == "/json":
            assert orjson.loads(b"".join(ours.bodies)) == orjson.loads(b"".join(fastapi.bodies))
        else:
            assert_same_stream(ours, fastapi, sse=kind == "sse")


@pytest.mark.parametrize("option", [{"status_code": 201}, {"option": orjson.OPT_INDENT_2}])
def test_dispatch_options_a_stream_cannot_honour_are_refused_naming_the_endpoint(
    option: dict[str, Any],
) -> None:
    with pytest.raises(TypeError, match=r"dispatch\(.*\).*one"):
        _with_dispatch("sse", **option)


@pytest.mark.parametrize("kind", KINDS)
def test_sorted_keys_apply_to_both_branches(kind: str) -> None:
    app = _with_dispatch(kind, option=orjson.OPT_SORT_KEYS)
    for path in ("/one", "/one?stream=1"):
        answer = asyncio.run(call(app, "GET", f"/dispatch{path}"))
        assert answer.error is None
        body = b"".join(answer.bodies).removeprefix(b"data: ")
        assert body.startswith(b'{"Price":1.5,"name":"pen","note":null,"tags":[]}'), body


def test_a_server_sent_event_subclass_item_is_no_data_as_under_fastapi() -> None:
    """FastAPI documents no item schema for items of a `ServerSentEvent` subclass."""
    from fastapi.sse import EventSourceResponse, ServerSentEvent

    class Tick(ServerSentEvent):
        pass

    app, router = FastAPI(), APIRouter(route_class=DispatchRoute)

    @app.get("/fastapi", response_class=EventSourceResponse)
    async def ticks() -> AsyncIterator[Tick]:
        yield Tick(data=ITEM, event="tick")

    @router.get("/one")
    async def one() -> Item | ServerSentEvents[Tick]:
        return ServerSentEvents(ticks())

    app.include_router(router)
    document = app.openapi()
    ours, fastapi = (
        document["paths"][path]["get"]["responses"]["200"]["content"]["text/event-stream"]
        for path in ("/one", "/fastapi")
    )
    assert ours == fastapi
    assert "Tick" not in document["components"]["schemas"]
