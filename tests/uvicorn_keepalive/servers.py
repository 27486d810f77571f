"""The keepalive tests' apps and clients, and reading keepalive options and timers.

The servers are ``tests.live_server``'s, serving :func:`hello` by default.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import subprocess
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from typing import Any

from tests import live_server
from tests.live_server import RunningServer

Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

REQUEST = b"GET / HTTP/1.1\r\nHost: test\r\n\r\n"
# Linux's option numbers, kept at import: some tests hide or fake socket's constants.
OPTIONS = {
    "SO_KEEPALIVE": (socket.SOL_SOCKET, socket.SO_KEEPALIVE),
    "TCP_KEEPIDLE": (socket.IPPROTO_TCP, socket.TCP_KEEPIDLE),
    "TCP_KEEPINTVL": (socket.IPPROTO_TCP, socket.TCP_KEEPINTVL),
    "TCP_KEEPCNT": (socket.IPPROTO_TCP, socket.TCP_KEEPCNT),
    "TCP_USER_TIMEOUT": (socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT),
    "TCP_NODELAY": (socket.IPPROTO_TCP, socket.TCP_NODELAY),
}


async def hello(scope: Message, receive: Receive, send: Send) -> None:
    """Answer every HTTP request with ``200 hello``."""
    assert scope["type"] == "http"
    headers = [(b"content-length", b"5")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": b"hello"})


async def own_options(scope: Message, receive: Receive, send: Send) -> None:
    """Answer with `keepalive_options` of the server's end of this very connection, as JSON.

    It is the socket of this process whose peer is the request's client.
    """
    assert scope["type"] == "http"
    client = tuple(scope["client"])
    options = None
    for name in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # not a socket, or closed meanwhile
            descriptor = os.dup(int(name))
            try:
                sock = socket.socket(fileno=descriptor)
            except OSError:
                os.close(descriptor)
                continue
            with sock:
                if sock.getpeername()[:2] == client:
                    options = keepalive_options(sock)
    body = json.dumps(options).encode()
    headers = [(b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def keepalive_options(sock: Any) -> dict[str, int]:
    """Read SO_KEEPALIVE, the Linux TCP keepalive options and TCP_NODELAY with getsockopt."""
    return {name: sock.getsockopt(level, option) for name, (level, option) in OPTIONS.items()}


def expected(
    idle: int, interval: int, count: int, user_timeout: int = 0, nodelay: int = 1
) -> dict[str, int]:
    """What ``keepalive_options`` reads on a socket with these settings."""
    return {
        "SO_KEEPALIVE": 1,
        "TCP_KEEPIDLE": idle,
        "TCP_KEEPINTVL": interval,
        "TCP_KEEPCNT": count,
        "TCP_USER_TIMEOUT": user_timeout,
        "TCP_NODELAY": nodelay,
    }


def running_server(app: Any = hello, **config: Any) -> AbstractContextManager[RunningServer]:
    """``tests.live_server.running_server``, serving :func:`hello` unless given another app."""
    return live_server.running_server(app, **config)


def get(port: int, host: str = "127.0.0.1") -> tuple[socket.socket, bytes]:
    """Open a connection, send one GET and read the response; the connection stays open."""
    client = socket.create_connection((host, port), timeout=5)
    client.sendall(REQUEST)
    return client, read_response(client)


def read_response(client: socket.socket) -> bytes:
    """Read one response of :func:`hello` (headers and the 5-byte body)."""
    data = b""
    while not data.endswith(b"\r\n\r\nhello"):
        chunk = client.recv(65536)
        if not chunk:
            raise AssertionError(f"connection closed after {data!r}")
        data += chunk
    return data


def keepalive_timers(port: int) -> list[float]:
    """Seconds left on the keepalive timer of each established server-side socket of ``port``."""
    output = subprocess.run(
        ["ss", "-tnoH", "state", "established", f"( sport = :{port} )"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    timers = []
    for line in output.splitlines():
        match = re.search(r"timer:\(keepalive,([^,]+),\d+\)", line)
        assert match, f"no keepalive timer on a server-side socket: {line}"
        timers.append(_seconds(match[1]))
    return timers


def _seconds(text: str) -> float:
    # ss prints e.g. "1min2sec", "41sec", "9.871ms" or "1h5min".
    units = {"h": 3600.0, "min": 60.0, "sec": 1.0, "ms": 0.001}
    parts = re.findall(r"([\d.]+)(h|min|sec|ms)", text)
    assert parts, text
    return sum(float(value) * units[unit] for value, unit in parts)
