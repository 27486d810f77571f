"""The summary tables of a run: medians with their range and paired ratios, in Markdown.

Everything here reads the JSON-ready results (the files in ``benchmarks/results``), so a
summary is printed again from committed files with ``python -m benchmarks --render DIR``.
"""

import json
import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import pyperf

from benchmarks.configs import KEEPALIVE_BASELINES, SERIALIZATION_BASELINES, STREAMING_BASELINE
from benchmarks.rounds import Spread, paired_ratios


def number(value: float) -> str:
    """Format a measurement with 3 significant digits (thousands separated by a space)."""
    if value >= 1000:
        return f"{value:,.0f}".replace(",", " ")
    return f"{value:.0f}" if value >= 100 else f"{value:.1f}" if value >= 10 else f"{value:.2f}"


def spread(value: Spread | None, suffix: str = "") -> str:
    """Format ``median (min-max)``, or a dash when nothing was measured."""
    if value is None:
        return "-"
    return f"{number(value.median)}{suffix} ({number(value.low)}-{number(value.high)})"


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Return a Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def by_round(suite: Mapping[str, Any], metric: str) -> dict[tuple[str, str], dict[int, float]]:
    """Return ``{(cell, config): {round: sample[metric]}}``."""
    found: dict[tuple[str, str], dict[int, float]] = defaultdict(dict)
    for sample in suite["samples"]:
        found[sample["cell"], sample["config"]][sample["round"]] = sample[metric]
    return dict(found)


def spreads(suite: Mapping[str, Any], metric: str) -> dict[tuple[str, str], Spread]:
    """Return the spread over the rounds of ``metric`` per ``(cell, config)``."""
    return {key: Spread.of(list(v.values())) for key, v in by_round(suite, metric).items()}


def _median(
    suite: Mapping[str, Any], cell: str, config: str, metric: str, key: str
) -> float | None:
    """Return the median over the rounds of ``sample[metric][key]`` (None: not measured)."""
    values = [
        sample[metric][key]
        for sample in suite["samples"]
        if (sample["cell"], sample["config"]) == (cell, config) and sample.get(metric)
    ]
    return statistics.median(values) if values else None


def _heading(title: str, run: Mapping[str, Any]) -> list[str]:
    return [f"## {title}", "", f"{run['date']}, git {run['git']}: `{run['command']}`", ""]


def load_section(
    title: str, suite: Mapping[str, Any], baselines: Mapping[str, Sequence[str]]
) -> list[str]:
    """Return one table per cell: req/s, p99 latency and the paired ratios to ``baselines``.

    ``baselines`` maps each configuration to the configurations its req/s are divided by.
    """
    rps, rounds = spreads(suite, "rps"), by_round(suite, "rps")
    labels = {config["name"]: config["label"] for config in suite["configs"]}
    columns = [name for name in labels if any(name in b for b in baselines.values())]
    lines = _heading(title, suite["run"])
    for cell in (c["key"] for c in suite["cells"]):
        rows = []
        for config, label in labels.items():
            if (cell, config) not in rps:
                continue
            ratios = [
                spread(paired_ratios(rounds[cell, config], rounds.get((cell, b), {})), "x")
                if b in baselines.get(config, ()) and b != config
                else "baseline"
                if b == config
                else ""
                for b in columns
            ]
            p99 = _median(suite, cell, config, "latency_us", "p99") or 0.0
            rows.append([f"{label} (`{config}`)", spread(rps[cell, config]), number(p99 / 1000)])
            rows[-1] += ratios
        header = ["configuration", "req/s", "p99 ms", *[f"x {b}" for b in columns]]
        lines += [f"### `{cell}`", "", *table(header, rows), ""] if rows else []
    lines += [f"- skipped `{s['config']}` on `{s['cell']}`: {s['why']}" for s in suite["skipped"]]
    return lines


