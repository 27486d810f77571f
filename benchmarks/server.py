"""One uvicorn process per configuration: started, checked ready, waited idle, stopped.

Each listens on 127.0.0.1 on a free port with httptools (or the configuration's protocol class)
and uvloop when installed; its output goes to a log whose tail is shown on failure.
"""

import contextlib
import http.client
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from benchmarks.configs import ServerConfig

ROOT = Path(__file__).resolve().parent.parent  # servers run there to import benchmarks.apps


class ServerError(RuntimeError):
    """A server did not start, or answered something unexpected."""


def uvicorn_command(config: ServerConfig, port: int) -> list[str]:
    """Return the uvicorn command line that runs ``config`` on ``port``."""
    loop = config.loop or ("uvloop" if importlib.util.find_spec("uvloop") else "asyncio")
    options = f"--host 127.0.0.1 --port {port} --http {config.http} --loop {loop} --workers "
    options += f"{config.workers} --no-access-log --log-level warning"
    return [sys.executable, "-m", "uvicorn", config.app, *options.split()]


def get(
    port: int, path: str, timeout: float = 120.0, posted: bytes | None = None
) -> tuple[int, bytes]:
    """Send one GET (or a POST of the JSON ``posted``) to ``127.0.0.1:port``; return the status
    and the body.
    """  # noqa: D205
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        if posted is not None:
            connection.request("POST", path, posted, {"content-type": "application/json"})
        else:
            connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def cpu_seconds(pid: int) -> float:
    """Return the CPU time (user + system) used so far by ``pid`` and its descendants."""
    ticks = 0
    with contextlib.suppress(OSError):
        # utime and stime: fields 14 and 15 of /proc/<pid>/stat, after the ")" ending the name.
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks += int(fields[11]) + int(fields[12])
    seconds = ticks / os.sysconf("SC_CLK_TCK")
    for task in Path(f"/proc/{pid}/task").glob("*/children"):  # --workers spawns processes
        with contextlib.suppress(OSError):
            seconds += sum(cpu_seconds(int(child)) for child in task.read_text().split())
    return seconds


class Server:
    """One uvicorn process for one configuration, started by :func:`running`."""

    def __init__(self, config: ServerConfig, log_dir: Path) -> None:
        self.config = config
        with socket.socket() as probe:  # the kernel picks a port free right now
            probe.bind(("127.0.0.1", 0))
            self.port: int = probe.getsockname()[1]
        self.log_path = log_dir / f"{config.name}.log"
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                uvicorn_command(config, self.port),
                cwd=ROOT,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        self.pid = self.process.pid

    def wait_ready(self, timeout: float = 60.0) -> None:
        """Wait until the health path answers 200; ServerError if the process exits first."""
        deadline = time.monotonic() + timeout
        while self.process.poll() is None and time.monotonic() < deadline:
            with contextlib.suppress(OSError, http.client.HTTPException):
                if get(self.port, self.config.health, timeout=2)[0] == 200:
                    return
            time.sleep(0.05)
        log = self.log_path.read_text(errors="replace").splitlines()[-30:]
        status = self.process.poll()
        raise ServerError(
            f"{self.config.name} not ready (exit status {status}):\n" + "\n".join(log)
        )

    def wait_idle(self, timeout: float = 300.0, window: float = 0.1) -> float:
        """Wait until the process tree uses under 10 % of a core over ``window`` seconds.

        wrk stops with up to one request in flight per connection, which uvicorn finishes
        after the client has gone: the next measurement must not share the CPU with that work.

        Returns:
            The seconds waited.
        """
        started, before = time.monotonic(), cpu_seconds(self.pid)
        while time.monotonic() - started < timeout:
            time.sleep(window)
            after = cpu_seconds(self.pid)
            if after - before <= 0.1 * window:
                break
            before = after
        return time.monotonic() - started

    def status_kb(self, field: str) -> int:
        """Return a memory field of the process's ``/proc/<pid>/status`` (``VmRSS``, ``VmHWM``)."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1])
        raise ServerError(f"no {field} for process {self.pid}")

    def stop(self) -> None:
        """Stop the server: SIGINT (uvicorn's graceful shutdown), SIGKILL after 10 s."""
        if self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):  # the group start_new_session made
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


@contextlib.contextmanager
def running(configs: list[ServerConfig], log_dir: Path) -> Iterator[dict[str, Server]]:
    """Start every configuration at once, wait until all are ready, stop them all on exit."""
    servers: dict[str, Server] = {}
    try:
        for config in configs:
            servers[config.name] = Server(config, log_dir)
        for server in servers.values():
            server.wait_ready()
        yield servers
    finally:
        for server in servers.values():
            server.stop()
