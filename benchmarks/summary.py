"""The summary of a run, from the JSON results: Markdown tables with paired ratios, and plots.

Everything here reads the files in ``benchmarks/results``, so ``python -m benchmarks --render
DIR`` prints the summary and draws the plots again from committed files.
"""

import json
import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pyperf

from benchmarks.configs import KEEPALIVE_BASELINES, SERIALIZATION_BASELINES, STREAMING_BASELINE
from benchmarks.rounds import Spread, paired_ratios

Suite = Mapping[str, Any]


def number(value: float | None, factor: float = 1.0) -> str:
    """Format ``value * factor`` with 3 significant digits (thousands separated by a space)."""
    if value is None:
        return "-"
    value *= factor
    if value >= 1000:
        return f"{value:,.0f}".replace(",", " ")
    return f"{value:.0f}" if value >= 100 else f"{value:.1f}" if value >= 10 else f"{value:.2f}"


def spread(value: Spread | None, suffix: str = "") -> str:
    """Format ``median (min-max)``, or a dash when nothing was measured."""
    if value is None:
        return "-"
    return f"{number(value.median)}{suffix} ({number(value.low)}-{number(value.high)})"


def table(title: str, header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Return a Markdown table under a heading (nothing without rows)."""
    lines = [f"### `{title}`", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return [*lines, *("| " + " | ".join(row) + " |" for row in rows), ""] if rows else []


def by_round(suite: Suite, metric: str) -> dict[tuple[str, str], dict[int, float]]:
    """Return ``{(cell, config): {round: sample[metric]}}``."""
    found: dict[tuple[str, str], dict[int, float]] = defaultdict(dict)
    for sample in suite["samples"]:
        found[sample["cell"], sample["config"]][sample["round"]] = sample[metric]
    return dict(found)


def _median(suite: Suite, cell: str, config: str, field: str, key: str) -> float | None:
    """Return the median over the rounds of ``sample[field][key]`` (None: not measured)."""
    values = [
        sample[field][key]
        for sample in suite["samples"]
        if (sample["cell"], sample["config"]) == (cell, config) and sample.get(field)
    ]
    return statistics.median(values) if values else None


_UNITS = {"rps": "req/s", "events_per_s": "events/s"}
#: Columns of times: header, the samples' field, the percentiles shown, the factor to ms.
LATENCY = [("p99 ms", "latency_us", ("p99",), 1e-3)]
STREAM_TIMES = [
    ("ms between events p50 / p99", "gap_ms", ("p50", "p99"), 1.0),
    ("ms yield to read p50 / p99", "yield_to_read_ms", ("p50", "p99"), 1.0),
]


def section(
    title: str,
    suite: Suite,
    metric: str,
    baselines: Mapping[str, Sequence[str]],
    times: Sequence[tuple[str, str, Sequence[str], float]],
) -> list[str]:
    """Return one table per cell: ``metric``'s median (min-max) over the rounds, its paired
    ratios to ``baselines`` (each configuration to those it is divided by), and ``times``.

    Columns without any measurement (e.g. times from ``yield`` to read in unstamped streams)
    are left out.
    """  # noqa: D205
    run, rounds = suite["run"], by_round(suite, metric)
    labels = {config["name"]: config["label"] for config in suite["configs"]}
    columns = [name for name in labels if any(name in b for b in baselines.values())]
    header = ["configuration", _UNITS[metric], *[f"x {b}" for b in columns], *[t[0] for t in times]]
    lines = [f"## {title}", "", f"{run['date']}, git {run['git']}: `{run['command']}`", ""]
    for cell in (c["key"] for c in suite["cells"]):
        rows = []
        for config in (name for name in labels if (cell, name) in rounds):
            ratios = [
                "baseline"
                if b == config
                else spread(paired_ratios(rounds[cell, config], rounds.get((cell, b), {})), "x")
                if b in baselines.get(config, ())
                else ""
                for b in columns
            ]
            shown = [
                " / ".join(number(_median(suite, cell, config, field, q), factor) for q in qs)
                for _, field, qs, factor in times
            ]
            measured = spread(Spread.of(list(rounds[cell, config].values())))
            rows.append([f"{labels[config]} (`{config}`)", measured, *ratios, *shown])
        kept = [i for i in range(len(header)) if any(row[i].strip("- /") for row in rows)]
        lines += table(cell, [header[i] for i in kept], [[row[i] for i in kept] for row in rows])
    skipped = suite.get("skipped", [])
    lines += [f"- skipped `{s['config']}` on `{s['cell']}`: {s['why']}" for s in skipped]
    memory = suite.get("memory_kb", {}).items()
    rows = [[f"`{c}`", number(m["start"] / 1024), number(m["peak"] / 1024)] for c, m in memory]
    return lines + table("memory", ["configuration", "RSS MB at start", "peak"], rows)


def inprocess_benchmarks(data: Mapping[str, Any]) -> dict[str, list[pyperf.Benchmark]]:
    """Return pyperf's benchmarks by body name, in the order they ran."""
    found: dict[str, list[pyperf.Benchmark]] = defaultdict(list)
    for bench in pyperf.BenchmarkSuite.loads(json.dumps(data)).get_benchmarks():
        found[bench.get_name().split("/", 1)[0]].append(bench)
    return dict(found)


def inprocess_section(data: Mapping[str, Any]) -> list[str]:
    """Return one table per body: pyperf's mean and std dev, the ratio of means to the first.

    Results whose std dev is at least 10 % of the mean (the first criterion of ``pyperf
    check``) are named once, after the tables.
    """
    lines, unstable = ["## Serialization alone, in process (pyperf)", ""], []
    for name, benches in inprocess_benchmarks(data).items():
        rows = []
        for bench in benches:
            mean, stdev = bench.mean(), bench.stdev() if bench.get_nvalue() > 1 else 0.0
            code = bench.get_metadata().get("description", bench.get_name())
            ratio = number(mean / benches[0].mean())
            rows.append(
                [f"`{code}`", f"{number(mean * 1e6)} +- {number(stdev * 1e6)}", f"{ratio}x"]
            )
            unstable += [bench.get_name()] if stdev >= 0.1 * mean else []
        lines += table(name, ["code", "us per call", "x time of the first"], rows)
    if unstable:
        lines += [
            f"pyperf: {len(unstable)} results may be unstable (std dev >= 10 % of the mean): "
            f"{', '.join(unstable)}; `python -m pyperf check inprocess.json` says more.",
            "",
        ]
    return lines


def render(results: Mapping[str, Any]) -> str:
    """Return the summary of every suite in ``results`` (suite name to its data)."""
    lines: list[str] = []
    if "serialization" in results:
        suite = results["serialization"]
        baselines = {c["name"]: tuple(SERIALIZATION_BASELINES) for c in suite["configs"]}
        lines += section("Serialization over HTTP", suite, "rps", baselines, LATENCY)
    if "inprocess" in results:
        lines += inprocess_section(results["inprocess"])
    if "streaming" in results:
        suite = results["streaming"]
        baselines = {c["name"]: (STREAMING_BASELINE,) for c in suite["configs"]}
        title = "Streaming chat-completion chunks"
        lines += section(title, suite, "events_per_s", baselines, STREAM_TIMES)
    if "keepalive" in results:
        times = [("latency ms p50 / p99", "latency_us", ("p50", "p99"), 1e-3)]
        lines += section("TCP keepalive", results["keepalive"], "rps", KEEPALIVE_BASELINES, times)
    return "\n".join(lines)


def plot(suite: Suite, metric: str, label: str, path: Path, concurrency: int | None = None) -> None:
    """Draw one panel per cell (at ``concurrency``, or all) of ``metric``'s median and min-max.

    Horizontal bars on a log scale, two panels per row, each value written past its error bar.
    """
    import matplotlib  # imported here: only plots need it, and it is slow to import

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rounds = by_round(suite, metric)
    panels = {
        cell["key"]: {c["name"]: Spread.of(list(rounds[cell["key"], c["name"]].values()))
                      for c in suite["configs"] if (cell["key"], c["name"]) in rounds}
        for cell in suite["cells"]
        if concurrency in (None, cell["concurrency"])
    }  # fmt: skip
    panels = {cell: values for cell, values in panels.items() if values}
    columns, height = min(2, len(panels)), max(map(len, panels.values())) * 0.32 + 1.2
    rows = -(-len(panels) // columns)
    figure, axes = plt.subplots(
        rows, columns, figsize=(6.5 * columns, height * rows), squeeze=False
    )
    for axis in axes.flat[len(panels) :]:
        axis.set_visible(False)
    for axis, (cell, values) in zip(axes.flat, panels.items(), strict=False):
        names, spreads = list(values), list(values.values())
        errors = [[v.median - v.low for v in spreads], [v.high - v.median for v in spreads]]
        colors = ["tab:orange" if "dispatch" in name else "tab:blue" for name in names]
        axis.barh(names, [v.median for v in spreads], xerr=errors, color=colors, capsize=2)
        axis.set_xscale("log")
        axis.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())  # labels collide
        axis.invert_yaxis()
        axis.set_xlabel(label, fontsize=9)
        axis.set_title(cell, fontsize=10)
        axis.tick_params(labelsize=8)
        for y, value in enumerate(spreads):
            axis.text(value.high * 1.08, y, number(value.median), va="center", fontsize=8)
        axis.set_xlim(min(v.low for v in spreads) / 1.5, max(v.high for v in spreads) * 4)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
