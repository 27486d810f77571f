"""Start, probe and stop one uvicorn process per server configuration.

Each server listens on 127.0.0.1 on a free port (found by binding port 0) with one worker
unless the configuration asks for more, httptools (or the configuration's protocol class) and
uvloop when it is installed. Its output goes to a log file whose tail is shown on failure.
"""

import contextlib
import http.client
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from benchmarks.configs import ServerConfig

#: The repository root: servers run there so that ``benchmarks.apps`` can be imported.
ROOT = Path(__file__).resolve().parent.parent
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


class ServerError(RuntimeError):
    """A server did not start, or answered something unexpected."""


def event_loop() -> str:
    """Return the uvicorn ``--loop`` value used: uvloop when installed, else asyncio."""
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return "asyncio"
    return "uvloop"


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that is free right now (the kernel picks it)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def uvicorn_command(config: ServerConfig, port: int) -> list[str]:
    """Return the uvicorn command line that runs ``config`` on ``port``."""
    options = f"--host 127.0.0.1 --port {port} --http {config.http} --loop {event_loop()}"
    options += f" --workers {config.workers} --no-access-log --log-level warning"
    return [sys.executable, "-m", "uvicorn", config.app, *options.split()]


def get(port: int, path: str, timeout: float = 120.0) -> tuple[int, bytes]:
    """Send one GET to ``127.0.0.1:port`` and return the status and the body."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def _process_tree(pid: int) -> list[int]:
    """Return ``pid`` and all its descendants (``--workers`` spawns child processes)."""
    found = [pid]
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        with contextlib.suppress(OSError):
            for child in task.read_text().split():
                found += _process_tree(int(child))
    return found


def cpu_seconds(pid: int) -> float:
    """Return the CPU time (user + system) used so far by ``pid`` and its descendants."""
    ticks = 0
    for member in _process_tree(pid):
        with contextlib.suppress(OSError):
            # Fields 14 and 15 of /proc/<pid>/stat, counted after the ")" that ends the
            # command name: utime and stime in clock ticks (proc(5)).
            fields = Path(f"/proc/{member}/stat").read_text().rsplit(")", 1)[1].split()
            ticks += int(fields[11]) + int(fields[12])
    return ticks / _CLOCK_TICKS


class Server:
    """One uvicorn process for one configuration (:func:`running` starts and stops them)."""

    def __init__(self, config: ServerConfig, log_dir: Path) -> None:
        self.config = config
        self.port = free_port()
        self.log_path = log_dir / f"{config.name}.log"
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start the process (without waiting for it to accept connections)."""
        with self.log_path.open("wb") as log:
            self._process = subprocess.Popen(
                uvicorn_command(self.config, self.port),
                cwd=ROOT,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )

    @property
    def pid(self) -> int:
        """The uvicorn process id."""
        if self._process is None:
            raise ServerError(f"{self.config.name} was not started")
        return self._process.pid

    def url(self, path: str) -> str:
        """Return the absolute URL of ``path`` on this server."""
        return f"http://127.0.0.1:{self.port}{path}"

    def log_tail(self, lines: int = 30) -> str:
        """Return the end of the server's log."""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def wait_ready(self, timeout: float = 60.0) -> None:
        """Wait until the health path answers 200.

        Raises:
            ServerError: The process exited or did not answer within ``timeout`` seconds.
        """
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process is None or self._process.poll() is not None:
                raise ServerError(f"{self.config.name} exited:\n{self.log_tail()}")
            with contextlib.suppress(OSError, http.client.HTTPException):
                if get(self.port, self.config.health, timeout=2)[0] == 200:
                    return
            time.sleep(0.05)
        raise ServerError(f"{self.config.name} not ready after {timeout} s:\n{self.log_tail()}")

    def wait_idle(self, timeout: float = 300.0, window: float = 0.1) -> float:
        """Wait until the server has stopped working on requests left over by a run.

        wrk stops at the end of its duration with up to one request in flight per
        connection; uvicorn finishes those after the client has gone. The next measurement
        must not share the CPU with that work, so this waits until the server's process tree
        uses less than 10 % of a core over ``window`` seconds.

        Returns:
            The seconds waited.
        """
        started = time.monotonic()
        before = cpu_seconds(self.pid)
        while time.monotonic() - started < timeout:
            time.sleep(window)
            after = cpu_seconds(self.pid)
            if after - before <= 0.1 * window:
                break
            before = after
        return time.monotonic() - started

    def stop(self) -> None:
        """Stop the server: SIGINT (uvicorn's graceful shutdown), SIGKILL after 10 s."""
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            # The process group is the one start() created for this server alone.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@contextlib.contextmanager
def running(configs: list[ServerConfig], log_dir: Path) -> Iterator[dict[str, Server]]:
    """Start every configuration at once, wait until all are ready, stop them all on exit."""
    servers = {config.name: Server(config, log_dir) for config in configs}
    try:
        for server in servers.values():
            server.start()
        for server in servers.values():
            server.wait_ready()
        yield servers
    finally:
        for server in servers.values():
            server.stop()
