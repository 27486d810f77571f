"""The socket options of the settings on this platform, applied to servers' and clients' sockets."""

from __future__ import annotations

import functools
import socket
import sys
from asyncio.trsock import TransportSocket
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from uvicorn_keepalive._settings import Fields, KeepaliveSettings, logger, resolve

if TYPE_CHECKING:
    from typing_extensions import Unpack

SocketLike = socket.socket | TransportSocket  # uvloop's PseudoSocket is untyped
#: ``(name, level, option, value)`` for setsockopt, SO_KEEPALIVE first; level None: Windows'
#: SIO_KEEPALIVE_VALS ioctl where Python has no TCP_KEEPIDLE (before Windows 10 1709):
#: https://learn.microsoft.com/windows/win32/winsock/sio-keepalive-vals
Call = tuple[str, int | None, int, Any]
Plan = tuple[Call, ...]
_CONSTANTS = ("TCP_KEEPIDLE", "TCP_KEEPALIVE", "TCP_KEEPINTVL", "TCP_KEEPCNT",
              "TCP_USER_TIMEOUT", "TCP_NODELAY", "SIO_KEEPALIVE_VALS")  # fmt: skip


def is_tcp(address: object) -> bool:
    # Whether a socket whose local address is ``address`` is TCP over IPv4 or IPv6: Python
    # decodes an address by the family the kernel reports, a tuple for IP, a path for AF_UNIX.
    # The socket's family may lie (uvicorn wraps an --fd listener as AF_UNIX), its proto be 0.
    return isinstance(address, tuple)


@functools.lru_cache(maxsize=64)
def plan(settings: KeepaliveSettings) -> Plan:
    # The calls applying ``settings``, worked out (and warned about) once per process.
    constants = (getattr(socket, name, None) for name in _CONSTANTS)
    keepidle, keepalive, keepintvl, keepcnt, user_timeout, nodelay, sio = constants
    ioctl = sio if keepidle is None and keepalive is None else None
    if settings.user_timeout is not None and settings.user_timeout < settings.detection_time * 1000:
        # With TCP_USER_TIMEOUT set, Linux drops a connection as soon as one probe is
        # unanswered past it (tcp_keepalive_timer in net/ipv4/tcp_timer.c).
        logger.warning(
            "user_timeout=%d ms is shorter than idle + interval x count = %d ms: "
            "a single unanswered keepalive probe will close an idle connection",
            *(settings.user_timeout, settings.detection_time * 1000),
        )
    calls: list[Call] = [("SO_KEEPALIVE", socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)]
    # macOS names the idle time TCP_KEEPALIVE (0x10 in netinet/tcp.h).
    idle = "TCP_KEEPALIVE" if keepidle is None and keepalive is not None else "TCP_KEEPIDLE"
    missing = []
    for name, option, value in (
        (idle, keepidle or keepalive, settings.idle),
        ("TCP_KEEPINTVL", keepintvl, settings.interval),
        ("TCP_KEEPCNT", keepcnt, settings.count),
        ("TCP_USER_TIMEOUT", user_timeout, settings.user_timeout),
        ("TCP_NODELAY", nodelay, 1 if settings.nodelay else None),
    ):
        if option is not None and value is not None:
            calls.append((name, socket.IPPROTO_TCP, option, value))
        elif value is not None and not (ioctl and name in ("TCP_KEEPIDLE", "TCP_KEEPINTVL")):
            missing.append(name)
    if missing:  # one line, once per process and settings
        logger.warning(
            "TCP keepalive: %s not available on this platform (%s): left at the system default",
            *(", ".join(missing), sys.platform),
        )
    if ioctl is not None:
        milliseconds = (1, settings.idle * 1000, settings.interval * 1000)
        calls.append(("SIO_KEEPALIVE_VALS", None, ioctl, milliseconds))
    return tuple(calls)


def apply(sock: SocketLike, plan: Plan) -> dict[str, int]:
    # Make the calls of ``plan`` on ``sock`` as set_keepalive says; return what was applied.
    applied: dict[str, int] = {}
    if (fileno := sock.fileno()) < 0:  # closed
        return applied
    # Only a socket.socket has ioctl(): borrow the descriptor in one, detached after.
    direct = isinstance(sock, socket.socket) or plan[-1][1] is not None
    target = sock if direct else socket.socket(sock.family, socket.SOCK_STREAM, 0, fileno)
    try:
        for name, level, option, value in plan:
            try:
                if level is not None:
                    target.setsockopt(level, option, value)
                    applied[name] = value
                    continue
                target.ioctl(option, value)  # type: ignore[attr-defined,union-attr,unused-ignore]
                applied[f"{name}.keepalivetime"], applied[f"{name}.keepaliveinterval"] = value[1:]
            except OSError as exc:
                logger.debug("TCP keepalive: %s refused on fd %d: %s", name, fileno, exc)
                if name == "SO_KEEPALIVE":
                    return applied
    finally:
        if target is not sock:
            target.detach()
    return applied


def set_keepalive(
    sock: SocketLike, settings: KeepaliveSettings | None = None, /, **fields: Unpack[Fields]
) -> dict[str, int]:
    """Apply the settings to ``sock``, a TCP ``socket.socket`` or transport socket; no OSError.

    ``SO_KEEPALIVE``, then the options this platform has (those it lacks named in one WARNING
    line per process and settings); one the kernel refuses is logged at DEBUG and skipped.

    Returns:
        What was applied, e.g. ``{"SO_KEEPALIVE": 1, "TCP_KEEPIDLE": 60, ...}``; empty when
        the socket is not TCP (left untouched), is closed or refused ``SO_KEEPALIVE``.
    """
    calls = plan(resolve(settings, fields))
    try:
        return apply(sock, calls) if is_tcp(sock.getsockname()) else {}
    except OSError:  # closed
        return {}


def socket_options(
    settings: KeepaliveSettings | None = None, /, **fields: Unpack[Fields]
) -> list[tuple[int, int, int]]:
    """`set_keepalive`'s options for ``httpx.HTTPTransport(socket_options=...)``, not an ioctl."""
    calls = plan(resolve(settings, fields))
    return [(level, option, value) for _, level, option, value in calls if level is not None]


def socket_factory(
    settings: KeepaliveSettings | None = None, /, **fields: Unpack[Fields]
) -> Callable[[tuple[Any, ...]], socket.socket]:
    """For ``aiohttp.TCPConnector(socket_factory=...)``: a socket made as `set_keepalive` says."""
    calls = plan(resolve(settings, fields))

    def create_socket(address_info: tuple[Any, ...]) -> socket.socket:
        sock = socket.socket(*address_info[:3])
        apply(sock, calls)
        return sock

    return create_socket
