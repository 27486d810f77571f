"""Run a load suite: servers up, answers checked, wrk runs interleaved, samples recorded."""

import math
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import orjson

from benchmarks.configs import ServerConfig
from benchmarks.rounds import Cell, interleave
from benchmarks.server import Server, ServerError, get, running
from benchmarks.wrk import run_wrk


@dataclass(frozen=True)
class LoadSettings:
    """How long and how often each run goes.

    Attributes:
        rounds: Rounds over all (cell, configuration) pairs.
        duration_s: The shortest wrk run.
        max_duration_s: The longest wrk run.
        min_requests: A run lasts long enough for about this many requests of the
            configuration's single-request time (up to ``max_duration_s``).
        drain_budget_s: A run is skipped when the requests it leaves in flight (one per
            connection beyond the first, each costing the single-request time) would keep
            the server busy longer than this after wrk stops.
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
        """Return the wrk duration for a configuration whose single request takes this long.

        Args:
            single_request_s: The configuration's time for one request on the cell's body.
            shortest_s: The cell's own shortest duration, instead of ``duration_s``.
        """
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


@dataclass
class SuiteResult:
    """Everything one suite measured, in JSON-ready form."""

    name: str
    configs: list[dict[str, Any]] = field(default_factory=list)
    cells: list[dict[str, Any]] = field(default_factory=list)
    single_request_ms: dict[str, dict[str, float]] = field(default_factory=dict)
    samples: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)


def _check_and_time(server: Server, config: ServerConfig, body: str, expected: Any) -> float:
    """Check that ``config`` answers ``body`` correctly and return one request's time in s.

    The first request warms the server up (and builds the body in it); the fastest of the
    next three is the estimate, so that one slow moment of the machine does not make a
    configuration look slower (and get its runs lengthened or skipped).

    Raises:
        ServerError: A status other than 200, or a body that differs from ``expected``.
    """
    path = config.url_path(body)
    status, content = get(server.port, path)
    if status != 200 or orjson.loads(content) != expected:
        raise ServerError(f"{config.name} answered {path} wrongly ({status}): {content[:300]!r}")
    times = []
    for _ in range(3):
        started = time.perf_counter()
        get(server.port, path)
        times.append(time.perf_counter() - started)
    return min(times)


def run_suite(
    name: str,
    configs: Sequence[ServerConfig],
    cells: Sequence[Cell],
    expected: Mapping[str, Any],
    settings: LoadSettings,
    *,
    wrk: str,
    log_dir: Path,
    log: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True),
) -> SuiteResult:
    """Measure every configuration on every cell, interleaved over the rounds.

    Args:
        name: The suite's name in the results.
        configs: The configurations, each run as its own server.
        cells: The workloads.
        expected: For each body name used by ``cells``, the JSON value every configuration
            must answer (checked once before measuring).
        settings: Durations, rounds and the skip budget.
        wrk: The wrk executable.
        log_dir: Where the servers' logs go.
        log: Receives one progress line per run.
    """
    result = SuiteResult(
        name,
        configs=[asdict(config) for config in configs],
        cells=[asdict(cell) | {"key": cell.key} for cell in cells],
    )
    by_name = {config.name: config for config in configs}
    with running(list(configs), log_dir) as servers:
        single: dict[str, dict[str, float]] = {}
        for config in configs:
            single[config.name] = {
                body: _check_and_time(servers[config.name], config, body, expected[body])
                for body in sorted({cell.body for cell in cells})
            }
        result.single_request_ms = {
            config: {body: round(seconds * 1000, 3) for body, seconds in times.items()}
            for config, times in single.items()
        }
        runs = interleave(cells, list(by_name), settings.rounds)
        started = time.monotonic()
        for index, run in enumerate(runs, 1):
            config = by_name[run.config]
            server = servers[run.config]
            single_s = single[run.config][run.cell.body]
            reason = settings.skip_reason(run.cell.concurrency, single_s)
            if reason is not None:
                if run.round == 0:
                    result.skipped.append(
                        {"config": run.config, "cell": run.cell.key, "why": reason}
                    )
                continue
            duration = settings.duration_for(single_s, run.cell.duration_s)
            measured = run_wrk(
                wrk,
                server.url(config.url_path(run.cell.body)),
                connections=run.cell.concurrency,
                duration_s=duration,
                timeout_s=settings.timeout_s,
                close=run.cell.close,
            )
            drained = server.wait_idle()
            result.samples.append(
                {
                    "round": run.round,
                    "cell": run.cell.key,
                    "config": run.config,
                    "rps": measured.rps,
                    "requests": measured.requests,
                    "duration_s": measured.duration_s,
                    "bytes": measured.bytes,
                    "errors": measured.errors,
                    "latency_us": measured.latency_us,
                    "drain_s": round(drained, 2),
                }
            )
            log(
                f"{name} [{index}/{len(runs)} {time.monotonic() - started:.0f}s] round "
                f"{run.round + 1} {run.cell.key} {run.config}: {measured.rps:.1f} req/s, "
                f"p50 {measured.latency_us['p50'] / 1000:.2f} ms, "
                f"p99 {measured.latency_us['p99'] / 1000:.2f} ms"
                + (f", {measured.error_count} errors" if measured.error_count else "")
            )
    return result
