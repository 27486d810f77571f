"""How a stream is sent: one sending task, a bound in bytes, the client's progress, the pings.

`Stream` is a Starlette `StreamingResponse` whose `body_iterator` yields the frame of each item
(`_stream_frames`), so that a route class wrapping `response.body_iterator` (FastAPI's custom
route pattern) sees the frames and an iterator it assigns is the one sent. It is sent in
FastAPI's own shape for Server-Sent Events: a producer task iterates the body into a queue, and
the response's task sends what it holds; a ping is queued by a timer and sent as any frame.
When pings are due, and how they are sent, is decided here; `_streams.build_stream` chooses
which streams ping, with FastAPI's comment and interval.

Deliberate divergences from FastAPI's streams (0.134 JSON Lines, 0.135 `EventSourceResponse`)
in how they are sent, each for the reason given; the bytes a client reads are the same
(`_stream_frames` lists the frames' own divergences, `_streams` the builders'):

1. Frames ready together (a burst the generator yields without waiting) leave in one body
   message, up to `READY_FRAMES` frames and 64 KiB; FastAPI sends one message per event. One
   send and one `write` per burst is what keeps many concurrent streams fast.
2. Events yielded before the generator fails are sent, then the failure ends the body without
   its terminator; FastAPI's Server-Sent Events drop those still in its memory streams when the
   producer's failure cancels them. The client should get everything produced.
3. The generator is closed as soon as its stream ends, however it ends, a sync generator's
   `finally` run in the threadpool; FastAPI leaves the generator of a client that left (its JSON
   Lines, and its Server-Sent Events of a generator that never waits) and its Server-Sent
   Events still open at a graceful shutdown to the garbage collector. A generator's `finally`
   frees what it holds (an engine's slot): it must not wait for a collection.
4. What waits for a slow client is bounded in bytes (`StreamSettings.buffer_bytes`, counting
   uvicorn's transport buffer); FastAPI's Server-Sent Events hold a frame in each of their two
   memory streams and the consumer, its JSON Lines one, whatever their size. A bound counted in
   frames is no bound when a frame is 1 MB.
5. A frame larger than 64 KiB is handed to the server in pieces of 64 KiB; FastAPI hands it
   whole. uvicorn's transport takes a whole message at once, so its buffer would hold the
   whole frame.
6. `send_timeout` ends the stream of a client that takes nothing for that long, timed by the
   client's progress read from the socket (`_stream_connection`); FastAPI waits as long as the
   connection stays open. A stalled client must not hold a generator (and its engine) forever.
7. A generator that never waits gives the event loop a turn every `READY_FRAMES` frames (or
   when the bound of 4 fills); FastAPI gives it one after every event (`anyio.sleep(0)`, so
   that a cancellation reaches such a generator, fastapi/fastapi#14680). A turn per event is a
   pass through the loop per event, and no burst would ever be ready together (1); 64 frames
   of chat-completion chunks are a few hundred microseconds of work.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque
from collections.abc import Callable, Generator, Mapping
from typing import Any, Protocol

import anyio
import anyio.to_thread
from starlette.concurrency import iterate_in_threadpool
from starlette.responses import StreamingResponse
from starlette.types import Message, Receive, Scope, Send

from orjson_dispatch._stream_connection import Connection
from orjson_dispatch._stream_settings import BUFFER_BYTES

__all__ = ["PIECE_BYTES", "SendTimeout", "Stream"]

# The most frames waiting to be sent: the producer hands the event loop a turn at least this
# often, so a generator that never waits stays cancellable and fair to other streams (64
# chat-completion chunks: 18 KB, a few hundred microseconds). At 16, a ready stream spent
# nearly half its server time in the write and the handoff of each burst (measured).
READY_FRAMES = 64
# The most bytes one body message hands the server. Frames ready together are joined up to it;
# a larger frame is sent in pieces of it, so that uvicorn's transport buffer (which takes a
# whole message at once, then makes the next send wait until it drains below its low-water
# mark, uvicorn/protocols/http/flow_control.py) never holds more than its 64 KiB high-water
# mark and one piece, whatever the size of the event.
PIECE_BYTES = 65_536
# The longest time between two readings of the client's progress while a send waits.
SAMPLE_INTERVAL = 0.1


class SendTimeout(TimeoutError):
    """A client took nothing of a stream for `send_timeout` seconds: its stream was ended."""


class Stream(StreamingResponse):
    """A streaming response of a generator's items, each sent as its frame.

    `body_iterator` yields one frame per item; a producer task iterates it into a queue (or,
    while it is the stream's own and the items are async, the items, framing each), and the
    response's task (the only one that sends) sends what the queue holds, the frames ready
    together in one body message. With a ping, a timer task queues it after
    `ping_interval` seconds without a send; with a send timeout, a watch task reads the
    client's progress while a send waits. When the stream ends, however it ends (the end of
    the items, an exception, a client leaving, a send timeout, a server shutting down), the
    producer is finished and the generator closed before the response returns.

    Args:
        items: The generator (an async iterable, or a sync one iterated in the threadpool).
        frame: Returns the wire form of one item; an exception from it ends the stream after
            the frames before it are sent.
        media_type: The response's media type.
        ping: The comment sent after `ping_interval` seconds without a send, or None.
        ping_interval: Seconds without a send before a ping (and between pings).
        send_timeout: Seconds a client may take nothing while a send waits before the stream
            ends with `SendTimeout`, or None.
        buffer_bytes: The bytes held between the generator and the socket past which the
            generator is not asked for its next item (`StreamSettings.buffer_bytes`).
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
        buffer_bytes: int = BUFFER_BYTES,
        group_failures: bool = False,
        status_code: int = 200,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self._own_body = _frames(items, frame)
        super().__init__(self._own_body, status_code, headers, media_type)
        self._items = items
        self._frame = frame
        self._ping = ping
        self._ping_interval = ping_interval
        self._send_timeout = send_timeout
        self._buffer_bytes = buffer_bytes
        self._group_failures = group_failures
        self._failure: Exception | None = None  # the producer's
        self._connection: Connection | None = None
        # The queue between the producer and the sender.
        self._frames: deque[bytes] = deque()
        self._queued = 0  # bytes in _frames
        self._unsent = 0  # bytes the sender took whose send has not returned yet
        self._produced = False  # the producer has ended
        self._readable: _Wake | None = None  # the sender waits for a frame
        self._writable: _Wake | None = None  # the producer waits for room
        # The sender, read by the pinger and the watch.
        self._sending = False
        self._sends = 0
        self._send_started = -math.inf
        self._last_sent = -math.inf
        self._send_scope: anyio.CancelScope | None = None  # the stream's, while it sends
        self._watch_wake: _Wake | None = None
        self._wake: Callable[[], _Wake] = _AnyioWake

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # Found here, in the request's task: Starlette sends from a task of its own.
        self._connection = Connection.of_current_task()
        await super().__call__(scope, receive, send)

    async def stream_response(self, send: Send) -> None:
        """Send the frames of `body_iterator`, and a ping whenever one is due."""
        await send(
            {"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers}
        )
        self._last_sent = time.monotonic()
        self._wake = _wake_class()
        failure: Exception | None = None
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(self._produce)
            if self._ping is not None:
                task_group.start_soon(self._pinger)
            if self._send_timeout is not None:
                task_group.start_soon(self._watch, self._send_timeout)
            try:
                # One scope for the stream's sends, cancelled by the watch while one waits (a
                # scope per send would cost more than the send: 9 us on asyncio).
                with anyio.CancelScope() as self._send_scope:
                    await self._send_frames(send)
                if self._send_scope.cancelled_caught:
                    raise SendTimeout(
                        f"orjson_dispatch: the client took nothing for {self._send_timeout} s "
                        "(send_timeout): the stream was ended and its generator closed"
                    )
            except Exception as error:  # raised below, alone, not in an exception group
                failure = error
            task_group.cancel_scope.cancel()  # the timers (the producer has ended, or fails)
            if self._failure is not None and self._group_failures:
                raise self._failure
        failure = failure or self._failure
        if failure is not None:  # the frames before it were sent: the body ends unfinished
            raise failure
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    # --- the producer: the generator's frames into the queue, within the bound ---------------

    async def _produce(self) -> None:
        try:
            if self.body_iterator is self._own_body and hasattr(self._items, "__aiter__"):
                # The frames `_frames` would yield, without its generator in between: one
                # `__anext__` less per item, a quarter of the stream's own time per event.
                frame = self._frame
                async for item in self._items:
                    self._put(frame(item))
                    if self._full():
                        await self._room()
            else:  # a wrapped body iterator, or sync items (iterated in the threadpool)
                async for content in self.body_iterator:
                    chunk = (
                        content if isinstance(content, bytes) else _as_bytes(content, self.charset)
                    )
                    self._put(chunk)  # no checkpoint per frame: a burst is produced whole
                    if self._full():
                        await self._room()
        except Exception as error:  # raised by the response once the frames before are sent
            self._failure = error
        finally:
            self._produced = True
            self._wake_sender()  # it sends what the queue holds, then ends
            with anyio.CancelScope(shield=True):
                await _close(self.body_iterator, self._items)

    async def _room(self) -> None:
        """Wait until the queue has room again (`_full()` false)."""
        self._writable = self._wake()
        await self._writable

    def _put(self, chunk: bytes) -> None:
        self._frames.append(chunk)
        self._queued += len(chunk)
        if self._readable is not None:
            self._wake_sender()

    def _full(self) -> bool:
        """Whether the generator must wait before its next item.

        It waits while `READY_FRAMES` frames are queued, or while the bytes waiting to be sent
        and those uvicorn's transport buffer holds reach `buffer_bytes`; never when nothing
        waits to be sent (the server's flow control then makes the next send wait).
        """
        if len(self._frames) >= READY_FRAMES:
            return True
        waiting = self._queued + self._unsent
        if not waiting:
            return False
        buffered = self._connection.buffered() if self._connection is not None else 0
        return waiting + buffered >= self._buffer_bytes

    def _wake_producer(self) -> None:
        if self._writable is not None and not self._full():
            _set(self._writable)
            self._writable = None

    def _wake_sender(self) -> None:
        if self._readable is not None:
            _set(self._readable)
            self._readable = None

    # --- the sender: the only task that calls send -------------------------------------------

    async def _send_frames(self, send: Send) -> None:
        while True:
            if not self._frames:
                if self._produced:
                    return
                self._readable = self._wake()
                await self._readable
                continue
            body = self._take()
            self._wake_producer()
            if len(body) <= PIECE_BYTES:
                await self._send_body(send, body)
            else:  # each piece copied once, the frame held until its last piece is sent
                for start in range(0, len(body), PIECE_BYTES):
                    await self._send_body(send, body[start : start + PIECE_BYTES])
            self._wake_producer()

    def _take(self) -> bytes:
        """Take the next body from the queue: the frames ready together, up to `PIECE_BYTES`."""
        frames = self._frames
        if len(frames) > 1 and self._queued <= PIECE_BYTES:  # all of them, joined at once
            body, size = b"".join(frames), self._queued
            frames.clear()
        else:
            body = frames.popleft()
            size = len(body)
            if frames and size < PIECE_BYTES:
                batch = [body]
                while frames and size + len(frames[0]) <= PIECE_BYTES:
                    batch.append(frames.popleft())
                    size += len(batch[-1])
                if len(batch) > 1:
                    body = b"".join(batch)
        self._queued -= size
        self._unsent = size
        return body

    async def _send_body(self, send: Send, body: bytes) -> None:
        message: Message = {"type": "http.response.body", "body": body, "more_body": True}
        self._sending = True
        try:
            if self._send_timeout is None:
                await send(message)
            else:
                await self._send_watched(send, message)
        finally:
            self._sending = False
            self._unsent -= len(body)
            self._last_sent = time.monotonic()

    async def _send_watched(self, send: Send, message: Message) -> None:
        self._sends += 1
        self._send_started = time.monotonic()
        if self._watch_wake is not None:
            _set(self._watch_wake)
            self._watch_wake = None
        await send(message)

    # --- the timers ---------------------------------------------------------------------------

    async def _pinger(self) -> None:
        """Queue a ping whenever `ping_interval` passes without a send (one timer per interval).

        A ping is queued only when nothing is being sent or waits to be (a slow client's send
        waits then, as under FastAPI, whose producer and consumer wait too); the sender sends
        it as any frame, so there is never a second send beside the first.
        """
        assert self._ping is not None
        while True:
            wait = self._last_sent + self._ping_interval - time.monotonic()
            if wait > 0:
                await anyio.sleep(wait)
            elif self._sending or self._frames:
                await anyio.sleep(self._ping_interval)
            else:
                self._put(self._ping)
                self._last_sent = time.monotonic()

    async def _watch(self, timeout: float) -> None:
        """End the send of a client that takes nothing for `timeout` seconds.

        While a send waits, the bytes the transport and the kernel hold unacknowledged
        (`Connection.unacknowledged`) are read every sampling interval (`timeout / n`, n the
        smallest count making it at most `SAMPLE_INTERVAL`): they fall whenever the client
        takes bytes. When they stay as they are over `timeout` (or, where they cannot be read,
        when one send waits `timeout`), the send is cancelled. The watch sleeps while nothing
        is sent.
        """
        interval = timeout / math.ceil(timeout / SAMPLE_INTERVAL)
        seen, baseline, since = 0, None, 0.0
        while True:
            if not self._sending:
                self._watch_wake = self._wake()
                await self._watch_wake
            await anyio.sleep(interval)
            if not self._sending:
                continue
            now = time.monotonic()
            held = self._connection.unacknowledged() if self._connection is not None else None
            if self._sends != seen:  # another send: nothing of the last one's to compare with
                seen, baseline, since = self._sends, held, self._send_started
            elif held is not None and baseline is not None and held < baseline:
                baseline, since = held, now
            if now - since >= timeout and self._send_scope is not None:
                self._send_scope.cancel()  # the sender waits in this send: it ends there


class _Wake(Protocol):
    """One task's wait for another's wake-up: awaited once, woken with `set_result(None)`."""

    def __await__(self) -> Generator[Any, None, Any]: ...
    def done(self) -> bool: ...
    def set_result(self, result: None, /) -> None: ...


class _AnyioWake:
    """A `_Wake` of anyio's `Event`, for a backend other than asyncio."""

    __slots__ = ("_event",)

    def __init__(self) -> None:
        self._event = anyio.Event()

    def __await__(self) -> Generator[Any, None, None]:
        return self._event.wait().__await__()

    def done(self) -> bool:
        return self._event.is_set()

    def set_result(self, result: None, /) -> None:
        self._event.set()


def _wake_class() -> Callable[[], _Wake]:
    """The running backend's `_Wake`: on asyncio, a future of the running loop.

    anyio's `Event` wraps an `asyncio.Event` round a future; a stream whose generator waits
    between events wakes its sender once per event: 13.0 us of CPU per event with anyio's
    `Event`, 7.8 us with the future (32 such streams in process on uvloop, measured).
    """
    try:
        return asyncio.get_running_loop().create_future
    except RuntimeError:  # not asyncio (trio)
        return _AnyioWake


def _set(wake: _Wake) -> None:
    if not wake.done():  # a cancelled wait is done
        wake.set_result(None)


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
