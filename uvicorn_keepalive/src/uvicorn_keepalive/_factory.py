"""``protocol()``: a keepalive protocol class with settings chosen in Python."""

from __future__ import annotations

from typing import Literal, overload

from uvicorn_keepalive._protocol import H11Protocol, Protocol, configured_class
from uvicorn_keepalive._settings import (
    DEFAULT_COUNT,
    DEFAULT_IDLE,
    DEFAULT_INTERVAL,
    KeepaliveSettings,
)


class _Default(int):
    """A default that ``protocol()`` tells apart from the same number passed explicitly.

    Only an argument left at its default is taken from the environment.
    """

    __slots__ = ()


_IDLE = _Default(DEFAULT_IDLE)
_INTERVAL = _Default(DEFAULT_INTERVAL)
_COUNT = _Default(DEFAULT_COUNT)


@overload
def protocol(
    idle: int = ...,
    interval: int = ...,
    count: int = ...,
    *,
    user_timeout: int | None = ...,
    http: Literal["httptools"] = ...,
) -> type[Protocol]: ...


@overload
def protocol(
    idle: int = ...,
    interval: int = ...,
    count: int = ...,
    *,
    user_timeout: int | None = ...,
    http: Literal["h11"],
) -> type[H11Protocol]: ...


def protocol(
    idle: int = _IDLE,
    interval: int = _INTERVAL,
    count: int = _COUNT,
    *,
    user_timeout: int | None = None,
    http: Literal["httptools", "h11"] = "httptools",
) -> type[Protocol] | type[H11Protocol]:
    """Return a protocol class that applies these keepalive settings.

    Pass the result as ``http=`` to ``uvicorn.run()`` or ``uvicorn.Config``; it
    pickles (by its settings), so ``workers > 1`` works too. The class is a
    subclass of `Protocol` (or of `H11Protocol` with
    ``http="h11"``), created once per process for each distinct set of settings:
    calling ``protocol()`` again with the same values returns the same class.

    An argument left at its default is taken from its ``UVICORN_KEEPALIVE_*``
    variable when that is set; an argument given explicitly always wins.

    Args:
        idle: Seconds without data before the first probe, 1 to 32767.
        interval: Seconds between unanswered probes, 1 to 32767.
        count: Unanswered probes before the connection is reset, 1 to 127.
        user_timeout: Milliseconds sent data may stay unacknowledged before the
            connection is reset (``TCP_USER_TIMEOUT``, RFC 5482, Linux), or
            ``None`` for the kernel default.
        http: ``"httptools"`` (the default) for uvicorn's httptools protocol,
            ``"h11"`` for its h11 protocol.

    Returns:
        The protocol class.

    Raises:
        TypeError: A setting is not an int.
        ValueError: A setting is out of range, or a ``UVICORN_KEEPALIVE_*``
            variable it reads is invalid; the message names the argument or the
            variable. ``http`` is neither ``"httptools"`` nor ``"h11"``.
    """
    if http not in ("httptools", "h11"):
        raise ValueError(f'http must be "httptools" or "h11", got {http!r}')
    explicit: dict[str, int | None] = {}
    for name, value in (("idle", idle), ("interval", interval), ("count", count)):
        if not isinstance(value, _Default):
            explicit[name] = value
    if user_timeout is not None:
        explicit["user_timeout"] = user_timeout
    settings = KeepaliveSettings.from_environment(**explicit)
    return configured_class(http, settings)  # type: ignore[return-value]
