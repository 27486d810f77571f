"""Keepalive set once on the listening socket, which Linux copies to each accepted one.

Linux creates an accepted socket as a clone of its listening socket (sk_clone_lock in
net/core/sock.c), SO_KEEPALIVE, TCP_KEEPIDLE, TCP_KEEPINTVL, TCP_KEEPCNT and
TCP_USER_TIMEOUT included, and arms the keepalive timer of the clone
(tcp_create_openreq_child in net/ipv4/tcp_minisocks.c). Neither uvicorn (0.36 to
0.54) nor the event loops hand the listening socket to a protocol, so the first
connection of a server finds it among the process's descriptors by its port.
"""

from __future__ import annotations

import dataclasses
import os
import socket
import sys
import weakref

from uvicorn_keepalive._socket import Plan, SocketLike, apply, borrowed

_INET_FAMILIES = (socket.AF_INET, socket.AF_INET6)
# Only Linux is known to copy every option: macOS, for one, does not copy TCP_KEEPALIVE.
INHERITS = sys.platform == "linux"


@dataclasses.dataclass
class _Listener:
    plan: Plan
    configured: bool  # the listening sockets of the port carry the plan
    inherited: bool = False  # an accepted socket was seen to carry it without help


# Per server (uvicorn's ServerState, one per uvicorn.Server) and local port: a port
# reused by a later server in the same process belongs to a new listening socket.
_servers: weakref.WeakKeyDictionary[object, dict[int, _Listener]] = weakref.WeakKeyDictionary()


def keep_alive(server: object, port: int, sock: SocketLike, plan: Plan) -> bool:
    """Give the accepted TCP socket ``sock`` the settings of ``plan``; never raises OSError.

    Nothing is done once the connections of ``server`` on ``port`` inherit ``plan``
    from their listening socket; until then the socket is checked, and set if needed.

    Returns:
        Whether this is the first connection of ``server`` on ``port`` with ``plan``.
    """
    listener = _servers.get(server, {}).get(port)
    first = listener is None or listener.plan != plan
    if listener is None or first:
        listener = _Listener(plan, _configure_listeners(port, plan))
        _servers.setdefault(server, {})[port] = listener
    elif listener.inherited:
        return False
    if listener.configured and _carries(sock, plan):
        # The accept queue is first in, first out (inet_csk_reqsk_queue_add appends,
        # inet_csk_accept takes the head): every later connection was created from
        # the listener after it was configured.
        listener.inherited = True
    else:  # accepted before the listener was configured, or no listener reachable
        apply(sock, plan)
    return first


def _configure_listeners(port: int, plan: Plan) -> bool:
    """Apply ``plan`` to this process's listening TCP sockets on ``port`` (Linux only).

    Returns:
        Whether at least one was found and each took every option.
    """
    # With a default timeout set, socket.socket(fileno=...) would make each socket
    # of the process it looks at non-blocking.
    if not INHERITS or socket.getdefaulttimeout() is not None:
        return False
    listeners = []
    for name in os.listdir("/proc/self/fd"):
        try:
            if not os.readlink(f"/proc/self/fd/{name}").startswith("socket:"):
                continue
            sock = socket.socket(fileno=int(name))  # borrowed: detached below
        except OSError:  # closed meanwhile (the listdir descriptor itself, for one)
            continue
        try:
            if (
                sock.family in _INET_FAMILIES
                and sock.type == socket.SOCK_STREAM
                and sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN)
                and sock.getsockname()[1] == port
            ):
                listeners.append(len(apply(sock, plan)) == len(plan.options))
        except OSError:
            continue
        finally:
            sock.detach()
    return bool(listeners) and all(listeners)


def _carries(sock: SocketLike, plan: Plan) -> bool:
    """Whether ``getsockopt`` reads back every option of ``plan`` on ``sock``."""
    try:
        with borrowed(sock) as target:
            return all(
                target.getsockopt(level, option) == value
                for _, level, option, value in plan.options
            )
    except OSError:
        return False
