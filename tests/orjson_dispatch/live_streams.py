"""Streams over a real uvicorn server, read by a raw socket client to the chunked terminator.

``LiveApp`` runs one FastAPI app on uvicorn (``tests.live_server``) per server configuration
(``SERVERS``: httptools and h11, asyncio and uvloop) for a whole test module; tests add their
routes to the running app under fresh paths. ``fetch`` sends one ``GET`` and reads the chunked
body to its terminating zero-length chunk (``Wire.complete``) or to the end of the connection
(an aborted stream). Nothing here waits on the wall clock except the socket timeout that fails
a hung test.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any

from fastapi import FastAPI

from tests.live_server import running_server

#: (http, loop) of each server configuration the stream tests run on.
SERVERS = [("httptools", "asyncio"), ("h11", "asyncio"), ("httptools", "uvloop"), ("h11", "uvloop")]
#: Seconds a test may wait on the socket before it fails (a hung stream, not a slow machine).
SOCKET_TIMEOUT = 30.0

_paths = itertools.count()


@dataclasses.dataclass
class Wire:
    """What the client read: the status, headers, the de-chunked body, and how it ended.

    ``complete``: the body ended with the terminating zero-length chunk (else the server closed
    the connection before it).
    """

    status: int
    headers: dict[str, str]
    body: bytes
    complete: bool


class LiveApp:
    """A FastAPI app served by uvicorn in a thread (``running_server``); routes are added while
    it runs."""

    def __init__(self, http: str, loop: str, *, sndbuf: int | None = None, **config: Any) -> None:
        """Configure the server; ``sndbuf`` fixes the send buffer of its connections (bytes)."""
        self.app = FastAPI()
        self._config = {"http": http, "loop": loop, **config}
        # Accepted connections inherit the listening socket's send buffer; a fixed one is not
        # grown by the kernel (up to net.ipv4.tcp_wmem's 4 MB), so it holds what it says.
        self._socket = socket.socket()
        if sndbuf is not None:
            self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, sndbuf)
        self._socket.bind(("127.0.0.1", 0))
        self.port = self._socket.getsockname()[1]
        self._running = contextlib.ExitStack()

    def __enter__(self) -> LiveApp:
        self._running.callback(self._socket.close)
        self._running.enter_context(running_server(self.app, [self._socket], **self._config))
        return self

    def __exit__(self, *exc: object) -> None:
        self._running.close()

    def add(self, endpoint: Callable[..., Any], **route: Any) -> str:
        """Serve ``endpoint`` at a fresh path; return the path."""
        path = f"/s{next(_paths)}"
        self.app.router.add_api_route(path, endpoint, methods=["GET"], **route)
        return path

    def fetch(self, path: str, reader: Reader | None = None) -> Wire:
        """``fetch(self.port, path, reader)``."""
        return fetch(self.port, path, reader)


@dataclasses.dataclass
class Reader:
    """How the client reads: its receive buffer, and a pause before each read (seconds)."""

    rcvbuf: int | None = None
    read_size: int = 65536
    pause: float = 0.0
    #: Close the connection once this many body bytes arrived (0: right after the headers).
    leave_after: int | None = None
    #: Bytes read from the socket so far (head and chunk framing included), counted after
    #: each read: what the server may be compared with while the stream runs.
    received: int = 0


def fetch(port: int, path: str, reader: Reader | None = None) -> Wire:
    """GET ``path`` on a raw socket and read the chunked body to its end."""
    reader = reader or Reader()
    with _connected(port, reader) as client:
        client.sendall(f"GET {path} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n".encode())
        stream = _Bytes(client, reader)
        status, headers = _head(stream)
        assert headers.get("transfer-encoding") == "chunked", headers
        body = bytearray()
        while reader.leave_after is None or len(body) < reader.leave_after:
            size_line = stream.line()
            if size_line is None:
                return Wire(status, headers, bytes(body), complete=False)
            size = int(size_line.split(b";")[0], 16)
            data = stream.exactly(size + 2)
            if data is None:
                return Wire(status, headers, bytes(body + (stream.rest() or b"")), complete=False)
            assert data.endswith(b"\r\n"), data[-10:]
            if size == 0:
                return Wire(status, headers, bytes(body), complete=True)
            body += data[:-2]
        return Wire(status, headers, bytes(body), complete=False)  # the client left


def _head(stream: _Bytes) -> tuple[int, dict[str, str]]:
    status_line = stream.line()
    assert status_line is not None, "no answer"
    status = int(status_line.split()[1])
    headers: dict[str, str] = {}
    while (line := stream.line()) not in (b"", None):
        assert line is not None
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers


@contextlib.contextmanager
def _connected(port: int, reader: Reader) -> Iterator[socket.socket]:
    client = socket.socket()
    if reader.rcvbuf is not None:  # before connect: the window is offered in the handshake
        client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, reader.rcvbuf)
    client.settimeout(SOCKET_TIMEOUT)
    with client:
        client.connect(("127.0.0.1", port))
        yield client


class _Bytes:
    """A buffered reader of the socket, pausing before each read as the ``Reader`` says."""

    def __init__(self, client: socket.socket, reader: Reader) -> None:
        self.client, self.reader, self.buffer = client, reader, bytearray()
        self.closed = False

    def _more(self) -> bool:
        if self.closed:
            return False
        if self.reader.pause:
            threading.Event().wait(self.reader.pause)
        try:
            data = self.client.recv(self.reader.read_size)
        except ConnectionResetError:
            data = b""
        if not data:
            self.closed = True
            return False
        self.reader.received += len(data)
        self.buffer += data
        return True

    def line(self) -> bytes | None:
        while (end := self.buffer.find(b"\r\n")) < 0:
            if not self._more():
                return None
        line = bytes(self.buffer[:end])
        del self.buffer[: end + 2]
        return line

    def exactly(self, size: int) -> bytes | None:
        while len(self.buffer) < size:
            if not self._more():
                return None
        data = bytes(self.buffer[:size])
        del self.buffer[:size]
        return data

    def rest(self) -> bytes:
        data = bytes(self.buffer)
        self.buffer.clear()
        return data
