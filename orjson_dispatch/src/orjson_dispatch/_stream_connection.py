"""What a stream reads of its connection: the bytes uvicorn and the kernel still hold for it.

ASGI gives an application no handle on its connection. uvicorn (0.13 and later, httptools and
h11, asyncio and uvloop) runs each request in a task of `RequestResponseCycle.run_asgi`, whose
`self.transport` is the connection's asyncio transport: `Connection.of_current_task` finds it
there, from the task the response is called in, or returns None (another server, a middleware
that runs the app in a task of its own, trio). This is the package's one reading of uvicorn's
internals; nothing is written to them.

With the transport, a stream counts the bytes its transport buffer holds (the backpressure
bound) and, where the platform reports it, the bytes the kernel holds unacknowledged (the
client's progress, read by `send_timeout`):

- Linux: `ioctl(SIOCOUTQ)`, the bytes sent but not acknowledged plus those not yet sent
  (tcp(7));
- macOS: `getsockopt(SO_NWRITE)`, the bytes in the send buffer not yet acknowledged;
- elsewhere, and on a socket that refuses the call: unknown (None).

No divergence from FastAPI's streams of its own: what it reads serves the bound in bytes and
the send timeout (`_stream_sending`, 4 and 6).
"""

from __future__ import annotations

import asyncio
import socket
import struct
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["Connection"]

if sys.platform == "linux":
    import fcntl
    import termios

    def _kernel_unacknowledged(sock: Any) -> int:
        # SIOCOUTQ is TIOCOUTQ (linux/sockios.h).
        raw = fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, b"\0\0\0\0")
        return int(struct.unpack("i", raw)[0])

elif sys.platform == "darwin":
    _SO_NWRITE = 0x1024  # <sys/socket.h>; not exported by Python's socket module

    def _kernel_unacknowledged(sock: Any) -> int:
        return int(sock.getsockopt(socket.SOL_SOCKET, _SO_NWRITE))

else:

    def _kernel_unacknowledged(sock: Any) -> int:
        raise OSError("the platform does not report a socket's unacknowledged bytes")


class Connection:
    """The transport of the connection a response is sent on, and its socket.

    Attributes:
        buffered: Returns the bytes written to the transport that it has not handed to the
            kernel yet: the transport's own `get_write_buffer_size`, read once per frame.
    """

    __slots__ = ("_socket", "buffered")

    def __init__(self, transport: Any) -> None:
        self.buffered: Callable[[], int] = transport.get_write_buffer_size
        self._socket = transport.get_extra_info("socket")

    @classmethod
    def of_current_task(cls) -> Connection | None:
        """The connection of uvicorn's request task running the caller, or None."""
        try:
            task = asyncio.current_task()
        except RuntimeError:  # no asyncio loop runs this task (trio)
            return None
        frame = getattr(task.get_coro(), "cr_frame", None) if task is not None else None
        cycle = frame.f_locals.get("self") if frame is not None else None
        transport = getattr(cycle, "transport", None)
        if not callable(getattr(transport, "get_write_buffer_size", None)):
            return None
        return cls(transport)

    def unacknowledged(self) -> int | None:
        """Bytes the transport and the kernel hold that the client has not acknowledged.

        None where the platform does not report the kernel's share. It only falls while no
        byte is written: each fall is the client taking bytes.
        """
        if self._socket is None:
            return None
        try:
            kernel = _kernel_unacknowledged(self._socket)
        except OSError:  # not a TCP socket (a Unix socket), or the connection is gone
            return None
        return kernel + int(self.buffered())
