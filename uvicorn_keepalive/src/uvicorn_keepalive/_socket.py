"""The socket calls of the settings on this platform, made on servers' and clients' sockets."""

from __future__ import annotations

import functools
import socket
import sys
from asyncio.trsock import TransportSocket
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from uvicorn_keepalive._settings import OPTIONS, Fields, KeepaliveSettings, logger, resolve

if TYPE_CHECKING:
    from typing_extensions import Unpack

SocketLike = socket.socket | TransportSocket  # uvloop's PseudoSocket is untyped


class Plan(NamedTuple):
    calls: dict[str, tuple[int, int, int]]  # setsockopt's arguments by name, SO_KEEPALIVE first
    ioctl: dict[str, int]  # SIO_KEEPALIVE_VALS.<member>: ms, where the ioctl sets options; else {}


def is_tcp(address: object) -> bool:
    # Whether a socket whose local address is ``address`` is TCP over IPv4 or IPv6: Python
    # decodes an address by the family the kernel reports, a tuple for IP, a path for AF_UNIX.
    # The socket's family may lie (uvicorn wraps an --fd listener as AF_UNIX), its proto be 0.
    return isinstance(address, tuple)


@functools.lru_cache(maxsize=64)
def plan(settings: KeepaliveSettings) -> Plan:
    # The calls making ``settings``, worked out (and warned about) once per process.
    if settings.user_timeout is not None and settings.user_timeout < settings.detection_time * 1000:
        # With TCP_USER_TIMEOUT set, Linux drops a connection as soon as one probe is
        # unanswered past it (tcp_keepalive_timer in net/ipv4/tcp_timer.c).
        logger.warning(
            "user_timeout=%d ms is shorter than idle + interval x count = %d ms: a single "
            "unanswered keepalive probe will close an idle connection",
            settings.user_timeout,
            settings.detection_time * 1000,
        )
    calls = {"SO_KEEPALIVE": (socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)}
    ioctl, missing, by_ioctl = {}, [], False
    for option in OPTIONS:
        value, names = getattr(settings, option.name), option.constants.split()
        if option.ioctl:  # the ioctl sets all its members, those with a constant too
            ioctl[f"SIO_KEEPALIVE_VALS.{option.ioctl}"] = value * 1000
        if value is None or value is False:  # unset, or a switch off
            continue
        if name := next((name for name in names if hasattr(socket, name)), None):
            calls[name] = (socket.IPPROTO_TCP, getattr(socket, name), int(value))
        elif option.ioctl and hasattr(socket, "SIO_KEEPALIVE_VALS"):
            by_ioctl = True
        else:
            missing.append(names[0])
    if missing:  # one line, once per process and settings
        logger.warning(
            "TCP keepalive: %s not available on this platform (%s): left at the system default",
            ", ".join(missing),
            sys.platform,
        )
    return Plan(calls, ioctl if by_ioctl else {})


def apply(sock: SocketLike, plan: Plan) -> dict[str, int]:
    # Make the calls of ``plan`` on ``sock`` as set_keepalive says; return what was applied.
    applied: dict[str, int] = {}
    fileno = sock.fileno()
    for name, (level, option, value) in plan.calls.items():
        try:
            sock.setsockopt(level, option, value)
            applied[name] = value
        except OSError as exc:
            logger.debug("TCP keepalive: %s refused on fd %d: %s", name, fileno, exc)
            if name == "SO_KEEPALIVE":
                return applied
    if plan.ioctl:  # ioctl() is socket.socket's, not a transport's: made on a borrowed one
        borrowed = socket.socket(fileno=fileno)
        try:
            borrowed.ioctl(socket.SIO_KEEPALIVE_VALS, (1, *plan.ioctl.values()))  # type: ignore[attr-defined,unused-ignore]
            applied.update(plan.ioctl)
        except OSError as exc:
            logger.debug("TCP keepalive: SIO_KEEPALIVE_VALS refused on fd %d: %s", fileno, exc)
        finally:
            borrowed.detach()  # the descriptor stays open
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
    return list(plan(resolve(settings, fields)).calls.values())


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
