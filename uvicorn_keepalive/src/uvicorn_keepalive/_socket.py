"""The socket options of a set of settings on this platform, and the one function applying them."""

from __future__ import annotations

import functools
import socket
import sys
from asyncio.trsock import TransportSocket
from typing import NamedTuple

from uvicorn_keepalive._settings import KeepaliveSettings, logger

#: A ``socket.socket`` or asyncio's ``TransportSocket``; uvloop's ``PseudoSocket`` is untyped.
SocketLike = socket.socket | TransportSocket


def is_tcp(address: object) -> bool:
    """Whether a socket whose local address is ``address`` is TCP over IPv4 or IPv6."""
    # Python decodes an address by the family the kernel reports: a tuple for IP, a path for
    # AF_UNIX. The socket object's family may lie (uvicorn wraps an --fd listener as AF_UNIX)
    # and its proto may be 0 (uvicorn's --workers listener).
    return isinstance(address, tuple)


class Plan(NamedTuple):
    """The calls that apply one set of settings on this platform."""

    options: tuple[tuple[str, int, int, int], ...]  # (name, level, option, value), SO_KEEPALIVE 1st
    # (control, idle ms, interval ms) of Windows' SIO_KEEPALIVE_VALS ioctl where Python has no
    # TCP_KEEPIDLE (Windows before 10 1709, whose Python build removes the constants):
    # https://learn.microsoft.com/windows/win32/winsock/sio-keepalive-vals
    keepalive_vals: tuple[int, int, int] | None


_CONSTANTS = ("TCP_KEEPIDLE", "TCP_KEEPALIVE", "TCP_KEEPINTVL", "TCP_KEEPCNT",
              "TCP_USER_TIMEOUT", "TCP_NODELAY", "SIO_KEEPALIVE_VALS")  # fmt: skip


def plan(settings: KeepaliveSettings) -> Plan:
    """The calls that apply ``settings``, worked out (and warned about) once per process."""
    return _plan(settings, tuple(getattr(socket, name, None) for name in _CONSTANTS))


@functools.lru_cache(maxsize=64)
def _plan(settings: KeepaliveSettings, constants: tuple[int | None, ...]) -> Plan:
    keepidle, keepalive, keepintvl, keepcnt, user_timeout, nodelay, sio = constants
    keepalive_vals = None
    if keepidle is None and keepalive is None and sio is not None:
        keepalive_vals = (sio, settings.idle * 1000, settings.interval * 1000)
    # macOS names the idle time TCP_KEEPALIVE (0x10 in netinet/tcp.h).
    idle_name = "TCP_KEEPIDLE" if keepidle is not None or keepalive is None else "TCP_KEEPALIVE"
    if settings.user_timeout is not None and settings.user_timeout < settings.detection_time * 1000:
        # With TCP_USER_TIMEOUT set, Linux drops a connection as soon as one probe is
        # unanswered past it (tcp_keepalive_timer in net/ipv4/tcp_timer.c).
        logger.warning(
            "user_timeout=%d ms is shorter than idle + interval x count = %d ms: "
            "a single unanswered keepalive probe will close an idle connection",
            settings.user_timeout,
            settings.detection_time * 1000,
        )
    default, ack = "stays at the system default", "may wait for an ACK"
    wanted = [
        (idle_name, keepidle or keepalive, settings.idle, f"the idle time {default}"),
        ("TCP_KEEPINTVL", keepintvl, settings.interval, f"the probe interval {default}"),
        ("TCP_KEEPCNT", keepcnt, settings.count, f"the probe count {default}"),
        ("TCP_USER_TIMEOUT", user_timeout, settings.user_timeout, "user_timeout is ignored"),
        ("TCP_NODELAY", nodelay, 1 if settings.nodelay else None, f"small responses {ack}"),
    ]
    options = [("SO_KEEPALIVE", socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)]
    for name, option, value, consequence in wanted:
        if value is None:
            continue
        if option is not None:
            options.append((name, socket.IPPROTO_TCP, option, value))
        elif keepalive_vals is None or name not in ("TCP_KEEPIDLE", "TCP_KEEPINTVL"):
            logger.warning(
                "TCP keepalive: %s is not available on this platform (%s); %s",
                name,
                sys.platform,
                consequence,
            )
    return Plan(tuple(options), keepalive_vals)


def apply(sock: SocketLike, plan: Plan) -> dict[str, int]:
    """Make the calls of ``plan`` on ``sock`` as `set_keepalive` says; return what was applied."""
    applied: dict[str, int] = {}
    fileno = sock.fileno()
    if fileno < 0:  # closed
        return applied
    direct = isinstance(sock, socket.socket) or (
        isinstance(sock, TransportSocket) and plan.keepalive_vals is None
    )
    # uvloop's socket, and asyncio's for the ioctl only a socket.socket has, go through one
    # borrowing the descriptor, detached after. Family and type given: no getsockopt each.
    target = sock if direct else socket.socket(sock.family, socket.SOCK_STREAM, 0, fileno)
    try:
        for name, level, option, value in plan.options:
            try:
                target.setsockopt(level, option, value)
            except OSError as exc:
                logger.debug("TCP keepalive: %s refused on fd %d: %s", name, fileno, exc)
                if name == "SO_KEEPALIVE":
                    return applied
                continue
            applied[name] = value
        if plan.keepalive_vals is not None:
            control, idle_ms, interval_ms = plan.keepalive_vals
            try:
                target.ioctl(control, (1, idle_ms, interval_ms))  # type: ignore[attr-defined,union-attr,unused-ignore]
            except OSError as exc:
                logger.debug("TCP keepalive: SIO_KEEPALIVE_VALS refused on fd %d: %s", fileno, exc)
            else:
                applied["SIO_KEEPALIVE_VALS.keepalivetime"] = idle_ms
                applied["SIO_KEEPALIVE_VALS.keepaliveinterval"] = interval_ms
    finally:
        if target is not sock:
            target.detach()
    return applied
