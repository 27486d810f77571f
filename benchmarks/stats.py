"""Statistics of the wrk rounds: medians with their spread and paired per-round ratios.

In-process timings use pyperf's own statistics (:mod:`benchmarks.inprocess`); wrk runs are
few long samples interleaved by round, whose ratios are paired round by round.
"""

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Spread:
    """A central value of some measurements with their range and count.

    Made by :meth:`of`: the median with the minimum and maximum. A pyperf timing ratio
    (:func:`benchmarks.analysis.relative_time`) is the ratio of the means instead.
    """

    median: float
    low: float
    high: float
    count: int

    @classmethod
    def of(cls, values: Sequence[float]) -> "Spread":
        """Summarize ``values``.

        Raises:
            ValueError: ``values`` is empty.
        """
        if not values:
            raise ValueError("no measurements to summarize")
        return cls(statistics.median(values), min(values), max(values), len(values))


def paired_ratios(
    numerator: Mapping[int, float], denominator: Mapping[int, float]
) -> Spread | None:
    """Return the spread of ``numerator[r] / denominator[r]`` over the rounds both measured.

    Both mappings go from round number to a measurement. Each ratio compares two runs that
    were measured one right after the other in the same round, so slow drifts of the machine
    (other work, thermal state) cancel out; the median over rounds then drops outliers.

    Returns:
        None when no round has both measurements or a zero denominator.
    """
    ratios = [
        numerator[r] / denominator[r]
        for r in sorted(numerator.keys() & denominator.keys())
        if denominator[r] > 0
    ]
    return Spread.of(ratios) if ratios else None
