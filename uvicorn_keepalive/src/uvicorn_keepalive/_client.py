"""The same settings for the client side: raw sockets, httpx (openai, anthropic), aiohttp."""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Any

from uvicorn_keepalive._settings import from_arguments
from uvicorn_keepalive._socket import SocketLike, apply, is_tcp, plan


def set_keepalive(
    sock: SocketLike,
    idle: int | None = None,
    interval: int | None = None,
    count: int | None = None,
    *,
    user_timeout: int | None = None,
    nodelay: bool | None = None,
) -> dict[str, int]:
    """Apply the settings to ``sock``, a connected or listening TCP socket; never raises OSError.

    ``sock`` is a ``socket.socket``, or what an asyncio or uvloop transport returns for
    ``get_extra_info("socket")``. Sets ``SO_KEEPALIVE``, the idle time, probe interval and
    probe count with the options this platform has, ``TCP_USER_TIMEOUT`` when given, and
    ``TCP_NODELAY`` unless ``nodelay`` is ``False``. An option missing from the ``socket``
    module is logged at WARNING once per process and settings; one the kernel refuses is
    logged at DEBUG and skipped. The settings, and their errors, are those of
    `KeepaliveSettings.from_environment`.

    Returns:
        What was applied, option name to value, e.g. ``{"SO_KEEPALIVE": 1, "TCP_KEEPIDLE": 60,
        "TCP_KEEPINTVL": 10, "TCP_KEEPCNT": 3, "TCP_NODELAY": 1}``; empty when the socket is
        not TCP (left untouched), is closed or refused ``SO_KEEPALIVE``.
    """
    settings = from_arguments(idle, interval, count, user_timeout, nodelay)
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

    httpx's ``HTTPTransport`` and ``AsyncHTTPTransport`` set them on every connection they
    open, so the ``openai`` and ``anthropic`` clients get them through ``http_client=``. The
    options are those `set_keepalive` sets, except where only an ioctl sets the idle time
    and interval (Windows before 10 1709): use `socket_factory` there. The settings, and
    their errors, are those of `KeepaliveSettings.from_environment`.
    """
    settings = from_arguments(idle, interval, count, user_timeout, nodelay)
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
    address)`` of each address it connects to; it creates the socket and applies the
    settings as `set_keepalive` does, before aiohttp connects it. The settings, and their
    errors, are those of `KeepaliveSettings.from_environment`.
    """
    calls = plan(from_arguments(idle, interval, count, user_timeout, nodelay))

    def create_socket(address_info: tuple[Any, ...]) -> socket.socket:
        sock = socket.socket(*address_info[:3])
        apply(sock, calls)
        return sock

    return create_socket
