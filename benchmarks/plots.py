"""PNG plots of the results with matplotlib (Agg backend: no display needed).

Bars show the median over the rounds, error bars the minimum and maximum; each value is
written past the end of its error bar, so that the labels never cover the bars.
"""

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # after matplotlib.use: the backend is chosen first
from matplotlib.ticker import NullFormatter

from benchmarks.rounds import Spread
from benchmarks.summary import inprocess_benchmarks, number, spreads


def _bars(axis: Any, names: Sequence[str], values: Sequence[Spread], label: str) -> None:
    """Draw horizontal bars (log scale) with error bars, each value right of its error bar."""
    medians = [v.median for v in values]
    errors = [[v.median - v.low for v in values], [v.high - v.median for v in values]]
    colors = ["tab:orange" if "dispatch" in name else "tab:blue" for name in names]
    axis.barh(names, medians, xerr=errors, color=colors, capsize=2)
    axis.set_xscale("log")
    axis.xaxis.set_minor_formatter(NullFormatter())  # minor labels collide on short decades
    axis.invert_yaxis()
    axis.set_xlabel(label, fontsize=9)
    axis.tick_params(labelsize=8)
    for y, value in enumerate(values):
        axis.text(value.high * 1.08, y, number(value.median), va="center", fontsize=8)
    axis.set_xlim(min(v.low for v in values) / 1.5, max(v.high for v in values) * 4)


def _grid(panels: Mapping[str, tuple[list[str], list[Spread]]], label: str, path: Path) -> None:
    """Draw one panel per title, two per row, into ``path``."""
    columns = min(2, len(panels))
    rows = -(-len(panels) // columns)
    height = max(len(names) for names, _ in panels.values()) * 0.32 + 1.2
    figure, axes = plt.subplots(
        rows, columns, figsize=(6.5 * columns, height * rows), squeeze=False
    )
    for axis in axes.flat[len(panels) :]:
        axis.set_visible(False)
    for axis, (title, (names, values)) in zip(axes.flat, panels.items(), strict=False):
        _bars(axis, names, values, label)
        axis.set_title(title, fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def _mean_and_stdev(bench: Any) -> Spread:
    """Return pyperf's mean in microseconds, with one standard deviation either side."""
    mean, stdev = bench.mean() * 1e6, bench.stdev() * 1e6
    return Spread(mean, max(mean - stdev, mean / 2), mean + stdev, bench.get_nvalue())


def _load_panels(suite: Mapping[str, Any], metric: str, concurrency: int | None) -> Any:
    found = spreads(suite, metric)
    panels = {}
    for cell in suite["cells"]:
        if concurrency is None or cell["concurrency"] == concurrency:
            names = [c["name"] for c in suite["configs"] if (cell["key"], c["name"]) in found]
            panels[cell["key"]] = (names, [found[cell["key"], name] for name in names])
    return {title: panel for title, panel in panels.items() if panel[0]}


def draw(results: Mapping[str, Any], directory: Path) -> list[Path]:
    """Draw the plots the results have data for into ``directory``; return their paths."""
    directory.mkdir(parents=True, exist_ok=True)
    drawn = []
    if "serialization" in results:
        panels = _load_panels(results["serialization"], "rps", 32)
        drawn.append(directory / "serialization.png")
        _grid(panels, "requests/s at 32 connections (log)", drawn[-1])
    if "streaming" in results:
        panels = _load_panels(results["streaming"], "events_per_s", None)
        drawn.append(directory / "streaming.png")
        _grid(panels, "events/s, one uvicorn worker (log)", drawn[-1])
    if "inprocess" in results:
        panels = {
            name: (
                [b.get_name().split("/", 1)[1] for b in benches],
                [_mean_and_stdev(b) for b in benches],
            )
            for name, benches in inprocess_benchmarks(results["inprocess"]).items()
        }
        drawn.append(directory / "inprocess.png")
        _grid(panels, "us per call, pyperf mean +- std dev (log)", drawn[-1])
    return drawn
