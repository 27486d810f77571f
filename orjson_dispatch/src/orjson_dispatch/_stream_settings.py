"""`StreamSettings`: how long a stream stays silent before a ping, and waits for a slow client."""

from __future__ import annotations

import dataclasses
import math

__all__ = ["StreamSettings"]


@dataclasses.dataclass(frozen=True)
class StreamSettings:
    """The ping interval and send timeout of JSON Lines and Server-Sent Events streams.

    The defaults are FastAPI's behaviour. Give them to a `DispatchRoute` subclass (for every
    route of a router, or one route with `route_class_override`)::

        class ModelRoute(DispatchRoute):
            stream_settings = StreamSettings(ping_interval=5, send_timeout=30)

    Attributes:
        ping_interval: Seconds without an event before a Server-Sent Events stream sends the
            comment `: ping` (and between pings). None: FastAPI's interval, 15 s.
        send_timeout: Seconds a send may wait for a client that reads nothing; then the stream
            ends, its generator is closed (its `finally` runs, dependencies with `yield` are
            torn down) and the request fails with a `TimeoutError` that the server logs once,
            closing the connection. None: wait as long as the connection stays open.

    Raises:
        ValueError: A setting is not a positive finite number of seconds (or None).
    """

    ping_interval: float | None = None
    send_timeout: float | None = None

    def __post_init__(self) -> None:
        for name in ("ping_interval", "send_timeout"):
            check_seconds(name, getattr(self, name))


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
