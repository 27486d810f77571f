"""JSON Lines and Server-Sent Events streams of generators, one orjson call per event.

FastAPI (0.134 JSON Lines, 0.135 Server-Sent Events) streams what a generator endpoint yields:
each item validated against the declared item type and serialized, one JSON document per line,
or one `data:` event per item (`ServerSentEvent` items give their own fields), with a `: ping`
comment after 15 s without an event. Its Server-Sent Events pass every event through two memory
streams, a cancel scope and a checkpoint. Here each event is encoded at once, the events that
are ready together leave in one body message (`_batches`), and one task per stream sends the
pings.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Mapping
from typing import Any

import anyio
from starlette.responses import StreamingResponse
from starlette.types import Send

from orjson_dispatch import _fastapi
from orjson_dispatch._batches import send_items
from orjson_dispatch._dumps import UNTYPED
from orjson_dispatch._options import DEFAULTS
from orjson_dispatch._stream_settings import check_seconds
from orjson_dispatch._typed import typed_encoder
from orjson_dispatch._untyped import encode_untyped

__all__ = [
    "SendTimeout",
    "Stream",
    "event_frame",
    "event_stream",
    "json_line_frame",
    "json_lines",
    "server_sent_event",
    "server_sent_events",
]


class SendTimeout(TimeoutError):
    """A client read nothing for `send_timeout` seconds: its stream was ended."""


class Stream(StreamingResponse):
    """A streaming response that sends the frames of a generator's items as they are ready.

    Frames ready together leave in one body message. Disconnects are Starlette's: the stream
    is cancelled, and the generator closed at once.

    Args:
        items: The generator (an async iterable, or a sync one iterated in the threadpool).
        frame: Returns the wire form of one item.
        ping: The comment sent after `ping_interval` seconds without a send, or None.
        ping_interval: Seconds without a send before a ping (and between pings).
        send_timeout: Seconds a send may wait for the client before the stream ends with
            `SendTimeout`, or None.
        media_type, status_code, headers: As for `StreamingResponse`.
    """

    def __init__(
        self,
        items: Any,
        frame: Callable[[Any], bytes],
        *,
        media_type: str,
        ping: bytes | None = None,
        ping_interval: float = 15.0,
        send_timeout: float | None = None,
        status_code: int = 200,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        # StreamingResponse.__init__ would wrap the items; they are iterated here.
        self.status_code = status_code
        self.media_type = media_type
        self.background = None
        self.init_headers(headers)
        self._items = items
        self._frame = frame
        self._ping = ping
        self._ping_interval = ping_interval
        self._send_timeout = send_timeout
        self._sending = False
        self._timed_out = False
        self._last_sent = -math.inf

    async def stream_response(self, send: Send) -> None:
        """Send the items' frames, and a ping whenever `ping_interval` passes without a send."""
        await send(
            {"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers}
        )
        self._last_sent = time.monotonic()
        send_body = functools.partial(self._send_body, send)
        if self._ping is None:
            await send_items(self._items, self._frame, send_body)
        else:
            async with anyio.create_task_group() as task_group:
                task_group.start_soon(self._pinger, send_body, task_group.cancel_scope)
                try:
                    await send_items(self._items, self._frame, send_body)
                except SendTimeout:  # raised alone, not in the task group's exception group
                    self._timed_out = True
                task_group.cancel_scope.cancel()
            if self._timed_out:  # a send (of an event or a ping) timed out: the stream ended
                raise self._timeout()
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _send_body(self, send: Send, body: bytes) -> None:
        message = {"type": "http.response.body", "body": body, "more_body": True}
        self._sending = True
        try:
            if self._send_timeout is None:
                await send(message)
            else:
                with anyio.move_on_after(self._send_timeout) as scope:
                    await send(message)
                if scope.cancelled_caught:
                    raise self._timeout()
        finally:
            self._sending = False
            self._last_sent = time.monotonic()

    def _timeout(self) -> SendTimeout:
        return SendTimeout(
            f"orjson_dispatch: the client read nothing for {self._send_timeout} s "
            "(send_timeout): the stream was ended and its generator closed"
        )

    async def _pinger(self, send_body: Callable[[bytes], Any], scope: anyio.CancelScope) -> None:
        assert self._ping is not None
        while True:
            wait = self._last_sent + self._ping_interval - time.monotonic()
            if wait > 0:
                await anyio.sleep(wait)
            elif self._sending:
                # A send waits for a slow client: as under FastAPI, no ping goes out beside it.
                await anyio.sleep(self._ping_interval)
            else:
                try:
                    await send_body(self._ping)
                except SendTimeout:
                    self._timed_out = True
                    scope.cancel()
                    return


def json_line_frame(encode: Callable[[Any], bytes]) -> Callable[[Any], bytes]:
    """Return the JSON Lines frame of an item: its JSON document and a newline."""
    return lambda item: encode(item) + b"\n"


def event_frame(encode: Callable[[Any], bytes]) -> Callable[[Any], bytes]:
    """Return the Server-Sent Events frame of an item.

    Args:
        encode: Returns the JSON of a plain item, sent as the event's `data:` line; a FastAPI
            `ServerSentEvent` item gives its own fields.
    """
    event_class = _fastapi.server_sent_event_class()

    def frame(item: Any) -> bytes:
        if event_class is not None and isinstance(item, event_class):
            return server_sent_event(item)  # type: ignore[return-value]
        # A JSON document holds no line break: it is the one `data:` line of its event.
        return b"data: " + encode(item) + b"\n\n"

    return frame


def server_sent_event(item: Any) -> bytes | None:
    """Return the wire form of a FastAPI `ServerSentEvent` item, or None for any other item.

    As FastAPI writes it: `raw_data` as it is, `data` as JSON (a model's `model_dump_json()`,
    anything else untyped), with its `event`, `id`, `retry` and `comment` lines, never validated
    against the stream's item type.
    """
    event_class = _fastapi.server_sent_event_class()
    if event_class is None or not isinstance(item, event_class):
        return None
    data = item.data
    if item.raw_data is not None:
        text: str | None = item.raw_data
    elif data is None:
        text = None
    elif hasattr(data, "model_dump_json"):
        text = data.model_dump_json()
    else:
        text = encode_untyped(data, DEFAULTS).decode()
    return _fastapi.format_sse_event(
        data_str=text, event=item.event, id=item.id, retry=item.retry, comment=item.comment
    )


def json_lines(
    items: Any,
    *,
    response_model: Any = UNTYPED,
    status_code: int = 200,
    headers: Mapping[str, str] | None = None,
    send_timeout: float | None = None,
) -> StreamingResponse:
    """Stream what `items` yields as JSON Lines (`application/jsonl`), as FastAPI streams it.

    For Starlette endpoints (and anywhere a response is built by hand): each item is encoded
    as `dumps` encodes it, one JSON document and a newline per item; lines ready together are
    sent in one body message.

    Args:
        items: An async or sync iterable (sync ones are iterated in the threadpool).
        response_model: The declared item type: each item is validated against it (a
            `pydantic.ValidationError` ends the stream) and filtered to it.
        status_code: The response status.
        headers: Headers added to the response.
        send_timeout: Seconds a send may wait for a client that reads nothing before the
            stream ends (its generator closed) with a `TimeoutError`; None: no limit.

    Returns:
        The streaming response.

    Raises:
        ValueError: `send_timeout` is not a positive number of seconds.
    """
    check_seconds("send_timeout", send_timeout)
    return Stream(
        items,
        json_line_frame(_item_encoder(response_model)),
        media_type="application/jsonl",
        send_timeout=send_timeout,
        status_code=status_code,
        headers=headers,
    )


def server_sent_events(
    items: Any,
    *,
    response_model: Any = UNTYPED,
    status_code: int = 200,
    headers: Mapping[str, str] | None = None,
    ping_interval: float | None = None,
    send_timeout: float | None = None,
) -> StreamingResponse:
    """Stream what `items` yields as Server-Sent Events (`text/event-stream`), as FastAPI does.

    Each item is a `data:` event holding its JSON (encoded as `dumps` encodes it); a FastAPI
    `ServerSentEvent` item gives its own fields. Events ready together are sent in one body
    message. A `: ping` comment is sent after `ping_interval` seconds without a send;
    `Cache-Control: no-cache` and `X-Accel-Buffering: no` are set, as FastAPI sets them.

    Args:
        items: An async or sync iterable (sync ones are iterated in the threadpool).
        response_model: The declared item type: each plain item is validated against it (a
            `pydantic.ValidationError` ends the stream) and filtered to it.
        status_code: The response status.
        headers: Headers added to the response.
        ping_interval: Seconds of silence before a ping; None: FastAPI's interval (15 s).
        send_timeout: Seconds a send may wait for a client that reads nothing before the
            stream ends (its generator closed) with a `TimeoutError`; None: no limit.

    Returns:
        The streaming response.

    Raises:
        ValueError: `ping_interval` or `send_timeout` is not a positive number of seconds.
    """
    check_seconds("ping_interval", ping_interval)
    check_seconds("send_timeout", send_timeout)
    return event_stream(
        items,
        _item_encoder(response_model),
        ping_interval=ping_interval,
        send_timeout=send_timeout,
        status_code=status_code,
        headers=headers,
    )


def event_stream(
    items: Any, encode: Callable[[Any], bytes], *, ping_interval: float | None, **settings: Any
) -> Stream:
    """Return the Server-Sent Events response of `items`, with FastAPI's headers and pings.

    Args:
        items: The generator.
        encode: Returns the JSON of a plain item.
        ping_interval: Seconds of silence before a ping; None: FastAPI's interval.
        **settings: As for `Stream`.
    """
    response = Stream(
        items,
        event_frame(encode),
        media_type="text/event-stream",
        ping=_fastapi.keepalive_comment(),
        ping_interval=ping_interval or _fastapi.ping_interval(),
        **settings,
    )
    response.headers["Cache-Control"] = "no-cache"
    # nginx buffers responses unless told not to.
    response.headers["X-Accel-Buffering"] = "no"
    return response


def _item_encoder(response_model: Any) -> Callable[[Any], bytes]:
    if response_model is UNTYPED:
        return functools.partial(encode_untyped, serialization=DEFAULTS)
    return typed_encoder(response_model, DEFAULTS).encode
