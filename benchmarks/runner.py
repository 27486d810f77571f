"""What every benchmark script shares: uvicorn servers, wrk, interleaved rounds, result files.

A configuration is one uvicorn process on 127.0.0.1 and a port the kernel picked free (bound to
port 0), ``--http httptools`` (or the configuration's protocol class) and uvloop when installed,
its output in a log whose tail is shown on failure. The configurations of a workload run back
to back in each round, their order rotated by one each round, so that a ratio of two of them
taken within one round cancels slow drifts of the machine; the median over the rounds then
drops outliers. wrk, the C HTTP load generator, comes from the Debian package ``wrk``
(``scripts/system-packages``); the ``done`` hook of ``wrk_report.lua`` prints exact counts.
"""

import argparse
import contextlib
import http.client
import importlib.util
import json
import math
import os
import platform
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parent.parent  # servers run there to import benchmarks.*
RESULTS = ROOT / "benchmarks" / "results"
#: The distributions whose versions decide the figures, recorded with each suite.
PACKAGES = ("fastapi", "pydantic", "orjson", "uvicorn", "uvloop", "httptools", "litestar",
            "msgspec", "sse-starlette", "orjson-dispatch", "uvicorn-keepalive")  # fmt: skip
_LUA = Path(__file__).with_name("wrk_report.lua")


class ServerError(RuntimeError):
    """A server did not start, or answered something unexpected."""


class WrkError(RuntimeError):
    """wrk is missing, failed, or printed no summary."""


@dataclass(frozen=True)
class ServerConfig:
    """One way to run a server; ``name`` is its key in URLs and results, ``label`` in tables.

    ``path`` is the endpoint's (``{body}`` stands for the body's name); ``health`` answers 200
    once the app is up; ``loop`` None is uvloop when installed; ``method`` POST sends the
    cell's request body; ``framing`` is a stream's (``jsonl`` or ``sse``).
    """

    name: str
    label: str
    app: str
    path: str
    health: str = "/health"
    http: str = "httptools"
    workers: int = 1
    loop: str | None = None
    method: str = "GET"
    framing: str = "jsonl"

    def url_path(self, body: str) -> str:
        """Return the endpoint's path for the body called ``body``."""
        return self.path.format(body=body)


def uvicorn_command(config: ServerConfig, port: int) -> list[str]:
    """Return the uvicorn command line that runs ``config`` on ``port``."""
    loop = config.loop or ("uvloop" if importlib.util.find_spec("uvloop") else "asyncio")
    options = f"--host 127.0.0.1 --port {port} --http {config.http} --loop {loop} --workers "
    options += f"{config.workers} --no-access-log --log-level warning"
    return [sys.executable, "-m", "uvicorn", config.app, *options.split()]


