"""Turn raw results into summaries: per-cell spreads, paired ratios and scaling slopes.

Everything here works on the JSON-ready results (``results.json``), so that tables and plots
can be rendered again from a committed file without measuring.
"""

import json
import re
import statistics
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import pyperf

from benchmarks.stats import Spread, paired_ratios


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
        ns_per_token: The least-squares slope of request time against tokens.
    """

    config: str
    points: list[tuple[int, float]]
    ns_per_token: float


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
        line = statistics.linear_regression([p[0] for p in points], [p[1] for p in points])
        millis = [(n, seconds * 1000) for n, seconds in points]
        found.append(Scaling(config, millis, line.slope * 1e9))
    return found


def inprocess_benchmarks(results: dict[str, Any]) -> dict[str, list[pyperf.Benchmark]]:
    """Return pyperf's in-process benchmarks by body name, in the order they ran."""
    data = results.get("inprocess")
    if not data:
        return {}
    found: dict[str, list[pyperf.Benchmark]] = defaultdict(list)
    for bench in pyperf.BenchmarkSuite.loads(json.dumps(data)).get_benchmarks():
        found[bench.get_name().split("/", 1)[0]].append(bench)
    return dict(found)


def relative_time(bench: pyperf.Benchmark, baseline: pyperf.Benchmark) -> Spread:
    """Return ``bench``'s mean time over ``baseline``'s, as ``pyperf compare_to`` divides.

    The range is where the ratio lies when each mean moves by one standard deviation
    (numerator down and denominator up for the low end, the other way for the high end).
    """
    mean, base = bench.mean(), baseline.mean()
    spread, base_spread = bench.stdev(), baseline.stdev()
    high = (mean + spread) / (base - base_spread) if base > base_spread else float("inf")
    return Spread(mean / base, (mean - spread) / (base + base_spread), high, bench.get_nvalue())


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


@dataclass(frozen=True)
class StreamSummary:
    """One streaming configuration over the rounds.

    Attributes:
        config: The configuration.
        us_per_event: Microseconds per event of the single stream.
        events_per_s: Events per second of the single stream.
        relative: Paired ratio of ``us_per_event`` to the baseline's.
        concurrent_events_per_s: Events per second of all concurrent streams (median).
        gap_p50_ms: The median time between events under concurrent streams (median).
        gap_p99_ms: Its 99th percentile (median over rounds).
        rss: The memory row of the long stream, or None.
    """

    config: str
    us_per_event: Spread
    events_per_s: Spread
    relative: Spread | None
    concurrent_events_per_s: float
    gap_p50_ms: float
    gap_p99_ms: float
    rss: dict[str, Any] | None


def streaming_summary(suite: dict[str, Any], baseline: str) -> list[StreamSummary]:
    """Return the summary of every configuration of the streaming suite, in suite order."""
    single: dict[str, dict[int, dict[str, Any]]] = defaultdict(dict)
    concurrent: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for sample in suite["samples"]:
        if sample["cell"].endswith("@c1"):
            single[sample["config"]][sample["round"]] = sample
        else:
            concurrent[sample["config"]].append(sample)
    per_event = {
        config: {r: s["us_per_event"] for r, s in rounds.items()}
        for config, rounds in single.items()
    }
    rss = {row["config"]: row for row in suite["rss"]}
    found = []
    for config in (c["name"] for c in suite["configs"]):
        if config not in single or config not in concurrent:
            continue
        loaded = concurrent[config]
        found.append(
            StreamSummary(
                config=config,
                us_per_event=Spread.of(list(per_event[config].values())),
                events_per_s=Spread.of([s["events_per_s"] for s in single[config].values()]),
                relative=paired_ratios(per_event[config], per_event.get(baseline, {})),
                concurrent_events_per_s=statistics.median(s["events_per_s"] for s in loaded),
                gap_p50_ms=statistics.median(s["gap_ms"]["p50"] for s in loaded),
                gap_p99_ms=statistics.median(s["gap_ms"]["p99"] for s in loaded),
                rss=rss.get(config),
            )
        )
    return found
