"""What every benchmark script shares: uvicorn servers, wrk, interleaved rounds.

A configuration is one uvicorn process on 127.0.0.1 and a port the kernel picked free (bound to
port 0), ``--http httptools`` (or the configuration's protocol class) and uvloop (or the
configuration's loop), its output in a log whose tail is shown on failure. The configurations
of a workload run back to back in each round, their order rotated by one each round, so that a
ratio of two of them taken within one round cancels slow drifts of the machine; the median over
the rounds then drops outliers. wrk, the C HTTP load generator, comes from the Debian package
``wrk`` (``scripts/system-packages``); the ``done`` hook of ``wrk_report.lua`` prints exact
counts.
"""

import contextlib
import http.client
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent  # servers run there to import benchmarks.*
_LUA = Path(__file__).with_name("wrk_report.lua")
#: wrk's timeout of a request: far beyond any wait at 32 connections (the slowest p99: ~1 s).
_WRK_TIMEOUT_S = 60


class ServerError(RuntimeError):
    """A server did not start, or answered something unexpected."""


class WrkError(RuntimeError):
    """wrk is missing, failed, or printed no summary."""


@dataclass(frozen=True)
class ServerConfig:
    """One way to run a server; ``name`` is its key in URLs and results, ``label`` in tables.

    ``path`` is the endpoint's (``{body}`` stands for the body's name); ``framing`` is a
    stream's (``jsonl`` or ``sse``).
    """

    name: str
    label: str
    app: str
    path: str
    http: str = "httptools"
    workers: int = 1
    loop: str = "uvloop"
    framing: str = "jsonl"

    def url_path(self, body: str) -> str:
        """Return the endpoint's path for the body called ``body``."""
        return self.path.format(body=body)


def uvicorn_command(config: ServerConfig, port: int) -> list[str]:
    """Return the uvicorn command line that runs ``config`` on ``port``."""
    options = f"--host 127.0.0.1 --port {port} --http {config.http} --loop {config.loop} "
    options += f"--workers {config.workers} --no-access-log --log-level warning"
    return [sys.executable, "-m", "uvicorn", config.app, *options.split()]


def get(
    port: int, path: str, timeout: float = 120, posted: bytes | None = None
) -> tuple[int, bytes]:
    """Send a GET (a POST of the JSON ``posted``) to ``127.0.0.1:port``; return status, body."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        headers = {"content-type": "application/json"} if posted is not None else {}
        connection.request("GET" if posted is None else "POST", path, posted, headers)
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

    def wait_ready(self, timeout: float = 60.0) -> None:
        """Wait until ``GET /`` gets an answer (any status); ServerError if the process exits."""
        deadline = time.monotonic() + timeout
        while self.process.poll() is None and time.monotonic() < deadline:
            with contextlib.suppress(OSError, http.client.HTTPException):
                get(self.port, "/", timeout=2)
                return
            time.sleep(0.01)
        log = self.log_path.read_text(errors="replace").splitlines()[-30:]
        status = self.process.poll()
        raise ServerError(
            f"{self.config.name} not ready (exit status {status}):\n" + "\n".join(log)
        )

    def wait_idle(self, timeout: float = 300.0, window: float = 0.1) -> None:
        """Wait until the process tree uses under 10 % of a core over ``window`` seconds.

        wrk stops with up to one request in flight per connection, which uvicorn finishes
        after the client has gone: the next measurement must not share the CPU with that work.
        """
        deadline, before = time.monotonic() + timeout, cpu_seconds(self.process.pid)
        while time.monotonic() < deadline:
            time.sleep(window)
            after = cpu_seconds(self.process.pid)
            if after - before <= 0.1 * window:
                return
            before = after

    def status_kb(self, field: str) -> int:
        """Return a memory field of the process's ``/proc/<pid>/status`` (``VmRSS``, ``VmHWM``)."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1])
        raise ServerError(f"no {field} for process {self.process.pid}")

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
def running(configs: Sequence[ServerConfig], log_dir: Path) -> Iterator[dict[str, Server]]:
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


