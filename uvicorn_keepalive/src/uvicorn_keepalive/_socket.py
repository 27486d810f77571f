"""Turning TCP keepalive on for one socket, on every platform that has it."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import socket
import sys
from collections.abc import Iterator
from typing import Any, Protocol

from uvicorn_keepalive._log import logger, warn_once
from uvicorn_keepalive._settings import (
    DEFAULT_COUNT,
    DEFAULT_IDLE,
    DEFAULT_INTERVAL,
    KeepaliveSettings,
)


class SocketLike(Protocol):
    """A ``socket.socket``, asyncio's ``TransportSocket`` or uvloop's ``PseudoSocket``."""

    @property
    def family(self) -> int:
        """The address family the socket object was created with."""

    def fileno(self) -> int:
        """The file descriptor (a SOCKET handle on Windows)."""

    def getsockname(self) -> Any:
        """The local address."""


@dataclasses.dataclass(frozen=True)
class Plan:
    """The calls that apply one set of settings on this platform.

    Attributes:
        options: ``(name, level, option, value)`` of each ``setsockopt`` call,
            ``SO_KEEPALIVE`` first.
        keepalive_vals: Windows' ``SIO_KEEPALIVE_VALS`` ioctl as ``(control,
            idle ms, interval ms)`` where Python has no ``TCP_KEEPIDLE``: Windows
            before 10 1709, whose Python build removes the constants at import.
            https://learn.microsoft.com/windows/win32/winsock/sio-keepalive-vals
    """

    options: tuple[tuple[str, int, int, int], ...]
    keepalive_vals: tuple[int, int, int] | None = None


@functools.lru_cache(maxsize=64)
def plan_for(settings: KeepaliveSettings) -> Plan:
    """The calls that apply ``settings`` here, from the constants ``socket`` has.

    Each option the platform lacks is logged once per process at WARNING.
    """
    # macOS names the idle time TCP_KEEPALIVE (0x10 in netinet/tcp.h).
    idle = next((name for name in ("TCP_KEEPIDLE", "TCP_KEEPALIVE") if hasattr(socket, name)), None)
    sio = getattr(socket, "SIO_KEEPALIVE_VALS", None)
    keepalive_vals = None
    if idle is None and sio is not None:
        keepalive_vals = (sio, settings.idle * 1000, settings.interval * 1000)
    wanted = [
        (idle or "TCP_KEEPIDLE", settings.idle, "the idle time stays at the system default"),
        ("TCP_KEEPINTVL", settings.interval, "the probe interval stays at the system default"),
        ("TCP_KEEPCNT", settings.count, "the probe count stays at the system default"),
    ]
    if settings.user_timeout is not None:
        wanted.append(("TCP_USER_TIMEOUT", settings.user_timeout, "user_timeout is ignored"))
    options = [("SO_KEEPALIVE", socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)]
    for name, value, consequence in wanted:
        option = getattr(socket, name, None)
        if option is not None:
            options.append((name, socket.IPPROTO_TCP, option, value))
        elif keepalive_vals is None or name not in ("TCP_KEEPIDLE", "TCP_KEEPINTVL"):
            warn_once(
                name,
                "TCP keepalive: %s is not available on this platform (%s); %s",
                name,
                sys.platform,
                consequence,
            )
    return Plan(tuple(options), keepalive_vals)


_INET_FAMILIES = frozenset({socket.AF_INET, socket.AF_INET6})


def is_tcp(sock: SocketLike) -> bool:
    """Whether ``sock`` is AF_INET or AF_INET6, by its family (``proto`` may be 0).

    uvicorn wraps an ``--fd`` listener as AF_UNIX whatever it is, and its accepted
    sockets carry that label: such a socket is judged by its address instead, a
    ``(host, port, ...)`` tuple for TCP, a path for a Unix socket.
    """
    family = sock.family
    if family in _INET_FAMILIES:
        return True
    try:
        return family == getattr(socket, "AF_UNIX", None) and isinstance(sock.getsockname(), tuple)
    except OSError:
        return False


@contextlib.contextmanager
def borrowed(sock: SocketLike) -> Iterator[socket.socket]:
    """``sock`` as a ``socket.socket`` that never closes its descriptor.

    asyncio's ``TransportSocket`` has no ``ioctl()`` and uvloop's ``PseudoSocket``
    makes a socket object of its own for each call (about 2 us): one object
    borrowing the descriptor serves every call, and is detached again so that
    closing (or collecting) it never closes the connection.
    """
    if isinstance(sock, socket.socket):
        yield sock
        return
    # The family and type are given: their detection would take three getsockopt calls.
    borrower = socket.socket(sock.family, socket.SOCK_STREAM, 0, sock.fileno())
    try:
        yield borrower
    finally:
        borrower.detach()


def apply(sock: SocketLike, plan: Plan) -> dict[str, int]:
    """Make the calls of ``plan`` on ``sock`` in order; never raises OSError.

    A refused call is logged at DEBUG and skipped; if ``SO_KEEPALIVE`` itself is
    refused (for example ECONNRESET on a connection the peer already reset, or
    EBADF) nothing else is tried.

    Returns:
        What was applied: option name to the value the kernel accepted.
    """
    applied: dict[str, int] = {}
    try:
        with borrowed(sock) as target:
            for name, level, option, value in plan.options:
                try:
                    target.setsockopt(level, option, value)
                except OSError as exc:
                    _refused(sock, name, exc)
                    if name == "SO_KEEPALIVE":
                        return applied
                    continue
                applied[name] = value
            if plan.keepalive_vals is not None:
                control, idle_ms, interval_ms = plan.keepalive_vals
                try:
                    target.ioctl(control, (1, idle_ms, interval_ms))  # type: ignore[attr-defined,unused-ignore]
                except OSError as exc:
                    _refused(sock, "SIO_KEEPALIVE_VALS", exc)
                else:
                    applied["SIO_KEEPALIVE_VALS.keepalivetime"] = idle_ms
                    applied["SIO_KEEPALIVE_VALS.keepaliveinterval"] = interval_ms
    except OSError as exc:  # the descriptor could not be borrowed: closed meanwhile
        _refused(sock, "SO_KEEPALIVE", exc)
    return applied


def _refused(sock: SocketLike, option: str, exc: OSError) -> None:
    logger.debug("TCP keepalive: %s refused on fd %d: %s", option, sock.fileno(), exc)


def set_keepalive(
    sock: SocketLike,
    idle: int = DEFAULT_IDLE,
    interval: int = DEFAULT_INTERVAL,
    count: int = DEFAULT_COUNT,
    *,
    user_timeout: int | None = None,
) -> dict[str, int]:
    """Turn TCP keepalive on for a connected or listening TCP socket.

    Sets ``SO_KEEPALIVE``, then the idle time, probe interval and probe count with
    the options this platform has: ``TCP_KEEPIDLE``, ``TCP_KEEPINTVL`` and
    ``TCP_KEEPCNT`` on Linux, FreeBSD and Windows 10 1709+; ``TCP_KEEPALIVE`` for
    the idle time on macOS; the ``SIO_KEEPALIVE_VALS`` ioctl (idle and interval)
    on Windows without them. ``user_timeout`` sets ``TCP_USER_TIMEOUT`` (Linux).
    An option missing from the ``socket`` module is logged once per process at
    WARNING; an option the kernel refuses (EINVAL, ENOPROTOOPT, EOPNOTSUPP,
    ECONNRESET, EBADF...) is logged at DEBUG and skipped. Never raises OSError.

    Args:
        sock: A TCP socket: ``socket.socket`` or the object that an asyncio or
            uvloop transport returns for ``get_extra_info("socket")``. Any other
            family (AF_UNIX) is left untouched.
        idle: Seconds without data before the first probe, 1 to 32767.
        interval: Seconds between unanswered probes, 1 to 32767.
        count: Unanswered probes before the connection is reset, 1 to 127.
        user_timeout: Milliseconds sent data may stay unacknowledged before the
            connection is reset (``TCP_USER_TIMEOUT``, RFC 5482), or ``None``.

    Returns:
        What was applied, option name to value, for example ``{"SO_KEEPALIVE": 1,
        "TCP_KEEPIDLE": 60, "TCP_KEEPINTVL": 10, "TCP_KEEPCNT": 3}``; empty when
        the socket is not TCP or refused SO_KEEPALIVE.

    Raises:
        TypeError: A setting is not an int.
        ValueError: A setting is out of range; the message names it.
    """
    settings = KeepaliveSettings(idle, interval, count, user_timeout)
    if not is_tcp(sock):
        return {}
    return apply(sock, plan_for(settings))
