"""Streams of the openai SDK's ``ChatCompletionChunk`` and of the anthropic SDK's
``RawMessageStreamEvent`` (a tagged union; ``sdk_corpus``), sent as FastAPI sends them.

JSON Lines and Server-Sent Events, the item type declared or not, the chunks validated or built
by the SDK's own ``construct``: through the app's ASGI interface under ``DispatchRoute``
(``streams_harness``), and over a real uvicorn server under ``@dispatch`` and ``DispatchRoute``,
read by a raw socket up to the chunked terminator.
"""

import socket
from typing import Any

import pytest

# The corpus is made of the SDKs' types (a corpus broken otherwise fails tests/benchmarks).
pytest.importorskip("bodies.sdk_corpus", reason="needs the openai and anthropic SDKs")
pytest.importorskip("fastapi.sse", reason="FastAPI 0.135 streams Server-Sent Events")

from anthropic.types import RawMessageStreamEvent
from pydantic import TypeAdapter
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

from bodies.sdk_corpus import (
    BUILT,
    Built,
    ChatCompletionChunk,
    anthropic_stream,
    build,
    chat_chunks,
)
from orjson_dispatch import DispatchRoute, json_lines, server_sent_events
from tests.orjson_dispatch.apps import UNTYPED, LiveServer, Twin
from tests.orjson_dispatch.strategies.streams import generator
from tests.orjson_dispatch.streams_harness import KINDS, assert_same_line, assert_streamed_alike


def chunks(built: Built) -> list[ChatCompletionChunk]:
    return [build(ChatCompletionChunk, data, built) for data in chat_chunks(count=6)]


@pytest.mark.parametrize("built", BUILT)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("typed", [True, False], ids=["typed", "untyped"])
def test_chunk_stream_is_sent_like_fastapi(
    built: Built, kind: str, typed: bool, route_twin: Twin
) -> None:
    annotation = ChatCompletionChunk if typed else UNTYPED
    assert_streamed_alike(route_twin, chunks(built), kind, annotation=annotation)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("typed", [True, False], ids=["typed", "untyped"])
def test_anthropic_event_stream_is_sent_like_fastapi(
    kind: str, typed: bool, route_twin: Twin
) -> None:
    events: TypeAdapter[Any] = TypeAdapter(RawMessageStreamEvent)
    items = [events.validate_python(event) for event in anthropic_stream()]
    annotation = RawMessageStreamEvent if typed else UNTYPED
    assert_streamed_alike(route_twin, items, kind, annotation=annotation)


def raw_get(base_url: str, path: str) -> tuple[bytes, bytes]:
    """GET ``path`` over a raw socket; return the head and the de-chunked body, read up to the
    chunked terminator (RFC 9112 section 7.1)."""
    host, port = base_url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
        received = b""
        while not received.endswith(b"\r\n0\r\n\r\n"):
            data = sock.recv(65536)
            assert data, f"connection closed before the chunked terminator: {received[-200:]!r}"
            received += data
    head, _, rest = received.partition(b"\r\n\r\n")
    body = b""
    while True:
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            return head, body
        body, rest = body + rest[:size], rest[size + 2 :]


def undated(head: bytes) -> list[bytes]:
    return [line for line in head.split(b"\r\n") if not line.lower().startswith(b"date:")]


@pytest.mark.parametrize("route_class", [None, DispatchRoute], ids=["dispatch", "DispatchRoute"])
def test_chunk_stream_over_a_real_server(
    route_class: type[DispatchRoute] | None, live_server: LiveServer
) -> None:
    twin = Twin(route_class=route_class)
    items: list[Any] = chunks("constructed")
    twin.add("GET", "/typed", generator(items, annotation=ChatCompletionChunk))
    twin.add("GET", "/untyped", generator(items))
    base_url = live_server(twin.app)
    for path in ("/typed", "/untyped"):
        (fastapi_head, fastapi), (ours_head, ours) = twin.both(
            "GET", path, via=lambda method, url: raw_get(base_url, url)
        )
        assert ours_head.startswith(b"HTTP/1.1 200 OK\r\n")
        # The same headers in the same order, but the server's clock.
        assert undated(ours_head) == undated(fastapi_head)
        lines = ours.splitlines(keepends=True)
        assert len(lines) == len(items)
        for line, expected in zip(lines, fastapi.splitlines(keepends=True), strict=True):
            assert_same_line(line, expected)


@pytest.mark.parametrize("built", BUILT)
@pytest.mark.parametrize("typed", [True, False], ids=["typed", "untyped"])
def test_a_hand_built_stream_moved_to_the_helpers_sends_the_same_bytes(
    built: Built, typed: bool, live_server: LiveServer
) -> None:
    """A model server's hand-built streams of ``model_dump_json()``, and the helpers' own.

    ``server_sent_events(bare=True)`` and ``json_lines`` send the same status line, headers (in
    the same order) and body over uvicorn, read to the chunked terminator.
    """
    items = [build(ChatCompletionChunk, data, built) for data in chat_chunks(count=64)]
    model: dict[str, Any] = {"response_model": ChatCompletionChunk} if typed else {}

    async def hand_built_events(request: Request) -> StreamingResponse:
        return StreamingResponse(
            (f"data: {c.model_dump_json()}\n\n" for c in items), media_type="text/event-stream"
        )

    async def hand_built_lines(request: Request) -> StreamingResponse:
        return StreamingResponse(
            (c.model_dump_json() + "\n" for c in items), media_type="application/x-ndjson"
        )

    async def helper_events(request: Request) -> StreamingResponse:
        return server_sent_events(items, **model, bare=True)

    async def helper_lines(request: Request) -> StreamingResponse:
        return json_lines(items, **model, media_type="application/x-ndjson")

    base_url = live_server(
        Starlette(
            routes=[
                Route("/hand-built/events", hand_built_events),
                Route("/hand-built/lines", hand_built_lines),
                Route("/helper/events", helper_events),
                Route("/helper/lines", helper_lines),
            ]
        )
    )
    for stream in ("events", "lines"):
        hand_built_head, hand_built = raw_get(base_url, f"/hand-built/{stream}")
        ours_head, ours = raw_get(base_url, f"/helper/{stream}")
        assert undated(ours_head) == undated(hand_built_head)
        assert ours == hand_built
        assert ours.count(b"chatcmpl-") == len(items)
