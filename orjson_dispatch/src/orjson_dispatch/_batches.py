"""A stream's items sent as their frames, those ready together in one body message.

An item is ready when the generator's step that produces it completes without waiting: each
step of an async generator is started here by hand, and a step that suspends (the generator
awaits something that is not done) ends the batch. What is ready is sent before the wait is
handed to the event loop, so no item waits for the next one, and the step is then resumed as if
it had been awaited from the start. A generator that waits between items sends one item per
body, as before; one that yields several items without waiting sends them in one body (and so
one socket write).

Starting a step by hand is safe on asyncio, whose futures are passive until a task waits for
them; other event loops (trio) register the waiting task before the step suspends, so there
each item is its own body. Sync generators run in the threadpool, one item per body.
"""

from __future__ import annotations

import asyncio
import time
import types
from collections.abc import Awaitable, Callable, Generator
from typing import Any

import anyio
import anyio.to_thread
from starlette.concurrency import iterate_in_threadpool

__all__ = ["send_items"]

# How long a stream may run without giving the event loop a turn, so that a disconnected
# client's stream is cancelled, and other streams are served, even when neither the generator nor
# the socket ever waits. FastAPI checkpoints after every event for this (fastapi/fastapi#14680),
# which costs about a third of the time per event here; a quarter of a millisecond keeps that
# cost below the noise and the time between events of 32 such streams within a few times
# FastAPI's (benchmarks/results/notes.md).
CHECKPOINT_SECONDS = 0.00025

Send = Callable[[bytes], Awaitable[None]]


async def send_items(items: Any, frame: Callable[[Any], bytes], send: Send) -> None:
    """Send the frames of what `items` yields, those ready together joined in one body.

    The generator is closed when the stream ends, however it ends: at once, where FastAPI's
    request teardown closes it (an async generator suspended at a `yield`, or a sync one between
    items, would otherwise wait for garbage collection).

    Args:
        items: An async iterable, or a sync one (iterated in the threadpool).
        frame: Returns the wire form of one item; an exception from it ends the stream after
            the frames before it are sent.
        send: Sends one body.
    """
    if not hasattr(items, "__aiter__"):
        await _threaded(items, frame, send)
        return
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # not asyncio
        await _one_by_one(items, frame, send)
    else:
        await _coalesced(items, frame, send)


async def _coalesced(items: Any, frame: Callable[[Any], bytes], send: Send) -> None:
    iterator = items.__aiter__()
    batch: list[bytes] = []
    deadline = time.monotonic() + CHECKPOINT_SECONDS
    try:
        while True:
            step = iterator.__anext__().__await__()
            try:
                pending = step.send(None)
            except StopIteration as ready:
                item = ready.value
            except StopAsyncIteration:
                break
            except BaseException:
                if batch:  # what the generator yielded before it failed is sent first
                    await send(b"".join(batch))
                raise
            else:
                # The generator waits: send what is ready, then wait with it. Both helpers
                # finish the step, however they end.
                if batch:
                    item = await _send_while_waiting(b"".join(batch), step, pending, send)
                    batch.clear()
                else:
                    item = await _resume(step, pending, None)
            try:
                batch.append(frame(item))
            except BaseException:
                if batch:
                    await send(b"".join(batch))
                raise
            if time.monotonic() >= deadline:
                await send(b"".join(batch))
                batch.clear()
                await anyio.sleep(0)
                deadline = time.monotonic() + CHECKPOINT_SECONDS
        if batch:
            await send(b"".join(batch))
    finally:
        await _aclose(items)


async def _send_while_waiting(body: bytes, step: Any, pending: Any, send: Send) -> Any:
    """Send `body` while the generator's step waits on `pending`; return the step's item.

    The send and the generator's wait belong to one task: a cancellation that interrupts the
    send is thrown into the waiting step, where it would have arrived without batching (an
    error of the send ends the wait as a cancellation). When the generator's own cancel scope
    absorbs it (its timeout ended the wait), the stream goes on and the send is made again: a
    server sends nothing of a body whose send was cancelled (uvicorn waits for the socket before
    it writes).
    """
    cancelled = anyio.get_cancelled_exc_class()
    try:
        await send(body)
    except BaseException as error:
        thrown = error if isinstance(error, cancelled) else asyncio.CancelledError()
        try:
            item = await _resume(step, pending, thrown)
        except BaseException:
            raise error from None
        if thrown is not error:
            raise
        await send(body)
        return item
    return await _resume(step, pending, None)


@types.coroutine
def _resume(step: Any, pending: Any, error: BaseException | None) -> Generator[Any, Any, Any]:
    """Finish a step started by hand that suspended on `pending` (throw `error` into it first)."""
    while True:
        try:
            if error is not None:
                thrown, error = error, None
                pending = step.throw(thrown)
            else:
                try:
                    sent = yield pending
                except BaseException as interrupt:
                    error = interrupt
                    continue
                pending = step.send(sent)
        except StopIteration as done:
            return done.value


async def _one_by_one(items: Any, frame: Callable[[Any], bytes], send: Send) -> None:
    deadline = time.monotonic() + CHECKPOINT_SECONDS
    try:
        async for item in items:
            await send(frame(item))
            if time.monotonic() >= deadline:
                await anyio.sleep(0)
                deadline = time.monotonic() + CHECKPOINT_SECONDS
    finally:
        await _aclose(items)


async def _aclose(items: Any) -> None:
    """Close an async generator however its stream ended, even while the stream is cancelled."""
    close = getattr(items, "aclose", None)
    if close is not None:
        with anyio.CancelScope(shield=True):
            await close()


async def _threaded(items: Any, frame: Callable[[Any], bytes], send: Send) -> None:
    # Sync generators run in the threadpool, one item at a time, as FastAPI runs them.
    source: Any = iterate_in_threadpool(items)
    try:
        async for item in source:
            await send(frame(item))
    finally:
        with anyio.CancelScope(shield=True):
            await source.aclose()
            close = getattr(items, "close", None)
            if close is not None:  # its `finally` runs at once, in a thread as its body ran
                await anyio.to_thread.run_sync(close)
