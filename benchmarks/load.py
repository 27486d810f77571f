"""A load suite: servers up, answers checked, wrk runs interleaved over the rounds."""

import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import orjson

from benchmarks.bodies import body
from benchmarks.configs import ServerConfig
from benchmarks.rounds import Cell, interleave
from benchmarks.server import Server, ServerError, get, running
from benchmarks.wrk import run_wrk


def stderr(line: str) -> None:
    """Print a progress line."""
    print(line, file=sys.stderr, flush=True)


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
    path = config.url_path(name)
    status, content = get(server.port, path)
    if status != 200 or orjson.loads(content) != ({} if name == "plain" else body(name).data):
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
    settings: LoadSettings,
    *,
    wrk: str,
    log_dir: Path,
    log: Callable[[str], None] = stderr,
) -> dict[str, Any]:
    """Check every configuration's answers, then measure each on every cell, interleaved.

    Returns:
        JSON-ready: ``configs``, ``cells``, ``single_request_ms`` (per configuration and body),
        ``samples`` (one per run: wrk's summary) and ``skipped``.
    """
    by_name = {config.name: config for config in configs}
    single: dict[str, dict[str, float]] = {}
    result: dict[str, Any] = {
        "name": name,
        "configs": [asdict(config) for config in configs],
        "cells": [asdict(cell) | {"key": cell.key} for cell in cells],
        "single_request_ms": {},
        "samples": [],
        "skipped": [],
    }
    with running(list(configs), log_dir) as servers:
        for config in configs:
            single[config.name] = {
                b: _check_and_time(servers[config.name], config, b)
                for b in sorted({cell.body for cell in cells})
            }
            result["single_request_ms"][config.name] = {
                b: round(s * 1000, 3) for b, s in single[config.name].items()
            }
        runs = interleave(cells, list(by_name), settings.rounds)
        started = time.monotonic()
        for index, (number, cell, config_name) in enumerate(runs, 1):
            single_s, server = single[config_name][cell.body], servers[config_name]
            reason = settings.skip_reason(cell.concurrency, single_s)
            if reason is not None:
                if number == 0:
                    result["skipped"].append(
                        {"config": config_name, "cell": cell.key, "why": reason}
                    )
                continue
            measured = run_wrk(
                wrk,
                f"http://127.0.0.1:{server.port}{by_name[config_name].url_path(cell.body)}",
                connections=cell.concurrency,
                duration_s=settings.duration_for(single_s, cell.duration_s),
                timeout_s=settings.timeout_s,
                close=cell.close,
            )
            drained = server.wait_idle()
            sample = {"round": number, "cell": cell.key, "config": config_name, **measured}
            result["samples"].append(sample | {"drain_s": round(drained, 2)})
            errors = sum(measured["errors"].values())
            log(
                f"{name} [{index}/{len(runs)} {time.monotonic() - started:.0f}s] round "
                f"{number + 1} {cell.key} {config_name}: {measured['rps']:.1f} req/s, "
                f"p50 {measured['latency_us']['p50'] / 1000:.2f} ms, "
                f"p99 {measured['latency_us']['p99'] / 1000:.2f} ms"
                + (f", {errors} errors" if errors else "")
            )
    return result