def get(
    port: int, path: str, timeout: float = 120.0, posted: bytes | None = None
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
                uvicorn_command(config, self.port), cwd=ROOT, stdout=log,
                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
            )  # fmt: skip
        self.pid = self.process.pid

    def wait_ready(self, timeout: float = 60.0) -> None:
        """Wait until the health path answers 200; ServerError if the process exits first."""
        deadline = time.monotonic() + timeout
        while self.process.poll() is None and time.monotonic() < deadline:
            with contextlib.suppress(OSError, http.client.HTTPException):
                if get(self.port, self.config.health, timeout=2)[0] == 200:
                    return
            time.sleep(0.01)
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

    ``close`` sends ``Connection: close`` (a new connection per request); ``duration_s`` is
    the cell's shortest wrk run (None: the suite's).
    """

    body: str
    concurrency: int
    close: bool = False
    duration_s: int | None = None

    @property
    def key(self) -> str:
        """A stable identifier, e.g. ``tokens-65536@c32`` or ``plain@c32+close``."""
        return f"{self.body}@c{self.concurrency}{'+close' if self.close else ''}"


class Run(NamedTuple):
    """One measurement: a configuration on a cell in a round."""

    round: int
    cell: Cell
    config: str


def interleave(cells: Sequence[Cell], configs: Sequence[str], rounds: int) -> list[Run]:
    """Return every cell once per configuration and round, round after round.

    The configurations of a cell run back to back; their order rotates by one each round, so
    that none is always first after a change of cell.
    """
    runs: list[Run] = []
    for number in range(rounds):
        shift = number % len(configs) if configs else 0
        order = [*configs[shift:], *configs[:shift]]
        runs += [Run(number, cell, config) for cell in cells for config in order]
    return runs


@dataclass(frozen=True)
class Spread:
    """The median of some measurements, their minimum, maximum and count."""

    median: float
    low: float
    high: float
    count: int

    @classmethod
    def of(cls, values: Sequence[float]) -> "Spread":
        """Summarize ``values``; ValueError when there are none."""
        if not values:
            raise ValueError("no measurements to summarize")
        return cls(statistics.median(values), min(values), max(values), len(values))


def paired_ratios(
    numerator: Mapping[int, float], denominator: Mapping[int, float]
) -> Spread | None:
    """Return the spread of ``numerator[r] / denominator[r]`` over the rounds both measured.

    Both map a round to a measurement; None when no round has both (and a nonzero denominator).
    """
    rounds = sorted(numerator.keys() & denominator.keys())
    ratios = [numerator[r] / denominator[r] for r in rounds if denominator[r] > 0]
    return Spread.of(ratios) if ratios else None


def stderr(line: str) -> None:
    """Print a progress line."""
    print(line, file=sys.stderr, flush=True)


#: Measures one run on its server: the sample and its progress text, or why it is skipped.
Measure = Callable[["Server", Run], "tuple[dict[str, Any], str] | str"]


def drive(
    suite: str,
    configs: Sequence[ServerConfig],
    cells: Sequence[Cell],
    rounds: int,
    *,
    prepare: Callable[[Server], None],
    measure: Measure,
    log_dir: Path,
    log: Callable[[str], None] = stderr,
) -> dict[str, Any]:
    """Start every configuration's server, ``prepare`` each, then ``measure`` the runs.

    The runs are :func:`interleave`'s; after each the server is waited idle. A run ``measure``
    skips (it returns the reason) is listed once, in round 0.

    Returns:
        JSON-ready: ``configs``, ``cells``, ``samples`` (one per run: the round, cell and
        configuration, what ``measure`` returned, the seconds waited idle), ``skipped`` and
        ``memory_kb`` (single-worker servers: VmRSS after ``prepare``, VmHWM at the end).
    """
    result: dict[str, Any] = {
        "name": suite,
        "configs": [asdict(config) for config in configs],
        "cells": [asdict(cell) | {"key": cell.key} for cell in cells],
        "samples": [],
        "skipped": [],
    }
    with running(configs, log_dir) as servers:
        for server in servers.values():
            prepare(server)
        single = [c.name for c in configs if c.workers == 1]  # --workers: the supervisor's
        result["memory_kb"] = {name: {"start": servers[name].status_kb("VmRSS")} for name in single}
        runs, started = interleave(cells, [c.name for c in configs], rounds), time.monotonic()
        for index, run in enumerate(runs, 1):
            server = servers[run.config]
            measured = measure(server, run)
            if isinstance(measured, str):
                why = {"config": run.config, "cell": run.cell.key, "why": measured}
                result["skipped"] += [why] if run.round == 0 else []
                continue
            sample, text = measured
            drain = {"drain_s": round(server.wait_idle(), 2)}
            keys = {"round": run.round, "cell": run.cell.key, "config": run.config}
            result["samples"].append(keys | sample | drain)
            where = f"round {run.round + 1} {run.cell.key} {run.config}"
            log(f"{suite} [{index}/{len(runs)} {time.monotonic() - started:.0f}s] {where}: {text}")
        for name in single:
            result["memory_kb"][name]["peak"] = servers[name].status_kb("VmHWM")
    return result


def require_wrk() -> str:
    """Return the path of the wrk executable; WrkError saying how to install it if missing."""
    path = shutil.which("wrk")
    if path is None:
        raise WrkError(
            "wrk is not installed: run scripts/system-packages (as root: apt-get install wrk on "
            "Debian/Ubuntu), or install wrk with your package manager (brew install wrk on macOS)"
        )
    return path


def wrk_command(
    wrk: str,
    url: str,
    *,
    connections: int,
    duration_s: int,
    timeout_s: int,
    close: bool = False,
    posted: Path | None = None,
) -> list[str]:
    """Return the wrk command line for one run.

    One wrk thread drives every connection: on 2 cores the server gets one, wrk the other.
    ``close`` sends ``Connection: close``: a new TCP connection per request; ``posted``, a file
    of JSON, makes every request a POST of it (``wrk_report.lua`` reads the file).
    """
    options = f"--threads 1 --connections {connections} --duration {duration_s}s"
    command = [wrk, *options.split(), "--timeout", f"{timeout_s}s", "--script", str(_LUA)]
    command += ["--header", "Connection: close"] if close else []
    return [*command, url, *([str(posted)] if posted else [])]


def parse_wrk_output(stdout: str) -> dict[str, Any]:
    """Return the summary ``wrk_report.lua`` printed, with ``duration_s`` and ``rps`` added."""
    for line in stdout.splitlines():
        if line.startswith("BENCH_JSON "):
            found: dict[str, Any] = json.loads(line.removeprefix("BENCH_JSON "))
            found["duration_s"] = found.pop("duration_us") / 1e6
            found["rps"] = found["requests"] / found["duration_s"] if found["duration_s"] else 0.0
            return found
    raise WrkError(f"wrk printed no summary line; its output was:\n{stdout}")


@dataclass(frozen=True)
class LoadSettings:
    """How long and how often each wrk run goes.

    A run lasts ``duration_s`` or long enough for ``min_requests`` requests of the
    configuration's single-request time, up to ``max_duration_s``. It is skipped when the
    requests it leaves in flight (one per connection beyond the first) would keep the server
    busy longer than ``drain_budget_s`` after wrk stops.
    """

    rounds: int
    duration_s: int
    max_duration_s: int
    min_requests: int
    drain_budget_s: float

    @property
    def timeout_s(self) -> int:
        """The per-request timeout of wrk: longer than any queue a run is allowed to build."""
        return int(self.drain_budget_s + self.max_duration_s + 10)

    def duration_for(self, single_request_s: float, shortest_s: int | None = None) -> int:
        """Return the wrk duration for this single-request time (``shortest_s``: the cell's)."""
        wanted = math.ceil(self.min_requests * single_request_s)
        shortest = self.duration_s if shortest_s is None else shortest_s
        return max(shortest, min(self.max_duration_s, wanted))

    def skip_reason(self, concurrency: int, single_request_s: float) -> str | None:
        """Return why a run at ``concurrency`` must be skipped, or None."""
        drain = (concurrency - 1) * single_request_s
        if drain <= self.drain_budget_s:
            return None
        return (
            f"{concurrency} connections x {single_request_s * 1000:.0f} ms per request would "
            f"queue ~{drain:.0f} s of work (budget {self.drain_budget_s:.0f} s)"
        )


def run_load(
    suite: str,
    configs: Sequence[ServerConfig],
    cells: Sequence[Cell],
    settings: LoadSettings,
    *,
    answer: Callable[[ServerConfig, str], tuple[bytes | None, Any]],
    log_dir: Path,
    log: Callable[[str], None] = stderr,
) -> dict[str, Any]:
    """Check every configuration's answers, then measure each on every cell with wrk, interleaved.

    ``answer(config, body)`` returns what to POST (None: a GET) and the JSON value expected
    back. The fastest of three requests after the check sets each run's duration.

    Returns:
        :func:`drive`'s result, its samples wrk's summaries, with ``single_request_ms``.
    """
    wrk, single = require_wrk(), {}

    def prepare(server: Server) -> None:
        config, times = server.config, {}
        for body in sorted({cell.body for cell in cells}):
            posted, expected = answer(config, body)
            status, content = get(server.port, config.url_path(body), posted=posted)
            if status != 200 or json.loads(content) != expected:
                why = f"{config.name} answered {body} wrongly ({status}): {content[:300]!r}"
                raise ServerError(why)
            times[body] = min(_timed(server, config.url_path(body), posted) for _ in range(3))
            (log_dir / f"{body}.json").write_bytes(posted or b"")
        single[config.name] = times

    def measure(server: Server, run: Run) -> tuple[dict[str, Any], str] | str:
        config, cell = server.config, run.cell
        single_s = single[run.config][cell.body]
        reason = settings.skip_reason(cell.concurrency, single_s)
        if reason is not None:
            return reason
        url = f"http://127.0.0.1:{server.port}{config.url_path(cell.body)}"
        command = wrk_command(
            wrk, url, connections=cell.concurrency, close=cell.close,
            duration_s=settings.duration_for(single_s, cell.duration_s),
            timeout_s=settings.timeout_s,
            posted=log_dir / f"{cell.body}.json" if config.method == "POST" else None,
        )  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise WrkError(f"{shlex.join(command)} exited {done.returncode}: {done.stderr}")
        found = parse_wrk_output(done.stdout)
        errors, latency = sum(found["errors"].values()), found["latency_us"]
        p50, p99 = latency["p50"] / 1e3, latency["p99"] / 1e3
        text = f"{found['rps']:.1f} req/s, p50 {p50:.2f} ms, p99 {p99:.2f} ms"
        return found, text + (f", {errors} errors" if errors else "")

    result = drive(suite, configs, cells, settings.rounds, prepare=prepare, measure=measure,
                   log_dir=log_dir, log=log)  # fmt: skip
    result["single_request_ms"] = {
        config: {b: round(s * 1000, 3) for b, s in times.items()}
        for config, times in single.items()
    }
    return result


def _timed(server: Server, path: str, posted: bytes | None) -> float:
    started = time.perf_counter()
    get(server.port, path, posted=posted)
    return time.perf_counter() - started


def header(command: Sequence[str]) -> dict[str, Any]:
    """Return what a result file records beside the samples: command, commit, versions, load."""
    python = Path(sys.executable)
    shown = python.relative_to(ROOT) if python.is_relative_to(ROOT) else python
    git = ["git", "rev-parse", "--short=12", "HEAD"]
    return {
        "command": shlex.join([str(shown), *command]),
        "git": subprocess.run(
            git, cwd=ROOT, capture_output=True, text=True, check=False
        ).stdout.strip(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "packages": {package: metadata.version(package) for package in PACKAGES},
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "load_average": [round(value, 2) for value in os.getloadavg()],
    }


#: A question's measurement: (quick profile?, the directory for server logs) to its results.
Question = Callable[[bool, Path], dict[str, Any]]


def measure_into(
    suite: str, question: Question, quick: bool, out: Path, command: Sequence[str]
) -> dict[str, Any]:
    """Measure ``question`` and write its results, with :func:`header`, to ``out/<suite>.json``."""
    run, started = header(command), time.monotonic()
    with tempfile.TemporaryDirectory(prefix="benchmarks-") as logs:
        measured = question(quick, Path(logs))
    measured["run"] = run | {"elapsed_s": round(time.monotonic() - started)}
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{suite}.json").write_text(json.dumps(measured, indent=1))
    return measured


def script(suite: str, question: Question, render: Callable[[Any], list[str]]) -> int:
    """Run one question as ``python -m benchmarks.<module> [--quick] [--out DIR]``."""
    parser = argparse.ArgumentParser(prog=f"python -m benchmarks.{suite}")
    parser.add_argument("--quick", action="store_true", help="the subset the docs quote")
    parser.add_argument("--out", type=Path, help="default: benchmarks/results[/quick]")
    args = parser.parse_args()
    out = args.out or (RESULTS / "quick" if args.quick else RESULTS)
    command = ["-m", f"benchmarks.{suite}", *sys.argv[1:]]
    try:
        measured = measure_into(suite, question, args.quick, out, command)
    except (WrkError, ServerError) as error:
        print(f"benchmarks: {error}", file=sys.stderr)
        return 2
    print("\n".join(render(measured)))
    return 0
