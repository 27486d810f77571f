"""Turn raw results into summaries: per-cell spreads, paired ratios and scaling slopes.

Everything here works on the JSON-ready results (``results.json``), so that tables and plots
can be rendered again from a committed file without measuring.
"""

import re
import statistics
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from benchmarks.stats import Line, Spread, fit_line, paired_ratios


@dataclass(frozen=True)
class CellSummary:
    """One configuration on one cell, over the rounds."""

    config: str
    cell: str
    rps: Spread
    mean_ms: float
    p50_ms: float
    p99_ms: float
    errors: int


def rps_by_round(suite: dict[str, Any]) -> dict[tuple[str, str], dict[int, float]]:
    """Return ``{(cell, config): {round: requests per second}}``."""
    found: dict[tuple[str, str], dict[int, float]] = defaultdict(dict)
    for sample in suite["samples"]:
        found[sample["cell"], sample["config"]][sample["round"]] = sample["rps"]
    return dict(found)


def summarize(suite: dict[str, Any]) -> dict[tuple[str, str], CellSummary]:
    """Return the summary of every measured ``(cell, config)`` pair of a suite."""
    grouped: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for sample in suite["samples"]:
        grouped[sample["cell"], sample["config"]].append(sample)
    return {
        key: CellSummary(
            config=key[1],
            cell=key[0],
            rps=Spread.of([s["rps"] for s in samples]),
            mean_ms=statistics.median(s["latency_us"]["mean"] for s in samples) / 1000,
            p50_ms=statistics.median(s["latency_us"]["p50"] for s in samples) / 1000,
            p99_ms=statistics.median(s["latency_us"]["p99"] for s in samples) / 1000,
            errors=sum(sum(s["errors"].values()) for s in samples),
        )
        for key, samples in grouped.items()
    }


def ratio(suite: dict[str, Any], cell: str, config: str, baseline: str) -> Spread | None:
    """Return the paired ratio of ``config``'s requests/s to ``baseline``'s on ``cell``."""
    by_round = rps_by_round(suite)
    if (cell, config) not in by_round or (cell, baseline) not in by_round:
        return None
    return paired_ratios(by_round[cell, config], by_round[cell, baseline])


_TOKENS = re.compile(r"^tokens-(\d+)@c1$")


@dataclass(frozen=True)
class Scaling:
    """How one configuration's request cost grows with the number of generated tokens.

    Attributes:
        config: The configuration.
        points: ``(tokens, milliseconds per request)`` at concurrency 1, by size.
        line: The least-squares line of seconds per request against tokens.
    """

    config: str
    points: list[tuple[int, float]]
    line: Line

    @property
    def ns_per_token(self) -> float:
        """The slope: nanoseconds of request time per generated token."""
        return self.line.slope * 1e9


def scaling(suite: dict[str, Any]) -> list[Scaling]:
    """Return the scaling of every configuration over the ``tokens-N@c1`` cells.

    The request cost at concurrency 1 is the time of one request, end to end: wrk's mean
    latency (median over rounds), the server's work plus the loopback transfer. The latency
    of completed requests is used rather than 1 / requests per second, which undercounts a
    run of a few slow requests by the one cut off at the end.
    """
    summaries = summarize(suite)
    per_config: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for (cell, config), summary in summaries.items():
        match = _TOKENS.match(cell)
        if match and summary.mean_ms > 0:
            per_config[config].append((int(match.group(1)), summary.mean_ms / 1000))
    found = []
    for config, points in per_config.items():
        points.sort()
        if len(points) < 2:
            continue
        line = fit_line([p[0] for p in points], [p[1] for p in points])
        found.append(Scaling(config, [(n, seconds * 1000) for n, seconds in points], line))
    return found


def inprocess_spreads(measured: dict[str, Any]) -> dict[str, tuple[Spread, Spread | None]]:
    """Return, per candidate, its seconds per call and its paired ratio to the baseline.

    The baseline is the first candidate (``orjson.dumps`` on the ready dict); the ratio is
    candidate time / baseline time, so lower is faster.
    """
    samples: dict[str, list[float]] = measured["samples"]
    baseline = measured["candidates"][0]["name"]
    found = {}
    for name, values in samples.items():
        ratios = paired_ratios(dict(enumerate(values)), dict(enumerate(samples[baseline])))
        found[name] = (Spread.of(values), ratios)
    return found


def connection_summary(measured: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Return, per event loop, the median microseconds of ``connection_made`` per protocol.

    ``delta`` is keepalive minus stock: what uvicorn-keepalive adds to each connection.
    """
    found = {}
    for loop, by_protocol in measured["samples"].items():
        medians = {name: statistics.median(values) * 1e6 for name, values in by_protocol.items()}
        medians["delta"] = medians["keepalive"] - medians["stock"]
        found[loop] = medians
    return found
