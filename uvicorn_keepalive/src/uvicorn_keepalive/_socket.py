"""The socket calls of the settings on this platform, made on servers' and clients' sockets."""

from __future__ import annotations

import functools
import socket
import sys
from asyncio.trsock import TransportSocket
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from uvicorn_keepalive._settings import OPTIONS, Fields, KeepaliveSettings, logger, resolve

if TYPE_CHECKING:
    from typing_extensions import Unpack

SocketLike = socket.socket | TransportSocket  # uvloop's PseudoSocket is untyped
Plan = dict[str, tuple[int, int, int]]  # setsockopt's arguments by name, SO_KEEPALIVE first


def is_tcp(address: object) -> bool:
    # Whether a socket of local address ``address`` is TCP over IPv4 or IPv6: Python decodes
    # an address by the family the kernel reports, a tuple for IP, a path for AF_UNIX. The
    # socket's family may lie (uvicorn wraps an --fd listener as AF_UNIX), its proto be 0.
    return isinstance(address, tuple)


@functools.lru_cache(maxsize=64)
def plan(settings: KeepaliveSettings) -> Plan:
    # The calls of ``settings`` on this platform, worked out (and warned about) once.
    detection = settings.detection_time * 1000
    if settings.user_timeout is not None and settings.user_timeout < detection:
        # What Linux does then: tcp_keepalive_timer in net/ipv4/tcp_timer.c.
        logger.warning(
            "user_timeout=%d ms is shorter than idle + interval x count = %d ms: a single "
            "unanswered keepalive probe will close an idle connection",
            settings.user_timeout,
            detection,
        )
    calls = {"SO_KEEPALIVE": (socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)}
    missing = []
    for option in OPTIONS:
        value = getattr(settings, option.name)
        if value is None or value is False:  # unset, or a switch off
            continue
        if name := next((n for n in option.constants if hasattr(socket, n)), ""):
            calls[name] = (socket.IPPROTO_TCP, getattr(socket, name), int(value))
        else:
            missing.append(option.constants[0])
    if missing:  # one line, once per process and settings
        logger.warning(
            "TCP keepalive: %s not available on this platform (%s): left at the system default",
            ", ".join(missing),
            sys.platform,
        )
    return calls


def apply(sock: SocketLike, plan: Plan) -> dict[str, int]:
    # Make the calls of ``plan`` on ``sock`` as set_keepalive says; return what was applied.
    applied: dict[str, int] = {}
    for name, (level, option, value) in plan.items():
        try:
            sock.setsockopt(level, option, value)
        except OSError as exc:
            logger.debug("TCP keepalive: %s refused on fd %d: %s", name, sock.fileno(), exc)
            if name == "SO_KEEPALIVE":
                break
        else:
            applied[name] = value
    return applied


def set_keepalive(
    sock: SocketLike, settings: KeepaliveSettings | None = None, /, **fields: Unpack[Fields]
) -> dict[str, int]:
    """Set ``SO_KEEPALIVE`` and the settings on a TCP ``socket.socket`` or transport socket.

    The options this platform lacks are named in one WARNING line per process and settings;
    one the kernel refuses is logged at DEBUG and skipped; OSError is never raised.

    Returns:
        What was set (``{"SO_KEEPALIVE": 1, "TCP_KEEPIDLE": 60, ...}``); nothing for a socket
        that is not TCP (left untouched), closed, or refusing ``SO_KEEPALIVE``.
    """
    calls = plan(resolve(settings, fields))
    try:
        return apply(sock, calls) if is_tcp(sock.getsockname()) else {}
    except OSError:  # closed
        return {}


def socket_options(
    settings: KeepaliveSettings | None = None, /, **fields: Unpack[Fields]
) -> list[tuple[int, int, int]]:
    """`set_keepalive`'s options for ``httpx.HTTPTransport(socket_options=...)``."""
    return list(plan(resolve(settings, fields)).values())


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