def streaming_section(suite: Mapping[str, Any]) -> list[str]:
    """Return one table per cell: events/s, the ratio to the baseline, times between events."""
    eps, rounds = spreads(suite, "events_per_s"), by_round(suite, "events_per_s")
    labels = {config["name"]: config["label"] for config in suite["configs"]}
    lines = _heading("Streaming chat-completion chunks", suite["run"])
    for cell in (c["key"] for c in suite["cells"]):
        rows = []
        for config, label in labels.items():
            if (cell, config) not in eps:
                continue
            ratio = paired_ratios(rounds[cell, config], rounds.get((cell, STREAMING_BASELINE), {}))
            times = [
                _median(suite, cell, config, metric, q)
                for metric in ("gap_ms", "yield_to_read_ms")
                for q in ("p50", "p99")
            ]
            shown = [number(t) if t is not None else "-" for t in times]
            rows.append([f"{label} (`{config}`)", spread(eps[cell, config]), spread(ratio, "x")])
            rows[-1] += [f"{shown[0]} / {shown[1]}", f"{shown[2]} / {shown[3]}"]
        header = ["configuration", "events/s", f"x {STREAMING_BASELINE}"]
        header += ["ms between events p50 / p99", "ms yield to read p50 / p99"]
        if all(row[-1] == "- / -" for row in rows):  # not a stamped shape
            header, rows = header[:-1], [row[:-1] for row in rows]
        lines += [f"### `{cell}`", "", *table(header, rows), ""] if rows else []
    memory = suite.get("memory_kb", {})
    rows = [
        [f"`{c}`", number(m["start"] / 1024), number(m["peak"] / 1024)] for c, m in memory.items()
    ]
    return lines + (
        [*table(["configuration", "RSS MB at start", "peak"], rows), ""] if rows else []
    )


def inprocess_benchmarks(data: Mapping[str, Any]) -> dict[str, list[pyperf.Benchmark]]:
    """Return pyperf's benchmarks by body name, in the order they ran."""
    found: dict[str, list[pyperf.Benchmark]] = defaultdict(list)
    for bench in pyperf.BenchmarkSuite.loads(json.dumps(data)).get_benchmarks():
        found[bench.get_name().split("/", 1)[0]].append(bench)
    return dict(found)


def inprocess_section(data: Mapping[str, Any]) -> list[str]:
    """Return one table per body: pyperf's mean and std dev, the ratio of means to the first."""
    lines = ["## Serialization alone, in process (pyperf)", ""]
    for name, benches in inprocess_benchmarks(data).items():
        base = benches[0].mean()
        rows = [
            [
                f"`{bench.get_metadata().get('description', bench.get_name())}`",
                f"{number(bench.mean() * 1e6)} +- {number(bench.stdev() * 1e6)}",
                f"{number(bench.mean() / base)}x",
            ]
            for bench in benches
        ]
        lines += [f"### `{name}`", "", *table(["code", "us per call", "x time of the first"], rows)]
        lines += [""]
    return lines


def unstable(data: Mapping[str, Any]) -> list[str]:
    """Return the benchmarks of a pyperf suite whose standard deviation is >= 10 % of the mean.

    pyperf's first criterion for "the benchmark result may be unstable" (``pyperf check``),
    reported once for the whole suite rather than after each benchmark.
    """
    return [
        bench.get_name()
        for benches in inprocess_benchmarks(data).values()
        for bench in benches
        if bench.get_nvalue() > 1 and bench.stdev() >= 0.1 * bench.mean()
    ]


def render(results: Mapping[str, Any]) -> str:
    """Return the summary of every suite in ``results`` (suite name to its data)."""
    lines: list[str] = []
    if "serialization" in results:
        columns = list(SERIALIZATION_BASELINES)
        baselines = {c["name"]: columns for c in results["serialization"]["configs"]}
        lines += load_section("Serialization over HTTP", results["serialization"], baselines)
    if "inprocess" in results:
        lines += inprocess_section(results["inprocess"])
        shaky = unstable(results["inprocess"])
        lines += (
            [
                f"pyperf: {len(shaky)} results may be unstable (std dev >= 10 % of the mean): "
                f"{', '.join(shaky)}; `python -m pyperf check inprocess.json` says more.",
                "",
            ]
            if shaky
            else []
        )
    if "streaming" in results:
        lines += streaming_section(results["streaming"])
    if "keepalive" in results:
        baselines = {config: [base] for config, base in KEEPALIVE_BASELINES.items()}
        lines += load_section("TCP keepalive", results["keepalive"], baselines)
    return "\n".join(lines)