@dataclass(frozen=True)
class Cell:
    """A workload: a body (or a stream's shape) at a concurrency.

    ``close`` sends ``Connection: close`` (a new connection per request).
    """

    body: str
    concurrency: int
    close: bool = False

    @property
    def key(self) -> str:
        """A stable identifier, e.g. ``tokens-65536@c32`` or ``plain@c32+close``."""
        return f"{self.body}@c{self.concurrency}{'+close' if self.close else ''}"


def interleaved(
    suite: str,
    labels: Mapping[str, str],
    cells: Sequence[str],
    rounds: int,
    measure: Callable[[str, str], tuple[dict[str, Any], str]],
) -> dict[str, Any]:
    """Call ``measure(cell, configuration)`` for every cell once per configuration and round.

    Round after round; the configurations of a cell run back to back, their order rotated by
    one each round, so that none is always first after a change of cell. ``labels`` maps each
    configuration to its label. ``measure`` returns the sample and its progress text.

    Returns:
        JSON-ready: ``configs``, ``cells`` and ``samples`` (per run: the round, cell and
        configuration, and the sample).
    """
    configs, started = list(labels), time.monotonic()
    samples: list[dict[str, Any]] = []
    for number in range(rounds):
        order = [*configs[number % len(configs) :], *configs[: number % len(configs)]]
        for cell, config in [(cell, config) for cell in cells for config in order]:
            sample, text = measure(cell, config)
            samples.append({"round": number, "cell": cell, "config": config} | sample)
            at = f"{time.monotonic() - started:.0f}s, round {number + 1}/{rounds}"
            print(f"{suite} [{at}] {cell} {config}: {text}", file=sys.stderr, flush=True)
    return {
        "configs": [{"name": name, "label": label} for name, label in labels.items()],
        "cells": [{"key": cell} for cell in cells],
        "samples": samples,
    }


def drive(
    suite: str,
    configs: Sequence[ServerConfig],
    cells: Sequence[Cell],
    rounds: int,
    *,
    prepare: Callable[[Server], None],
    measure: Callable[[Server, Cell], tuple[dict[str, Any], str]],
    log_dir: Path,
) -> dict[str, Any]:
    """Start every configuration's server, ``prepare`` each, then ``measure`` the runs.

    The runs are :func:`interleaved`'s; after each measured one the server is waited idle.

    Returns:
        :func:`interleaved`'s result, with the configurations and cells in full, and
        ``memory_kb`` (single-worker servers: VmRSS after ``prepare``, VmHWM at the end).
    """
    with running(configs, log_dir) as servers:
        for server in servers.values():
            prepare(server)
        single = [c.name for c in configs if c.workers == 1]  # --workers: the supervisor's
        memory = {name: {"start": servers[name].status_kb("VmRSS")} for name in single}
        keyed = {cell.key: cell for cell in cells}

        def run(cell: str, config: str) -> tuple[dict[str, Any], str]:
            measured = measure(servers[config], keyed[cell])
            servers[config].wait_idle()
            return measured

        labels = {config.name: config.label for config in configs}
        found = interleaved(suite, labels, list(keyed), rounds, run)
        for name in single:
            memory[name]["peak"] = servers[name].status_kb("VmHWM")
    return found | {
        "name": suite,
        "configs": [asdict(config) for config in configs],
        "cells": [asdict(cell) | {"key": cell.key} for cell in cells],
        "memory_kb": memory,
    }


def require_wrk() -> str:
    """Return the path of the wrk executable; WrkError saying how to install it if missing."""
    path = shutil.which("wrk")
    if path is None:
        raise WrkError(
            "wrk is not installed: run scripts/system-packages (as root: apt-get install wrk on "
            "Debian/Ubuntu), or install wrk with your package manager (brew install wrk on macOS)"
        )
    return path


