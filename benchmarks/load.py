"""A load suite: servers up, answers checked, wrk runs interleaved over the rounds.

wrk, the C HTTP load generator, comes from the Debian package ``wrk`` (``scripts/system-packages``
installs it); the ``done`` hook of ``wrk_report.lua`` prints exact counts and latencies, easier
to parse than wrk's own report.
"""

import json
import math
import shlex
import shutil
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from benchmarks.bodies import body, request, request_answer
from benchmarks.configs import ServerConfig
from benchmarks.rounds import Cell, Run, drive, stderr
from benchmarks.server import Server, ServerError, get

_LUA = Path(__file__).with_name("wrk_report.lua")
_MARKER = "BENCH_JSON "


class WrkError(RuntimeError):
    """wrk is missing, failed, or printed no summary."""


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
        if line.startswith(_MARKER):
            found: dict[str, Any] = json.loads(line[len(_MARKER) :])
            found["duration_s"] = found.pop("duration_us") / 1e6
            found["rps"] = found["requests"] / found["duration_s"] if found["duration_s"] else 0.0
            return found
    raise WrkError(f"wrk printed no summary line; its output was:\n{stdout}")


def run_wrk(wrk: str, url: str, **options: Any) -> dict[str, Any]:
    """Run wrk on ``url`` (``options``: those of :func:`wrk_command`); return its summary."""
    command = wrk_command(wrk, url, **options)
    completed = subprocess.run(command, capture_output=True, text=True, check=False)
    if completed.returncode != 0:
        raise WrkError(f"{shlex.join(command)} exited {completed.returncode}: {completed.stderr}")
    return parse_wrk_output(completed.stdout)


@dataclass(frozen=True)
class LoadSettings:
    """How long and how often each run goes.

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


def _check_and_time(server: Server, config: ServerConfig, name: str) -> float:
    """Check that ``config`` answers the body ``name`` (``plain``: ``{}``), else ServerError.

    Returns the fastest of the next three requests, in s: one slow moment of the machine does
    not get a configuration's runs lengthened or skipped.
    """
    path, posted = config.url_path(name), request(name) if config.method == "POST" else None
    status, content = get(server.port, path, posted=posted)
    expected = {} if name == "plain" else request_answer(name) if posted else body(name).data
    if status != 200 or orjson.loads(content) != expected:
        raise ServerError(f"{config.name} answered {path} wrongly ({status}): {content[:300]!r}")
    times = []
    for _ in range(3):
        started = time.perf_counter()
        get(server.port, path, posted=posted)
        times.append(time.perf_counter() - started)
    return min(times)


def run_suite(
    name: str,
    configs: Sequence[ServerConfig],
    cells: Sequence[Cell],
    settings: LoadSettings,
    *,
    wrk: str,
    log_dir: Path,
    log: Callable[[str], None] = stderr,
) -> dict[str, Any]:
    """Check every configuration's answers, then measure each on every cell, interleaved.

    Returns:
        :func:`~benchmarks.rounds.drive`'s result, its samples wrk's summaries, with
        ``single_request_ms`` (per configuration and body).
    """
    single: dict[str, dict[str, float]] = {}

    def prepare(server: Server, config: ServerConfig) -> None:
        bodies = sorted({cell.body for cell in cells if config.serves(cell.body)})
        single[config.name] = {b: _check_and_time(server, config, b) for b in bodies}
        for posted in bodies if config.method == "POST" else ():
            (log_dir / f"{posted}.json").write_bytes(request(posted))

    def measure(server: Server, run: Run) -> tuple[dict[str, Any], str] | str:
        if not server.config.serves(run.cell.body):
            return "serves the synthetic bodies only"
        single_s = single[run.config][run.cell.body]
        reason = settings.skip_reason(run.cell.concurrency, single_s)
        if reason is not None:
            return reason
        measured = run_wrk(
            wrk,
            f"http://127.0.0.1:{server.port}{server.config.url_path(run.cell.body)}",
            connections=run.cell.concurrency,
            duration_s=settings.duration_for(single_s, run.cell.duration_s),
            timeout_s=settings.timeout_s,
            close=run.cell.close,
            posted=log_dir / f"{run.cell.body}.json" if server.config.method == "POST" else None,
        )
        errors = sum(measured["errors"].values())
        latency = {q: measured["latency_us"][q] / 1000 for q in ("p50", "p99")}
        text = f"{measured['rps']:.1f} req/s, p50 {latency['p50']:.2f} ms, "
        text += f"p99 {latency['p99']:.2f} ms" + (f", {errors} errors" if errors else "")
        return measured, text

    result = drive(
        name,
        configs,
        cells,
        settings.rounds,
        prepare=prepare,
        measure=measure,
        log_dir=log_dir,
        log=log,
    )
    result["single_request_ms"] = {
        config: {b: round(s * 1000, 3) for b, s in times.items()}
        for config, times in single.items()
    }
    return result
