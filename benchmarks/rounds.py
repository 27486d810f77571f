"""Rounds: configurations interleaved round-robin, and ratios paired round by round.

Each configuration of a workload runs right after the others in the same round, so a ratio of
two of them taken within one round cancels slow drifts of the machine (other work, thermal
state); the median over the rounds then drops outliers.
"""

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple


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