def wrk(
    path: str,
    url: str,
    *,
    connections: int,
    duration_s: int,
    timeout_s: int,
    close: bool = False,
    posted: Path | None = None,
) -> dict[str, Any]:
    """Run the wrk at ``path`` on ``url``; return the summary ``wrk_report.lua`` printed.

    One wrk thread drives every connection: on 2 cores the server gets one, wrk the other.
    ``close`` sends ``Connection: close``: a new TCP connection per request; ``posted``, a file
    of JSON, makes every request a POST of it (``wrk_report.lua`` reads the file). The summary
    gets ``duration_s`` and ``rps``; WrkError if wrk fails or prints none.
    """
    options = f"--threads 1 --connections {connections} --duration {duration_s}s"
    command = [path, *options.split(), "--timeout", f"{timeout_s}s", "--script", str(_LUA)]
    command += ["--header", "Connection: close"] if close else []
    command += [url, *([str(posted)] if posted else [])]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise WrkError(f"{shlex.join(command)} exited {done.returncode}: {done.stderr}")
    for line in done.stdout.splitlines():
        if line.startswith("BENCH_JSON "):
            found: dict[str, Any] = json.loads(line.removeprefix("BENCH_JSON "))
            found["duration_s"] = found.pop("duration_us") / 1e6
            found["rps"] = found["requests"] / found["duration_s"] if found["duration_s"] else 0.0
            return found
    raise WrkError(f"wrk printed no summary line; its output was:\n{done.stdout}")


def wrk_runs(quick: bool) -> tuple[int, int]:
    """Return the rounds of wrk runs and the seconds of each: 3 of 1 s (``quick``), or 7 of 2 s."""
    return (3, 1) if quick else (7, 2)


def run_load(
    suite: str,
    configs: Sequence[ServerConfig],
    cells: Sequence[Cell],
    quick: bool,
    *,
    answer: Callable[[str], tuple[bytes | None, Any]],
    log_dir: Path,
) -> dict[str, Any]:
    """Check every configuration's answers, then measure each on every cell with wrk, interleaved.

    ``answer(body)`` returns what to POST (None: a GET) and the JSON value expected back; the
    runs are :func:`wrk_runs`'.

    Returns:
        :func:`drive`'s result, its samples wrk's summaries.
    """
    wrk_path, bodies, posts = require_wrk(), sorted({c.body for c in cells}), {}
    rounds, duration_s = wrk_runs(quick)
    for body, posted in ((body, answer(body)[0]) for body in bodies):
        if posted is not None:  # wrk_report.lua reads the file
            posts[body] = log_dir / f"{body}.json"
            posts[body].write_bytes(posted)

    def prepare(server: Server) -> None:
        for body in bodies:
            posted, expected = answer(body)
            status, content = get(server.port, server.config.url_path(body), posted=posted)
            if status != 200 or json.loads(content) != expected:
                why = f"{server.config.name} answered {body} wrongly ({status}): {content[:300]!r}"
                raise ServerError(why)

    def measure(server: Server, cell: Cell) -> tuple[dict[str, Any], str]:
        found = wrk(
            wrk_path,
            f"http://127.0.0.1:{server.port}{server.config.url_path(cell.body)}",
            connections=cell.concurrency,
            close=cell.close,
            duration_s=duration_s,
            timeout_s=_WRK_TIMEOUT_S,
            posted=posts.get(cell.body),
        )
        errors, latency = sum(found["errors"].values()), found["latency_us"]
        p50, p99 = latency["p50"] / 1e3, latency["p99"] / 1e3
        text = f"{found['rps']:.1f} req/s, p50 {p50:.2f} ms, p99 {p99:.2f} ms"
        return found, text + (f", {errors} errors" if errors else "")

    return drive(suite, configs, cells, rounds, prepare=prepare, measure=measure, log_dir=log_dir)
