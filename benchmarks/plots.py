"""PNG plots of the results with matplotlib (Agg backend: no display needed)."""

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # after matplotlib.use: the backend is chosen first
from matplotlib.ticker import NullFormatter

from benchmarks.analysis import (
    inprocess_benchmarks,
    relative_time,
    scaling,
    streaming_summary,
    summarize,
)
from benchmarks.configs import STREAMING_BASELINE


def _save(figure: Any, path: Path) -> None:
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def serialization(results: dict[str, Any], path: Path, concurrency: int = 32) -> bool:
    """Plot req/s per configuration for each body at ``concurrency``; False if no data."""
    suite = results.get("suites", {}).get("serialization")
    if suite is None:
        return False
    summaries = summarize(suite)
    configs = [c["name"] for c in suite["configs"]]
    cells = [c["key"] for c in suite["cells"] if c["concurrency"] == concurrency]
    if not cells:
        return False
    columns = min(3, len(cells))
    rows = -(-len(cells) // columns)
    figure, axes = plt.subplots(rows, columns, figsize=(4.6 * columns, 3.8 * rows), squeeze=False)
    for axis in axes.flat[len(cells) :]:
        axis.set_visible(False)
    for axis, cell in zip(axes.flat, cells, strict=False):
        names = [c for c in configs if (cell, c) in summaries]
        values = [summaries[cell, c].rps.median for c in names]
        lows = [v - summaries[cell, c].rps.low for c, v in zip(names, values, strict=True)]
        highs = [summaries[cell, c].rps.high - v for c, v in zip(names, values, strict=True)]
        colors = ["tab:orange" if c.startswith("dispatch") else "tab:blue" for c in names]
        axis.barh(names, values, xerr=[lows, highs], color=colors)
        axis.set_xscale("log")
        axis.xaxis.set_minor_formatter(NullFormatter())  # minor labels collide on short decades
        axis.invert_yaxis()
        axis.set_title(cell, fontsize=10)
        axis.set_xlabel("requests/s (log)")
        for y, value in enumerate(values):
            axis.text(value, y, f" {value:.0f}", va="center", fontsize=8)
    _save(figure, path)
    return True


def scaling_plot(results: dict[str, Any], path: Path) -> bool:
    """Plot request time against generated tokens per configuration; False if no data."""
    suite = results.get("suites", {}).get("serialization")
    found = scaling(suite) if suite else []
    if not found:
        return False
    figure, axis = plt.subplots(figsize=(8, 5))
    for item in sorted(found, key=lambda s: -s.ns_per_token):
        xs, ys = zip(*item.points, strict=True)
        style = "-o" if item.config.startswith("dispatch") else "--."
        axis.plot(xs, ys, style, label=f"{item.config} ({item.ns_per_token:.0f} ns/token)")
    axis.set_xscale("log", base=2)
    axis.set_yscale("log")
    axis.set_xlabel("generated tokens per response")
    axis.set_ylabel("ms per request at concurrency 1 (log)")
    axis.grid(True, which="both", alpha=0.3)
    axis.legend(fontsize=8)
    _save(figure, path)
    return True


def inprocess(results: dict[str, Any], path: Path, body: str = "tokens-65536") -> bool:
    """Plot each in-process candidate's time relative to ``orjson.dumps(d)``; False if no data.

    The axis is the ratio of pyperf's mean times (log), with the 1.3x bound of the
    serialization goal drawn, so that the bars read as "how many times orjson's own time".
    """
    benches = inprocess_benchmarks(results).get(body)
    if not benches:
        return False
    labels = [b.get_metadata().get("description", b.get_name()) for b in benches]
    values = [relative_time(b, benches[0]).median for b in benches]
    micros = [b.mean() * 1e6 for b in benches]
    colors = ["tab:orange" if "orjson_dispatch" in label else "tab:blue" for label in labels]
    figure, axis = plt.subplots(figsize=(10, 0.45 * len(labels) + 1.4))
    axis.barh(labels, [v - 0.5 for v in values], left=0.5, color=colors)
    axis.set_xscale("log")
    axis.xaxis.set_minor_formatter(NullFormatter())
    axis.axvline(1.3, color="tab:red", linestyle=":", label="1.3x: the serialization goal")
    axis.invert_yaxis()
    axis.set_xlabel(f"mean time per call / orjson.dumps(d) mean time, {body} (log)")
    for y, (value, us) in enumerate(zip(values, micros, strict=True)):
        axis.text(value, y, f" {value:.2f}x ({us:,.0f} us)", va="center", fontsize=8)
    axis.set_xlim(0.5, max(values) * 4)
    axis.legend(fontsize=8, loc="lower right")
    _save(figure, path)
    return True


def keepalive(results: dict[str, Any], path: Path) -> bool:
    """Plot req/s of stock and keepalive servers per cell; False if no data."""
    suite = results.get("suites", {}).get("keepalive")
    if suite is None:
        return False
    summaries = summarize(suite)
    configs = [c["name"] for c in suite["configs"]]
    cells = [c["key"] for c in suite["cells"]]
    figure, axes = plt.subplots(1, len(cells), figsize=(5.5 * len(cells), 4), squeeze=False)
    for axis, cell in zip(axes[0], cells, strict=True):
        names = [c for c in configs if (cell, c) in summaries]
        values = [summaries[cell, c].rps.median for c in names]
        lows = [v - summaries[cell, c].rps.low for c, v in zip(names, values, strict=True)]
        highs = [summaries[cell, c].rps.high - v for c, v in zip(names, values, strict=True)]
        colors = ["tab:orange" if c.startswith("keepalive") else "tab:blue" for c in names]
        axis.bar(names, values, yerr=[lows, highs], color=colors)
        axis.tick_params(axis="x", labelrotation=20, labelsize=8)
        axis.set_title(cell, fontsize=10)
        axis.set_ylabel("requests/s")
        for x, value in enumerate(values):
            axis.text(x, value, f"{value:.0f}", ha="center", va="bottom", fontsize=8)
    _save(figure, path)
    return True


def streaming(results: dict[str, Any], path: Path) -> bool:
    """Plot time per event and p99 time between events per configuration; False if no data."""
    suite = results.get("suites", {}).get("streaming")
    rows = streaming_summary(suite, STREAMING_BASELINE) if suite else []
    if not rows:
        return False
    names = [row.config for row in rows]
    colors = ["tab:orange" if n.startswith("dispatch") else "tab:blue" for n in names]
    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 0.45 * len(rows) + 1.6), sharey=True)
    values = [row.us_per_event.median for row in rows]
    lows = [v - row.us_per_event.low for row, v in zip(rows, values, strict=True)]
    highs = [row.us_per_event.high - v for row, v in zip(rows, values, strict=True)]
    left.barh(names, values, xerr=[lows, highs], color=colors)
    left.set_xlabel("us per event, one stream")
    gaps = [row.gap_p99_ms for row in rows]
    right.barh(names, gaps, color=colors)
    right.set_xlabel(f"p99 ms between events, {suite['settings']['streams']} streams")
    left.invert_yaxis()
    for axis, numbers, unit in ((left, values, " us"), (right, gaps, " ms")):
        for y, value in enumerate(numbers):
            axis.text(value, y, f" {value:.1f}{unit}", va="center", fontsize=8)
    _save(figure, path)
    return True


#: Every plot by file name.
DRAWERS = {
    "serialization.png": serialization,
    "scaling.png": scaling_plot,
    "inprocess.png": inprocess,
    "streaming.png": streaming,
    "keepalive.png": keepalive,
}


def draw_all(results: dict[str, Any], directory: Path) -> list[str]:
    """Draw every plot the results have data for into ``directory``; return the file names.

    A plot the results have no data for is removed from ``directory``, so that no stale
    image of an earlier run stays next to the new results.
    """
    directory.mkdir(parents=True, exist_ok=True)
    drawn = []
    for name, draw in DRAWERS.items():
        if draw(results, directory / name):
            drawn.append(name)
        else:
            (directory / name).unlink(missing_ok=True)
    return drawn
