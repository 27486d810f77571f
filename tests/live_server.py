"""Real uvicorn servers for the tests, on a free loopback port, in a thread of the test process.

``running_server`` is the one way a test starts an in-process server: the keepalive tests (and
their run on the oldest uvicorn, whose environment has nothing but uvicorn and pytest) and the
orjson-dispatch tests alike. It imports nothing beyond uvicorn and the standard library.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import uvicorn

#: Seconds a server may take to start on a loaded machine (usually a few tens of milliseconds).
START_TIMEOUT = 30.0


def wait_for(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    """Poll ``condition`` every 10 ms until it holds; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        time.sleep(0.01)


@dataclass
class RunningServer:
    """A uvicorn server running in a thread of this process."""

    server: uvicorn.Server
    #: The port it listens on (0 on a Unix socket).
    port: int

    @property
    def url(self) -> str:
        """The base URL, ``http://<host>:<port>``."""
        return f"http://{self.server.config.host}:{self.port}"

    def server_side_socket(self, client: socket.socket) -> Any:
        """The socket object uvicorn's transport holds for ``client``'s connection.

        Looked up by the client's address among the protocol instances of
        ``server_state.connections``; waits until uvicorn has registered it.
        """
        address = client.getsockname()[:2]
        found: list[Any] = []

        def registered() -> bool:
            for protocol in list(self.server.server_state.connections):
                if tuple(getattr(protocol, "client", None) or ()) == address:
                    found.append(protocol.transport.get_extra_info("socket"))
                    return True
            return False

        wait_for(registered)
        return found[0]


@contextlib.contextmanager
def running_server(
    app: Any, sockets: list[socket.socket] | None = None, **config: Any
) -> Iterator[RunningServer]:
    """Run ``uvicorn.Server(uvicorn.Config(app, **config)).run(sockets)`` in a thread.

    The configuration defaults to ``host="127.0.0.1"``, ``port=0`` (a free port),
    ``lifespan="off"``, no logging configuration (uvicorn's records reach pytest's capture) and
    no access log. Stops the server when the block ends.
    """
    options: dict[str, Any] = {
        "host": "127.0.0.1",
        "port": 0,
        "lifespan": "off",
        "log_config": None,
        "access_log": False,
    }
    options.update(config)
    server = uvicorn.Server(uvicorn.Config(app, **options))
    thread = threading.Thread(target=server.run, args=(sockets,), name="uvicorn", daemon=True)
    thread.start()
    try:
        wait_for(lambda: server.started or not thread.is_alive(), START_TIMEOUT)
        assert server.started, "uvicorn did not start"
        listener = server.servers[0].sockets[0]
        port = listener.getsockname()[1] if listener.family != socket.AF_UNIX else 0
        yield RunningServer(server, port)
    finally:
        server.should_exit = True
        thread.join(10)
