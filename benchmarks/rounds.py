"""Rounds: configurations interleaved round-robin, ratios paired round by round, one driver.

Each configuration of a workload runs right after the others in the same round, so a ratio of
two of them taken within one round cancels slow drifts of the machine (other work, thermal
state); the median over the rounds then drops outliers.
"""

import statistics
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, NamedTuple

from benchmarks.configs import ServerConfig
from benchmarks.server import Server, running


@dataclass(frozen=True)
class Cell:
    """A workload: a body (``plain``: the keepalive app; or a stream's shape) at a concurrency.

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
Measure = Callable[[Server, Run], "tuple[dict[str, Any], str] | str"]


def drive(
    suite: str,
    configs: Sequence[ServerConfig],
    cells: Sequence[Cell],
    rounds: int,
    *,
    prepare: Callable[[Server, ServerConfig], None],
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
        "memory_kb": {},
    }
    with running(list(configs), log_dir) as servers:
        for config in configs:
            prepare(servers[config.name], config)
        single = [c.name for c in configs if c.workers == 1]  # --workers: the supervisor's
        result["memory_kb"] = {name: {"start": servers[name].status_kb("VmRSS")} for name in single}
        runs, started = interleave(cells, [c.name for c in configs], rounds), time.monotonic()
        for index, run in enumerate(runs, 1):
            server = servers[run.config]
            measured = measure(server, run)
            where = f"round {run.round + 1} {run.cell.key} {run.config}"
            if isinstance(measured, str):
                if run.round == 0:
                    result["skipped"].append(
                        {"config": run.config, "cell": run.cell.key, "why": measured}
                    )
                continue
            sample, text = measured
            drain = {"drain_s": round(server.wait_idle(), 2)}
            keys = {"round": run.round, "cell": run.cell.key, "config": run.config}
            result["samples"].append(keys | sample | drain)
            elapsed = time.monotonic() - started
            log(f"{suite} [{index}/{len(runs)} {elapsed:.0f}s] {where}: {text}")
        for name in single:
            result["memory_kb"][name]["peak"] = servers[name].status_kb("VmHWM")
    return result
