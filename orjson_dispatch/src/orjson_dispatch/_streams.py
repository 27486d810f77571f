"""JSON Lines and Server-Sent Events streams of generator endpoints, one orjson call per event.

FastAPI (0.134 JSON Lines, 0.135 Server-Sent Events) streams what a generator endpoint yields:
each item validated against the declared item type and serialized, one JSON document per line,
or one `data:` event per item (`ServerSentEvent` items give their own fields), with a `: ping`
comment after 15 s without an event. Its Server-Sent Events pass every event through two memory
streams, a cancel scope and a checkpoint. Here each event is encoded and sent at once: a
checkpoint after each quarter of a millisecond of work keeps a generator that never waits
cancellable and fair to other streams, and one task per stream sends the pings.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import anyio
from starlette.concurrency import iterate_in_threadpool
from starlette.responses import StreamingResponse
from starlette.types import Send

from orjson_dispatch._dumps import UNTYPED
from orjson_dispatch._options import DEFAULTS
from orjson_dispatch._typed import typed_encoder
from orjson_dispatch._untyped import encode_untyped

__all__ = [
    "EventStream",
    "event_bodies",
    "json_line_bodies",
    "json_lines",
    "server_sent_event",
    "server_sent_events",
]

# How long a stream may run without giving the event loop a turn, so that a disconnected
# client's stream is cancelled, and other streams are served, even when neither the generator nor
# the socket ever waits. FastAPI checkpoints after every event for this (fastapi/fastapi#14680),
# which costs about a third of the time per event here; a quarter of a millisecond keeps that
# cost below the noise and the time between events of 32 such streams within a few times
# FastAPI's (benchmarks/results/notes.md).
_CHECKPOINT_SECONDS = 0.00025


async def _framed(items: Any, frame: Callable[[Any], bytes]) -> AsyncIterator[bytes]:
    """Yield `frame(item)` for each item of an async generator, or of a sync one in threads.

    An async generator is closed when the stream ends, however it ends: a stream cancelled
    while the generator waits at a `yield` would otherwise leave it suspended until garbage
    collection, where FastAPI's request teardown closes it.
    """
    # Sync generators run in the threadpool, one item at a time, as FastAPI runs them.
    source = items if hasattr(items, "__aiter__") else iterate_in_threadpool(items)
    deadline = time.monotonic() + _CHECKPOINT_SECONDS
    try:
        async for item in source:
            yield frame(item)
            if time.monotonic() >= deadline:
                await anyio.sleep(0)
                deadline = time.monotonic() + _CHECKPOINT_SECONDS
    finally:
        close = getattr(items, "aclose", None)
        if close is not None:
            with anyio.CancelScope(shield=True):
                await close()


def json_line_bodies(items: Any, encode: Callable[[Any], bytes]) -> AsyncIterator[bytes]:
    """Yield one JSON document and a newline per item."""
    return _framed(items, lambda item: encode(item) + b"\n")


def event_bodies(items: Any, encode: Callable[[Any], bytes]) -> AsyncIterator[bytes]:
    """Yield one Server-Sent Event per item.

    Args:
        items: The generator.
        encode: Returns the JSON of a plain item, sent as the event's `data:` line.
    """
    event_class = _server_sent_event_class()

    def frame(item: Any) -> bytes:
        if event_class is not None and isinstance(item, event_class):
            return server_sent_event(item)  # type: ignore[return-value]
        # A JSON document holds no line break: it is the one `data:` line of its event.
        return b"data: " + encode(item) + b"\n\n"

    return _framed(items, frame)


class EventStream(StreamingResponse):
    """A `text/event-stream` response that sends `ping` after `ping_interval` s without events.

    Args:
        content: The events, each already on the wire format.
        ping: The comment sent during silence.
        ping_interval: Seconds without an event before a ping (and between pings).
        **kwargs: As for `StreamingResponse`.
    """

    media_type = "text/event-stream"

    def __init__(
        self, content: AsyncIterator[bytes], *, ping: bytes, ping_interval: float, **kwargs: Any
    ) -> None:
        super().__init__(content, **kwargs)
        self._ping = ping
        self._ping_interval = ping_interval
        self._last_event = -math.inf

    async def stream_response(self, send: Send) -> None:
        """Send the events, and a ping whenever `ping_interval` passes without one."""
        ping = {"type": "http.response.body", "body": self._ping, "more_body": True}

        async def pinger() -> None:
            while True:
                wait = self._last_event + self._ping_interval - time.monotonic()
                if wait <= 0:
                    await send(ping)
                    self._last_event = time.monotonic()
                else:
                    await anyio.sleep(wait)

        await send(
            {"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers}
        )
        self._last_event = time.monotonic()
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(pinger)
            async for chunk in self.body_iterator:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                self._last_event = time.monotonic()
            task_group.cancel_scope.cancel()
        await send({"type": "http.response.body", "body": b"", "more_body": False})


def server_sent_event(item: Any) -> bytes | None:
    """Return the wire form of a FastAPI `ServerSentEvent` item, or None for any other item.

    As FastAPI writes it: `raw_data` as it is, `data` as JSON (a model's `model_dump_json()`,
    anything else untyped), with its `event`, `id`, `retry` and `comment` lines, never validated
    against the stream's item type.
    """
    event_class = _server_sent_event_class()
    if event_class is None or not isinstance(item, event_class):
        return None
    from fastapi.sse import format_sse_event  # noqa: PLC0415 - implied by the item's class

    data = item.data
    if item.raw_data is not None:
        text: str | None = item.raw_data
    elif data is None:
        text = None
    elif hasattr(data, "model_dump_json"):
        text = data.model_dump_json()
    else:
        text = encode_untyped(data, DEFAULTS).decode()
    return format_sse_event(
        data_str=text, event=item.event, id=item.id, retry=item.retry, comment=item.comment
    )


@functools.cache
def _server_sent_event_class() -> type[Any] | None:
    # FastAPI 0.135 adds Server-Sent Events; Starlette apps may not have FastAPI at all.
    try:
        from fastapi.sse import ServerSentEvent  # noqa: PLC0415
    except ImportError:
        return None
    return ServerSentEvent


def json_lines(
    items: Any,
    *,
    response_model: Any = UNTYPED,
    status_code: int = 200,
    headers: Mapping[str, str] | None = None,
) -> StreamingResponse:
    """Stream what `items` yields as JSON Lines (`application/jsonl`), as FastAPI streams it.

    For Starlette endpoints (and anywhere a response is built by hand): each item is encoded
    as `dumps` encodes it, one JSON document and a newline per item.

    Args:
        items: An async or sync iterable (sync ones are iterated in the threadpool).
        response_model: The declared item type: each item is validated against it (a
            `pydantic.ValidationError` ends the stream) and filtered to it.
        status_code: The response status.
        headers: Headers added to the response.

    Returns:
        The streaming response.
    """
    return StreamingResponse(
        json_line_bodies(items, _item_encoder(response_model)),
        status_code=status_code,
        headers=headers,
        media_type="application/jsonl",
    )


def server_sent_events(
    items: Any,
    *,
    response_model: Any = UNTYPED,
    status_code: int = 200,
    headers: Mapping[str, str] | None = None,
    ping_interval: float = 15.0,
) -> StreamingResponse:
    """Stream what `items` yields as Server-Sent Events (`text/event-stream`), as FastAPI does.

    Each item is a `data:` event holding its JSON (encoded as `dumps` encodes it); a FastAPI
    `ServerSentEvent` item gives its own fields. A `: ping` comment is sent after
    `ping_interval` seconds without an event; `Cache-Control: no-cache` and
    `X-Accel-Buffering: no` are set, as FastAPI sets them.

    Args:
        items: An async or sync iterable (sync ones are iterated in the threadpool).
        response_model: The declared item type: each plain item is validated against it (a
            `pydantic.ValidationError` ends the stream) and filtered to it.
        status_code: The response status.
        headers: Headers added to the response.
        ping_interval: Seconds of silence before a ping.

    Returns:
        The streaming response.
    """
    response = EventStream(
        event_bodies(items, _item_encoder(response_model)),
        ping=PING,
        ping_interval=ping_interval,
        status_code=status_code,
        headers=headers,
    )
    response.headers["Cache-Control"] = "no-cache"
    # nginx buffers responses unless told not to.
    response.headers["X-Accel-Buffering"] = "no"
    return response


# The keep-alive comment of the Server-Sent Events specification, as FastAPI sends it.
PING = b": ping\n\n"


def _item_encoder(response_model: Any) -> Callable[[Any], bytes]:
    if response_model is UNTYPED:
        return functools.partial(encode_untyped, serialization=DEFAULTS)
    return typed_encoder(response_model, DEFAULTS).encode
