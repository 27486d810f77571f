"""Statistics of repeated measurements: medians with their spread, paired ratios, slopes."""

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Spread:
    """The median of some measurements with their minimum, maximum and count."""

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


@dataclass(frozen=True)
class Line:
    """A least-squares line ``y = slope * x + intercept``."""

    slope: float
    intercept: float


def fit_line(xs: Sequence[float], ys: Sequence[float]) -> Line:
    """Fit ``ys`` against ``xs`` by ordinary least squares.

    Raises:
        ValueError: Fewer than two points, different lengths, or all ``xs`` equal.
    """
    if len(xs) != len(ys) or len(xs) < 2:
        raise ValueError("a line needs at least two (x, y) points")
    slope, intercept = statistics.linear_regression(xs, ys)
    return Line(slope, intercept)
