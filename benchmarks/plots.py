"""PNG plots of the results with matplotlib (Agg backend: no display needed)."""

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # after matplotlib.use: the backend is chosen first

from benchmarks.analysis import inprocess_spreads, scaling, summarize


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
    figure, axes = plt.subplots(1, len(cells), figsize=(4.2 * len(cells), 4.2), squeeze=False)
    for axis, cell in zip(axes[0], cells, strict=True):
        names = [c for c in configs if (cell, c) in summaries]
        values = [summaries[cell, c].rps.median for c in names]
        lows = [v - summaries[cell, c].rps.low for c, v in zip(names, values, strict=True)]
        highs = [summaries[cell, c].rps.high - v for c, v in zip(names, values, strict=True)]
        colors = ["tab:orange" if c.startswith("dispatch") else "tab:blue" for c in names]
        axis.barh(names, values, xerr=[lows, highs], color=colors)
        axis.set_xscale("log")
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
    """Plot microseconds per call of each in-process candidate; False if no data."""
    for measured in results.get("inprocess", []):
        if measured["body"] != body:
            continue
        spreads = inprocess_spreads(measured)
        labels = [c["label"] for c in measured["candidates"]]
        values = [spreads[c["name"]][0].median * 1e6 for c in measured["candidates"]]
        colors = [
            "tab:orange" if c["name"].startswith("dispatch") else "tab:blue"
            for c in measured["candidates"]
        ]
        figure, axis = plt.subplots(figsize=(9, 0.45 * len(labels) + 1.2))
        axis.barh(labels, values, color=colors)
        axis.set_xscale("log")
        axis.invert_yaxis()
        axis.set_xlabel(f"microseconds per call, {body} (log)")
        for y, value in enumerate(values):
            axis.text(value, y, f" {value:,.0f}", va="center", fontsize=8)
        _save(figure, path)
        return True
    return False


def keepalive(results: dict[str, Any], path: Path) -> bool:
    """Plot req/s of stock and keepalive servers per cell; False if no data."""
    suite = results.get("suites", {}).get("keepalive")
    if suite is None:
        return False
    summaries = summarize(suite)
    configs = [c["name"] for c in suite["configs"]]
    cells = [c["key"] for c in suite["cells"]]
    figure, axes = plt.subplots(1, len(cells), figsize=(5 * len(cells), 3.6), squeeze=False)
    for axis, cell in zip(axes[0], cells, strict=True):
        names = [c for c in configs if (cell, c) in summaries]
        values = [summaries[cell, c].rps.median for c in names]
        colors = ["tab:orange" if c.startswith("keepalive") else "tab:blue" for c in names]
        axis.bar(names, values, color=colors)
        axis.set_title(cell, fontsize=10)
        axis.set_ylabel("requests/s")
        for x, value in enumerate(values):
            axis.text(x, value, f"{value:.0f}", ha="center", va="bottom", fontsize=8)
    _save(figure, path)
    return True


def draw_all(results: dict[str, Any], directory: Path) -> list[str]:
    """Draw every plot the results have data for into ``directory``; return the file names."""
    directory.mkdir(parents=True, exist_ok=True)
    drawers = {
        "serialization.png": serialization,
        "scaling.png": scaling_plot,
        "inprocess.png": inprocess,
        "keepalive.png": keepalive,
    }
    return [name for name, draw in drawers.items() if draw(results, directory / name)]
