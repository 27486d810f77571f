"""Turning TCP keepalive on for one socket, on every platform that has it."""

from __future__ import annotations

import asyncio.trsock
import dataclasses
import functools
import socket
import sys
from typing import Any, Protocol, cast

from uvicorn_keepalive._log import logger, warn_once
from uvicorn_keepalive._settings import (
    DEFAULT_COUNT,
    DEFAULT_IDLE,
    DEFAULT_INTERVAL,
    KeepaliveSettings,
)

_INET_FAMILIES = frozenset({socket.AF_INET, socket.AF_INET6})


class SocketLike(Protocol):
    """What keepalive needs of a socket.

    ``socket.socket``, asyncio's ``TransportSocket`` and uvloop's ``PseudoSocket``
    (what ``transport.get_extra_info("socket")`` returns) all qualify.
    """

    @property
    def family(self) -> int:
        """The address family the socket object was created with."""

    def fileno(self) -> int:
        """The file descriptor (a SOCKET handle on Windows)."""

    def getsockname(self) -> Any:
        """The local address."""

    def setsockopt(self, level: int, optname: int, value: int, /) -> None:
        """Set an integer socket option."""


@dataclasses.dataclass(frozen=True)
class _KeepaliveVals:
    """Windows' ``SIO_KEEPALIVE_VALS`` ioctl: keepalive on, idle and interval in ms.

    It predates the TCP_KEEP* options (Windows 10 1709) and cannot set the probe
    count, which Windows fixes at 10.
    https://learn.microsoft.com/windows/win32/winsock/sio-keepalive-vals
    """

    control: int
    idle_ms: int
    interval_ms: int

    def apply(self, sock: SocketLike, applied: dict[str, int]) -> None:
        """Run the ioctl on ``sock``; raises OSError when Windows refuses it."""
        values = (1, self.idle_ms, self.interval_ms)
        if isinstance(sock, socket.socket):
            sock.ioctl(self.control, values)  # type: ignore[attr-defined,unused-ignore]
        else:
            # asyncio's TransportSocket and uvloop's PseudoSocket have no ioctl() (on
            # Python 3.10 TransportSocket forwards it with a DeprecationWarning):
            # borrow the descriptor in a real socket object and detach it again so
            # that closing (or collecting) the borrowed object never closes it.
            borrowed = socket.socket(fileno=sock.fileno())
            try:
                borrowed.ioctl(self.control, values)  # type: ignore[attr-defined,unused-ignore]
            finally:
                borrowed.detach()
        applied["SIO_KEEPALIVE_VALS.keepalivetime"] = self.idle_ms
        applied["SIO_KEEPALIVE_VALS.keepaliveinterval"] = self.interval_ms


@dataclasses.dataclass(frozen=True)
class _Option:
    """One ``setsockopt`` call, with the ioctl that replaces it where it fails."""

    name: str
    level: int
    option: int
    value: int
    fallback: _KeepaliveVals | None = None

    def apply(self, sock: SocketLike, applied: dict[str, int]) -> None:
        """Set the option on ``sock``; raises OSError when the kernel refuses it."""
        sock.setsockopt(self.level, self.option, self.value)
        applied[self.name] = self.value


#: The calls that apply one set of settings on this platform, after SO_KEEPALIVE.
Steps = tuple[_Option | _KeepaliveVals, ...]


@functools.lru_cache(maxsize=64)
def plan(settings: KeepaliveSettings) -> Steps:
    """The calls that apply ``settings`` on this platform, after SO_KEEPALIVE.

    Built once per settings and process from the constants the ``socket`` module
    has. Each option the platform lacks is logged once per process at WARNING.
    """
    tcp = socket.IPPROTO_TCP
    sio = getattr(socket, "SIO_KEEPALIVE_VALS", None)
    vals = None
    if sio is not None:
        vals = _KeepaliveVals(sio, settings.idle * 1000, settings.interval * 1000)
    steps: list[_Option | _KeepaliveVals] = []

    keepidle = getattr(socket, "TCP_KEEPIDLE", None)
    # macOS names the idle time TCP_KEEPALIVE (0x10 in netinet/tcp.h) and does not
    # copy it from the listening socket to accepted ones, so it is set here too.
    keepalive = getattr(socket, "TCP_KEEPALIVE", None)
    keepintvl = getattr(socket, "TCP_KEEPINTVL", None)
    if keepidle is not None:
        steps.append(_Option("TCP_KEEPIDLE", tcp, keepidle, settings.idle, vals))
    elif keepalive is not None:
        steps.append(_Option("TCP_KEEPALIVE", tcp, keepalive, settings.idle, vals))
    elif vals is not None:
        # Windows before 10 1709 has neither constant: the ioctl sets idle and interval.
        steps.append(vals)
    else:
        _cannot("TCP_KEEPIDLE", "the idle time stays at the system default")

    if keepintvl is not None:
        steps.append(_Option("TCP_KEEPINTVL", tcp, keepintvl, settings.interval, vals))
    elif vals is None:
        _cannot("TCP_KEEPINTVL", "the probe interval stays at the system default")

    keepcnt = getattr(socket, "TCP_KEEPCNT", None)
    if keepcnt is not None:
        steps.append(_Option("TCP_KEEPCNT", tcp, keepcnt, settings.count))
    else:
        _cannot("TCP_KEEPCNT", "the probe count stays at the system default")

    if settings.user_timeout is not None:
        user_timeout = getattr(socket, "TCP_USER_TIMEOUT", None)
        if user_timeout is not None:
            steps.append(_Option("TCP_USER_TIMEOUT", tcp, user_timeout, settings.user_timeout))
        else:
            _cannot("TCP_USER_TIMEOUT", "user_timeout is ignored")
    return tuple(steps)


