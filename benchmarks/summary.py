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


def number(value: float | None) -> str:
    """Format a measurement with 3 significant digits (thousands separated by a space)."""
    if value is None:
        return "-"
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


def _median(suite: Suite, cell: str, config: str, metric: str, key: str) -> float | None:
    """Return the median over the rounds of ``sample[metric][key]`` (None: not measured)."""
    values = [
        sample[metric][key]
        for sample in suite["samples"]
        if (sample["cell"], sample["config"]) == (cell, config) and sample.get(metric)
    ]
    return statistics.median(values) if values else None


def _heading(title: str, run: Mapping[str, Any]) -> list[str]:
    return [f"## {title}", "", f"{run['date']}, git {run['git']}: `{run['command']}`", ""]


def load_section(title: str, suite: Suite, baselines: Mapping[str, Sequence[str]]) -> list[str]:
    """Return one table per cell: req/s, p99 latency and the paired ratios to ``baselines``.

    ``baselines`` maps each configuration to the configurations its req/s are divided by.
    """
    rounds = by_round(suite, "rps")
    labels = {config["name"]: config["label"] for config in suite["configs"]}
    columns = [name for name in labels if any(name in b for b in baselines.values())]
    header = ["configuration", "req/s", "p99 ms", *[f"x {b}" for b in columns]]
    lines = _heading(title, suite["run"])
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
            p99 = (_median(suite, cell, config, "latency_us", "p99") or 0.0) / 1000
            rps = spread(Spread.of(list(rounds[cell, config].values())))
            rows.append([f"{labels[config]} (`{config}`)", rps, number(p99), *ratios])
        lines += table(cell, header, rows)
    return lines + [
        f"- skipped `{s['config']}` on `{s['cell']}`: {s['why']}" for s in suite["skipped"]
    ]


def streaming_section(suite: Suite) -> list[str]:
    """Return one table per cell: events/s, the ratio to the baseline, times between events."""
    rounds = by_round(suite, "events_per_s")
    labels = {config["name"]: config["label"] for config in suite["configs"]}
    lines = _heading("Streaming chat-completion chunks", suite["run"])
    for cell in (c["key"] for c in suite["cells"]):
        rows = []
        for config in (name for name in labels if (cell, name) in rounds):
            ratio = paired_ratios(rounds[cell, config], rounds.get((cell, STREAMING_BASELINE), {}))
            times = [
                " / ".join(number(_median(suite, cell, config, metric, q)) for q in ("p50", "p99"))
                for metric in ("gap_ms", "yield_to_read_ms")
            ]
            eps = spread(Spread.of(list(rounds[cell, config].values())))
            rows.append([f"{labels[config]} (`{config}`)", eps, spread(ratio, "x"), *times])
        header = ["configuration", "events/s", f"x {STREAMING_BASELINE}"]
        header += ["ms between events p50 / p99", "ms yield to read p50 / p99"]
        if all(row[-1] == "- / -" for row in rows):  # not a stamped shape
            header, rows = header[:-1], [row[:-1] for row in rows]
        lines += table(cell, header, rows)
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
        columns = list(SERIALIZATION_BASELINES)
        baselines = {c["name"]: columns for c in results["serialization"]["configs"]}
        lines += load_section("Serialization over HTTP", results["serialization"], baselines)
    if "inprocess" in results:
        lines += inprocess_section(results["inprocess"])
    if "streaming" in results:
        lines += streaming_section(results["streaming"])
    if "keepalive" in results:
        baselines = {config: [base] for config, base in KEEPALIVE_BASELINES.items()}
        lines += load_section("TCP keepalive", results["keepalive"], baselines)
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
