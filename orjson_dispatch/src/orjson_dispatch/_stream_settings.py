"""`StreamSettings`: a stream's pings, how long it waits for a slow client, how much it holds.

Each setting is a deliberate divergence from FastAPI's streams, listed with its reason where it
acts: the ping interval per route (`_streams`, 1), the bound in bytes (`_stream_sending`, 4)
and the send timeout (`_stream_sending`, 6).
"""

from __future__ import annotations

import dataclasses
import math

__all__ = ["BUFFER_BYTES", "StreamSettings"]

BUFFER_BYTES = 65_536
"""The default `buffer_bytes`: asyncio's (and so uvicorn's) write buffer high-water mark."""


@dataclasses.dataclass(frozen=True)
class StreamSettings:
    """The pings, send timeout and buffer of JSON Lines and Server-Sent Events streams.

    The ping interval and send timeout default to FastAPI's behaviour. Give the settings to a
    `DispatchRoute` subclass (for every route of a router, or one route with
    `route_class_override`)::

        class ModelRoute(DispatchRoute):
            stream_settings = StreamSettings(ping_interval=5, send_timeout=30)

    Attributes:
        ping_interval: Seconds without an event before a Server-Sent Events stream sends the
            comment `: ping` (and between pings). None: FastAPI's interval, 15 s.
        send_timeout: Seconds a client may take nothing of a stream whose send waits; then
            the stream ends, its generator is closed (its `finally` runs) and the request
            fails with a `TimeoutError` that the server logs once, closing the connection.
            Under uvicorn on Linux and macOS, what is timed is the client's progress, read
            from the socket while a send waits (sampled `send_timeout / n` apart, n the
            smallest count making that at most 0.1 s); elsewhere, the time one send waits.
            None: wait as long as the connection stays open.
        buffer_bytes: The most bytes of frames a stream holds between the generator and the
            socket, counting what uvicorn's transport buffer holds (the kernel's socket
            buffers are not the process's memory): the generator is asked for its next item
            only while the stream holds less, or when nothing waits to be sent (an event
            larger than the bound is held alone). Default 64 KiB.

    Raises:
        ValueError: `ping_interval` or `send_timeout` is not a positive finite number of
            seconds (or None), or `buffer_bytes` not a positive integer.
    """

    ping_interval: float | None = None
    send_timeout: float | None = None
    buffer_bytes: int = BUFFER_BYTES

    def __post_init__(self) -> None:
        for name in ("ping_interval", "send_timeout"):
            check_seconds(name, getattr(self, name))
        size = self.buffer_bytes
        if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
            msg = f"buffer_bytes must be a positive number of bytes, not {size!r}"
            raise ValueError(msg)


def check_seconds(name: str, value: object) -> None:
    """Refuse anything but None or a positive finite number of seconds, naming the setting."""
    if value is None:
        return
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value <= 0
    ):
        msg = f"{name} must be a positive number of seconds or None, not {value!r}"
        raise ValueError(msg)