def _cannot(option: str, consequence: str) -> None:
    warn_once(
        option,
        "TCP keepalive: %s is not available on this platform (%s); %s",
        option,
        sys.platform,
        consequence,
    )


def is_tcp(sock: SocketLike) -> bool:
    """Whether ``sock`` is an AF_INET or AF_INET6 socket.

    Decided by the address family, not by ``proto`` (uvicorn's listener for
    ``--workers`` has ``proto=0``). A socket object that claims AF_UNIX is checked
    against its real address: uvicorn wraps an ``--fd`` listener with
    ``socket.fromfd(fd, AF_UNIX, ...)`` whatever the descriptor really is, and the
    sockets it accepts inherit that label.
    """
    family = sock.family
    if family in _INET_FAMILIES:
        return True
    if family != getattr(socket, "AF_UNIX", None):
        return False
    # The kernel's address tells the truth: a (host, port, ...) tuple for TCP, a
    # str or bytes path for a Unix socket.
    try:
        return isinstance(sock.getsockname(), tuple)
    except OSError:
        return False


def apply(sock: SocketLike, steps: Steps) -> dict[str, int]:
    """Set SO_KEEPALIVE then ``steps`` on ``sock``; never raises OSError.

    A refused call is logged at DEBUG and skipped; if SO_KEEPALIVE itself is
    refused (for example ECONNRESET on a connection the peer already reset) nothing
    else is tried.

    Returns:
        What was applied: option name to the value the kernel accepted.
    """
    applied: dict[str, int] = {}
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    except OSError as exc:
        _refused(sock, "SO_KEEPALIVE", exc)
        return applied
    applied["SO_KEEPALIVE"] = 1
    fallback_tried = False
    for step in steps:
        fallback = step.fallback if isinstance(step, _Option) else None
        if fallback is not None and fallback_tried:
            continue
        try:
            step.apply(sock, applied)
        except OSError as exc:
            if fallback is None:
                _refused(sock, _name(step), exc)
                continue
            # Windows before 10 1709 (TCP_KEEPIDLE, TCP_KEEPINTVL): use the ioctl.
            fallback_tried = True
            try:
                fallback.apply(sock, applied)
            except OSError as ioctl_exc:
                _refused(sock, "SIO_KEEPALIVE_VALS", ioctl_exc)
    return applied


_Call = tuple[int, int, int]


def configure_connection(sock: SocketLike, steps: Steps) -> None:
    """Apply ``steps`` to one accepted TCP connection's socket; never raises OSError.

    The fast path makes the plain calls in one go; if the platform needs the
    Windows ioctl, or the kernel refuses a call (a peer that already reset the
    connection), :func:`apply` goes over them one at a time and logs each refusal.
    """
    calls = calls_for(steps)
    if calls is None or not apply_calls(sock, calls):
        apply(sock, steps)


# calls_for() runs once per connection: an lru_cache would hash the steps'
# dataclasses each time (~2 us); a plan's steps are one tuple per settings, so
# the tuple's identity is the key.
_calls_of_steps: dict[int, tuple[Steps, tuple[_Call, ...] | None]] = {}


def calls_for(steps: Steps) -> tuple[_Call, ...] | None:
    """The plain ``setsockopt`` calls of ``steps``, SO_KEEPALIVE last.

    None when a step needs more than one call can say (the Windows ioctl or its
    fallback): such a platform always goes through :func:`apply`.
    """
    entry = _calls_of_steps.get(id(steps))
    if entry is not None and entry[0] is steps:
        return entry[1]
    calls = _plain_calls(steps)
    _calls_of_steps[id(steps)] = (steps, calls)
    return calls


def _plain_calls(steps: Steps) -> tuple[_Call, ...] | None:
    if any(not isinstance(step, _Option) or step.fallback is not None for step in steps):
        return None
    options = cast("tuple[_Option, ...]", steps)
    # SO_KEEPALIVE last: with keepalive already on, Linux re-arms the keepalive timer on each
    # TCP_KEEP* call (tcp_sock_set_keepidle); before it, they only store the values.
    return (
        *((step.level, step.option, step.value) for step in options),
        (socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1),
    )


def apply_calls(sock: SocketLike, calls: tuple[_Call, ...]) -> bool:
    """Make ``calls`` on ``sock`` as fast as Python can; False when one is refused.

    This is the per-connection path, so it avoids what :func:`apply` spends on
    bookkeeping. uvloop's pseudo-socket forwards each ``setsockopt`` through a
    temporary socket object of its own (about 2 us a call); one real socket
    object borrowing the descriptor, created without the three ``getsockopt``
    calls that detecting its family and type would take, serves all four calls.
    Nothing is logged here: on False the caller runs :func:`apply`, which retries
    each option and logs what the kernel refuses.
    """
    borrowed = None
    target: SocketLike = sock
    if not isinstance(sock, _DIRECT_SOCKETS):
        borrowed = socket.socket(sock.family, socket.SOCK_STREAM, 0, sock.fileno())
        target = borrowed
    try:
        for level, option, value in calls:
            target.setsockopt(level, option, value)
    except OSError:
        return False
    finally:
        if borrowed is not None:
            borrowed.detach()  # the descriptor stays the transport's
    return True


# Socket objects whose setsockopt is the socket module's own C call.
_DIRECT_SOCKETS = (socket.socket, asyncio.trsock.TransportSocket)


def _name(step: _Option | _KeepaliveVals) -> str:
    return step.name if isinstance(step, _Option) else "SIO_KEEPALIVE_VALS"


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
    return apply(sock, plan(settings))
