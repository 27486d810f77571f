"""The order in which the load runs happen: configurations interleaved round-robin."""

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Cell:
    """One workload: a body at a concurrency, over keep-alive or new connections.

    Attributes:
        body: The body's name (for the keepalive suite, the fixed ``{}`` body).
        concurrency: wrk's number of open connections.
        close: Send ``Connection: close``: a new TCP connection per request.
        duration_s: The shortest run on this cell; None: the suite's setting.
    """

    body: str
    concurrency: int
    close: bool = False
    duration_s: int | None = None

    @property
    def key(self) -> str:
        """A stable identifier, e.g. ``tokens-65536@c32`` or ``plain@c32+close``."""
        return f"{self.body}@c{self.concurrency}{'+close' if self.close else ''}"


@dataclass(frozen=True)
class Run:
    """One wrk run: a configuration on a cell in a round."""

    round: int
    cell: Cell
    config: str


def interleave(cells: Sequence[Cell], configs: Sequence[str], rounds: int) -> list[Run]:
    """Return the runs of ``rounds`` rounds, configurations interleaved round-robin.

    Within a round every cell is measured once per configuration, the configurations of a
    cell back to back, so that the runs compared with each other are close in time. The
    configurations' order rotates by one each round, so that no configuration is always
    first after a change of cell (and warm or cold in the same way).
    """
    runs: list[Run] = []
    for round_number in range(rounds):
        for cell in cells:
            shift = round_number % len(configs) if configs else 0
            order = [*configs[shift:], *configs[:shift]]
            runs += [Run(round_number, cell, config) for config in order]
    return runs
