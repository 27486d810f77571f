"""Real uvicorn servers for the tests, on a free loopback port: in a thread, or in a process.

``running_server`` is the one way a test starts a server in its own process, ``ServerProcess``
the one way it starts one in a child process (uvicorn's command line, ``uvicorn.run``, gunicorn),
for the keepalive tests (and their run on the oldest uvicorn, whose environment has nothing but
uvicorn and pytest) and the orjson-dispatch tests alike. It imports nothing beyond uvicorn and
the standard library.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import uvicorn

from tests.paths import ROOT

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


#: What uvicorn logs once it listens; group 1 is the port.
RUNNING = r"Uvicorn running on http://127\.0\.0\.1:(\d+)"


class ServerProcess:
    """A server in a child process (its own session) whose standard error is collected line by
    line; run from the repository's root, with the root on ``PYTHONPATH`` (for the test apps)."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str]) -> None:
        python_path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
        self.process = subprocess.Popen(
            argv,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": python_path, **env},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append(line)

    @property
    def stderr(self) -> str:
        return "".join(self.lines)

    def wait_for(self, pattern: str, count: int = 1, timeout: float = 20) -> re.Match[str]:
        """Wait until ``pattern`` matched ``count`` lines of standard error; the first match."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            matches = [m for line in list(self.lines) if (m := re.search(pattern, line))]
            if len(matches) >= count:
                return matches[0]
            if self.process.poll() is not None:
                self._reader.join(5)
                break
            time.sleep(0.05)
        raise AssertionError(f"{pattern!r} x{count} not seen; stderr:\n{self.stderr}")

    def port(self) -> int:
        """The port uvicorn listens on, once it says so (``RUNNING``)."""
        return int(self.wait_for(RUNNING, timeout=START_TIMEOUT)[1])

    def wait_exit(self, timeout: float = 30) -> int:
        code = self.process.wait(timeout)
        self._reader.join(5)
        return code

    def stop(self) -> None:
        """Kill the process and its children, if still running, and wait for it."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.wait_exit()
