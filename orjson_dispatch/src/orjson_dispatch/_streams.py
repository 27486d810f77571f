"""JSON Lines and Server-Sent Events responses of generators: one response class, one builder.

`Stream` is a Starlette `StreamingResponse` whose `body_iterator` yields the frame of each item
(`_stream_frames`), so that a route class wrapping `response.body_iterator` (FastAPI's custom
route pattern) sees the frames and an iterator it assigns is the one sent. It is sent in
FastAPI's own shape for Server-Sent Events: a producer task iterates the body into an anyio
memory stream, and the response's task sends what it receives; the frames ready together (a
burst the generator yields without waiting) leave in one body message. `build_stream` builds
every stream: `DispatchRoute`'s, and `json_lines` and `server_sent_events` for hand-built ones.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from typing import Any

import anyio
import anyio.to_thread
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from starlette.concurrency import iterate_in_threadpool
from starlette.responses import StreamingResponse
from starlette.types import Send

from orjson_dispatch import _fastapi
from orjson_dispatch._encoders import UNTYPED, declared_encoder
from orjson_dispatch._options import DEFAULTS
from orjson_dispatch._stream_frames import EVENT_STREAM, JSON_LINES, event_frame, json_line_frame
from orjson_dispatch._stream_settings import StreamSettings

__all__ = ["SendTimeout", "Stream", "build_stream", "json_lines", "server_sent_events"]

# Frames the producer may run ahead of the socket: the backpressure of a slow client reaches
# the generator after this many (FastAPI's Server-Sent Events hold one). It is also the largest
# burst sent as one body message.
READY_FRAMES = 16
# With a send timeout, the most bytes one send hands uvicorn. uvicorn writes a body message at
# once and makes the next send wait while the transport's buffer is above its high-water mark
# (64 KiB, uvicorn/protocols/http/flow_control.py) until it drains to the low-water mark: a send
# then completes whenever the client has taken at most this much more than the buffer holds,
# whatever the size of the event, so a client that reads steadily is never cut.
PIECE_BYTES = 65_536


class SendTimeout(TimeoutError):
    """A client took nothing of a stream for `send_timeout` seconds: its stream was ended."""


class Stream(StreamingResponse):
    """A streaming response of a generator's items, each sent as its frame.

    `body_iterator` yields one frame per item; a producer task iterates it, and the frames it
    has ready when the socket takes the next body message are joined into that message. With
    a ping, a third task sends it after `ping_interval` seconds without a send. When the
    stream ends, however it ends (the end of the items, an exception, a client leaving, a
    send timeout, a server shutting down), the producer is finished and the generator closed
    before the response returns: its `finally` runs and the request's dependencies with
    `yield` are torn down after it.

    Args:
        items: The generator (an async iterable, or a sync one iterated in the threadpool).
        frame: Returns the wire form of one item; an exception from it ends the stream after
            the frames before it are sent.
        media_type: The response's media type.
        ping: The comment sent after `ping_interval` seconds without a send, or None.
        ping_interval: Seconds without a send before a ping (and between pings).
        send_timeout: Seconds a send may wait without completing before the stream ends with
            `SendTimeout`, or None.
        group_failures: Raise an exception of the generator (or of `frame`) in an exception
            group, as FastAPI's Server-Sent Events raise it from their producer's task group
            (its JSON Lines raise it alone).
        status_code, headers: As for `StreamingResponse`.
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
        group_failures: bool = False,
        status_code: int = 200,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(_frames(items, frame), status_code, headers, media_type)
        self._items = items
        self._ping = ping
        self._ping_interval = ping_interval
        self._send_timeout = send_timeout
        self._group_failures = group_failures
        self._failure: Exception | None = None  # the producer's
        self._ping_failure: SendTimeout | None = None
        self._sending = False
        self._last_sent = -math.inf

    async def stream_response(self, send: Send) -> None:
        """Send the frames of `body_iterator`, and a ping whenever one is due."""
        await send(
            {"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers}
        )
        self._last_sent = time.monotonic()
        # Called, not subscripted: anyio 3 (which Starlette 0.37 allows) has a function here.
        streams: tuple[MemoryObjectSendStream[bytes], MemoryObjectReceiveStream[bytes]]
        streams = anyio.create_memory_object_stream(READY_FRAMES)
        ready, received = streams
        failure: Exception | None = None
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(self._produce, ready)
            if self._ping is not None:
                task_group.start_soon(self._pinger, send, task_group.cancel_scope)
            try:
                await self._send_received(send, received)
            except Exception as error:  # raised below, alone, not in an exception group
                failure = error
            task_group.cancel_scope.cancel()  # the pinger (the producer has ended, or fails)
            if self._failure is not None and self._group_failures:
                raise self._failure
        failure = failure or self._ping_failure or self._failure
        if failure is not None:  # the frames before it were sent: the body ends unfinished
            raise failure
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _produce(self, ready: MemoryObjectSendStream[bytes]) -> None:
        try:
            async for content in self.body_iterator:
                chunk = content if isinstance(content, bytes) else _as_bytes(content, self.charset)
                try:  # no checkpoint per frame: a burst is produced whole, then sent
                    ready.send_nowait(chunk)
                except anyio.WouldBlock:
                    await ready.send(chunk)
        except Exception as error:  # raised by the response once the frames before are sent
            self._failure = error
        finally:
            ready.close()  # the sender sends what it holds, then ends
            with anyio.CancelScope(shield=True):
                await _close(self.body_iterator, self._items)

    async def _send_received(self, send: Send, received: MemoryObjectReceiveStream[bytes]) -> None:
        try:
            while True:
                try:
                    chunk = await received.receive()
                except anyio.EndOfStream:
                    return
                batch = [chunk]
                while len(batch) < READY_FRAMES:
                    try:
                        batch.append(received.receive_nowait())
                    except (anyio.WouldBlock, anyio.EndOfStream):
                        break
                await self._send_body(send, batch[0] if len(batch) == 1 else b"".join(batch))
        finally:
            received.close()

    async def _pinger(self, send: Send, scope: anyio.CancelScope) -> None:
        """Send a ping whenever `ping_interval` passes without a send (one timer per interval).

        A ping is one body message, never sent while a body is being sent (a slow client's
        send waits then, as under FastAPI, whose producer and consumer wait too); a body sent
        while a ping waits for the socket leaves after it (uvicorn wakes waiting sends in
        order).
        """
        assert self._ping is not None
        while True:
            wait = self._last_sent + self._ping_interval - time.monotonic()
            if wait > 0:
                await anyio.sleep(wait)
            elif self._sending:
                await anyio.sleep(self._ping_interval)
            else:
                try:
                    await self._send_body(send, self._ping)
                except SendTimeout as error:
                    self._ping_failure = error
                    scope.cancel()
                    return

    async def _send_body(self, send: Send, body: bytes) -> None:
        self._sending = True
        try:
            if self._send_timeout is None:
                await send({"type": "http.response.body", "body": body, "more_body": True})
                return
            for start in range(0, len(body), PIECE_BYTES):
                piece = body[start : start + PIECE_BYTES] if len(body) > PIECE_BYTES else body
                with anyio.move_on_after(self._send_timeout) as waited:
                    await send({"type": "http.response.body", "body": piece, "more_body": True})
                if waited.cancelled_caught:
                    raise SendTimeout(
                        f"orjson_dispatch: the client took nothing for {self._send_timeout} s "
                        "(send_timeout): the stream was ended and its generator closed"
                    )
        finally:
            self._sending = False
            self._last_sent = time.monotonic()


def _as_bytes(content: Any, charset: str) -> bytes:
    # What an assigned body iterator may yield, as Starlette sends it.
    return bytes(content) if isinstance(content, memoryview) else content.encode(charset)


async def _frames(items: Any, frame: Callable[[Any], bytes]) -> Any:
    """Yield the frame of each item; sync items are iterated in the threadpool, as by FastAPI."""
    source = items if hasattr(items, "__aiter__") else iterate_in_threadpool(items)
    async for item in source:
        yield frame(item)


async def _close(body: Any, items: Any) -> None:
    """Close the body iterator and the generator under it, whatever wraps it."""
    for iterator in (body, items):
        close = getattr(iterator, "aclose", None)
        if close is not None:
            await close()
        elif callable(getattr(iterator, "close", None)):
            # A sync generator's `finally` runs in a thread, as its body ran.
            await anyio.to_thread.run_sync(iterator.close)


def build_stream(
    items: Any,
    encode: Callable[[Any], bytes],
    *,
    events: bool,
    settings: StreamSettings,
    status_code: int = 200,
    headers: Mapping[str, str] | None = None,
) -> Stream:
    """Return the JSON Lines or Server-Sent Events response of `items`, as FastAPI sends it.

    Server-Sent Events have FastAPI's pings (`settings.ping_interval`, by default FastAPI's)
    and its `Cache-Control: no-cache` and `X-Accel-Buffering: no` headers.

    Args:
        items: The generator.
        encode: Returns the JSON of a plain item.
        events: Server-Sent Events (else JSON Lines).
        settings: The ping interval and send timeout.
        status_code: The response status.
        headers: Headers of the response.
    """
    if not events:
        return Stream(
            items,
            json_line_frame(encode),
            media_type=JSON_LINES,
            send_timeout=settings.send_timeout,
            status_code=status_code,
            headers=headers,
        )
    response = Stream(
        items,
        event_frame(encode),
        media_type=EVENT_STREAM,
        ping=_fastapi.keepalive_comment(),
        ping_interval=settings.ping_interval or _fastapi.ping_interval(),
        send_timeout=settings.send_timeout,
        group_failures=True,
        status_code=status_code,
        headers=headers,
    )
    response.headers["Cache-Control"] = "no-cache"
    # nginx buffers responses unless told not to.
    response.headers["X-Accel-Buffering"] = "no"
    return response


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
        send_timeout: As `StreamSettings.send_timeout`; None: no limit.

    Returns:
        The streaming response.

    Raises:
        ValueError: `send_timeout` is not a positive number of seconds.
    """
    settings = StreamSettings(send_timeout=send_timeout)
    return build_stream(
        items,
        declared_encoder(response_model, DEFAULTS),
        events=False,
        settings=settings,
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
        send_timeout: As `StreamSettings.send_timeout`; None: no limit.

    Returns:
        The streaming response.

    Raises:
        ValueError: `ping_interval` or `send_timeout` is not a positive number of seconds.
    """
    settings = StreamSettings(ping_interval=ping_interval, send_timeout=send_timeout)
    return build_stream(
        items,
        declared_encoder(response_model, DEFAULTS),
        events=True,
        settings=settings,
        status_code=status_code,
        headers=headers,
    )
