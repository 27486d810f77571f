"""The same settings for the client side: raw sockets, httpx (openai, anthropic), aiohttp."""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Any

from uvicorn_keepalive._settings import KeepaliveSettings
from uvicorn_keepalive._socket import SocketLike, apply, is_tcp, plan


def _settings(*values: int | bool | None) -> KeepaliveSettings:
    # As protocol() does: an argument left at None comes from its UVICORN_KEEPALIVE_*
    # variable when set, else from its default.
    names = ("idle", "interval", "count", "user_timeout", "nodelay")
    return KeepaliveSettings.from_environment(**dict(zip(names, values, strict=True)))


def set_keepalive(
    sock: SocketLike,
    idle: int | None = None,
    interval: int | None = None,
    count: int | None = None,
    *,
    user_timeout: int | None = None,
    nodelay: bool | None = None,
) -> dict[str, int]:
    """Apply the settings to a connected or listening TCP socket.

    Sets ``SO_KEEPALIVE``, then the idle time, probe interval and probe count with the
    options this platform has, ``TCP_USER_TIMEOUT`` when asked for, and ``TCP_NODELAY``
    unless ``nodelay`` is ``False``. An option missing from the ``socket`` module is
    logged at WARNING once per process and settings; one the kernel refuses is logged
    at DEBUG and skipped. Never raises OSError.

    Args:
        sock: A ``socket.socket``, or what an asyncio or uvloop transport returns for
            ``get_extra_info("socket")``. A socket that is not TCP is left untouched.
        idle: See `KeepaliveSettings` for these and their ranges; an argument left at
            ``None`` comes from its ``UVICORN_KEEPALIVE_*`` variable when that is set,
            else from its default.
        interval: See ``idle``.
        count: See ``idle``.
        user_timeout: See ``idle``.
        nodelay: See ``idle``.

    Returns:
        What was applied, option name to value, for example ``{"SO_KEEPALIVE": 1,
        "TCP_KEEPIDLE": 60, "TCP_KEEPINTVL": 10, "TCP_KEEPCNT": 3, "TCP_NODELAY": 1}``;
        empty when the socket is not TCP, is closed or refused ``SO_KEEPALIVE``.

    Raises:
        TypeError: A setting has the wrong type.
        ValueError: A setting, or a variable it reads, is out of range; the message names it.
    """
    settings = _settings(idle, interval, count, user_timeout, nodelay)
    try:
        address = sock.getsockname()
    except OSError:  # closed
        return {}
    return apply(sock, plan(settings)) if is_tcp(address) else {}


def socket_options(
    idle: int | None = None,
    interval: int | None = None,
    count: int | None = None,
    *,
    user_timeout: int | None = None,
    nodelay: bool | None = None,
) -> list[tuple[int, int, int]]:
    """The ``(level, option, value)`` list for ``httpx.HTTPTransport(socket_options=...)``.

    httpx's ``HTTPTransport`` and ``AsyncHTTPTransport`` (httpcore) call ``setsockopt``
    with each of them on every connection they open, so the ``openai`` and
    ``anthropic`` clients get them through ``http_client=``. The arguments are those of
    `set_keepalive`. On Windows before 10 1709 the idle time and interval need an ioctl,
    which a list of options cannot carry: use `socket_factory` there.

    Raises:
        TypeError: A setting has the wrong type.
        ValueError: A setting, or a variable it reads, is out of range; the message names it.
    """
    settings = _settings(idle, interval, count, user_timeout, nodelay)
    return [(level, option, value) for _, level, option, value in plan(settings).options]


def socket_factory(
    idle: int | None = None,
    interval: int | None = None,
    count: int | None = None,
    *,
    user_timeout: int | None = None,
    nodelay: bool | None = None,
) -> Callable[[tuple[Any, ...]], socket.socket]:
    """A socket factory for ``aiohttp.TCPConnector(socket_factory=...)`` (aiohttp 3.12+).

    aiohttp calls it with the ``getaddrinfo`` entry ``(family, type, proto, canonname,
    address)`` of each address it connects to; the factory creates the socket and applies
    the settings, as `set_keepalive` does, before aiohttp connects it. The arguments are
    those of `set_keepalive`.

    Raises:
        TypeError: A setting has the wrong type.
        ValueError: A setting, or a variable it reads, is out of range; the message names it.
    """
    calls = plan(_settings(idle, interval, count, user_timeout, nodelay))

    def create_socket(address_info: tuple[Any, ...]) -> socket.socket:
        family, kind, proto = address_info[:3]
        sock = socket.socket(family, kind, proto)
        apply(sock, calls)
        return sock

    return create_socket
