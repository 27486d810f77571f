"""Summaries from the JSON results: Markdown tables with paired ratios, and plots.

Everything here reads the files in ``benchmarks/results``, so ``python -m benchmarks --render
DIR`` prints the summary and draws the plots again from committed files.
"""

import statistics
from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

Suite = Mapping[str, Any]
#: Columns of times: header, the samples' field, the percentiles shown, the factor to ms.
Times = Sequence[tuple[str, str, Sequence[str], float]]


@dataclass(frozen=True)
class Spread:
    """The median of some measurements, their minimum and maximum."""

    median: float
    low: float
    high: float

    @classmethod
    def of(cls, values: Collection[float]) -> "Spread":
        """Summarize ``values``; ValueError when there are none."""
        if not values:
            raise ValueError("no measurements to summarize")
        return cls(statistics.median(values), min(values), max(values))


def paired_ratios(
    numerator: Mapping[int, float], denominator: Mapping[int, float]
) -> Spread | None:
    """Return the spread of ``numerator[r] / denominator[r]`` over the rounds both measured.

    Both map a round to a measurement; None when no round has both (and a nonzero denominator).
    """
    rounds = sorted(numerator.keys() & denominator.keys())
    ratios = [numerator[r] / denominator[r] for r in rounds if denominator[r] > 0]
    return Spread.of(ratios) if ratios else None


def number(value: float | None) -> str:
    """Format ``value`` with 3 significant digits (thousands separated by a space)."""
    if value is None:
        return "-"
    if value == 0:
        return "0"
    if value >= 1000:
        return f"{value:,.0f}".replace(",", " ")
    return f"{value:.0f}" if value >= 100 else f"{value:.1f}" if value >= 10 else f"{value:.2f}"


def spread(value: Spread | None, suffix: str = "") -> str:
    """Format ``median (min-max)``, or a dash when nothing was measured."""
    if value is None:
        return "-"
    return f"{number(value.median)}{suffix} ({number(value.low)}-{number(value.high)})"


def heading(title: str, suite: Suite) -> list[str]:
    """Return a section's heading and the line naming its run: date, commit and command."""
    run = suite["run"]
    return [f"## {title}", "", f"{run['date']}, git {run['git']}: `{run['command']}`", ""]


def table(title: str, header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Return a Markdown table under a heading (nothing without rows)."""
    lines = [f"### `{title}`", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return [*lines, *("| " + " | ".join(row) + " |" for row in rows), ""] if rows else []


def by_round(
    suite: Suite, metric: str, key: str | None = None
) -> dict[tuple[str, str], dict[int, float]]:
    """Return ``{(cell, config): {round: sample[metric]}}`` (``[metric][key]`` with ``key``),
    leaving out samples without it.
    """  # noqa: D205
    found: dict[tuple[str, str], dict[int, float]] = defaultdict(dict)
    for sample in (s for s in suite["samples"] if s.get(metric) is not None):
        value = sample[metric] if key is None else sample[metric][key]
        found[sample["cell"], sample["config"]][sample["round"]] = value
    return dict(found)


_UNITS = {"rps": "req/s", "events_per_s": "events/s", "mib": "MiB", "ms": "ms"}
LATENCY: Times = [("p99 ms", "latency_us", ("p99",), 1e-3)]
STREAM_TIMES: Times = [
    ("ms between events p50 / p99", "gap_ms", ("p50", "p99"), 1.0),
    ("ms yield to read p50 / p99", "yield_to_read_ms", ("p50", "p99"), 1.0),
]


def section(
    title: str, suite: Suite, metric: str, baselines: Mapping[str, Sequence[str]], times: Times
) -> list[str]:
    """Return one table per cell: ``metric``'s median (min-max) over the rounds, its paired
    ratios to ``baselines`` (each configuration to those it is divided by), and the median over
    the rounds of each of ``times``.

    Columns without any measurement (e.g. times from ``yield`` to read in unstamped streams)
    are left out.
    """  # noqa: D205
    rounds = by_round(suite, metric)
    timed = {(field, q): by_round(suite, field, q) for _, field, qs, _ in times for q in qs}
    labels = {config["name"]: config["label"] for config in suite["configs"]}
    columns = [name for name in labels if any(name in b for b in baselines.values())]
    header = ["configuration", _UNITS[metric], *[f"x {b}" for b in columns], *[t[0] for t in times]]
    lines = heading(title, suite)
    for cell in (c["key"] for c in suite["cells"]):
        rows = []
        for config in (name for name in labels if (cell, name) in rounds):
            measured = rounds[cell, config]
            row = [f"{labels[config]} (`{config}`)", spread(Spread.of(measured.values()))]
            for b in columns:
                ratio = paired_ratios(measured, rounds.get((cell, b), {}))
                divided = b in baselines.get(config, ())
                row.append("baseline" if b == config else spread(ratio, "x") if divided else "")
            for _, field, qs, factor in times:
                values = [timed[field, q].get((cell, config), {}).values() for q in qs]
                medians = [statistics.median(v) * factor if v else None for v in values]
                row.append(" / ".join(map(number, medians)))
            rows.append(row)
        kept = [i for i in range(len(header)) if any(row[i].strip("- /") for row in rows)]
        lines += table(cell, [header[i] for i in kept], [[row[i] for i in kept] for row in rows])
    memory = suite.get("memory_kb", {}).items()
    rows = [[f"`{c}`", number(m["start"] / 1024), number(m["peak"] / 1024)] for c, m in memory]
    return lines + table("memory", ["configuration", "RSS MB at start", "peak"], rows)


#: This project's configurations: their bars are orange, the others' blue.
OURS = ("dispatch", "keepalive")
Panel = tuple[str, bool, dict[str, tuple[Spread, float | None]]]


def _panels(suite: Suite, metric: str, concurrency: int | None) -> list[Panel]:
    """Return ``(cell, stamped, {config: (Spread, p99 or None)})`` per cell plotted.

    A stamped cell (its samples timed each event from ``yield`` to read) shows that latency,
    p50 over the rounds with their p99, as its table does; the others show ``metric``.
    """
    p50, p99 = (by_round(suite, "yield_to_read_ms", q) for q in ("p50", "p99"))
    panels = []
    for cell in (c["key"] for c in suite["cells"] if concurrency in (None, c["concurrency"])):
        stamped = any(key[0] == cell for key in p50)
        rounds = p50 if stamped else by_round(suite, metric)
        values = {}
        for config in (c["name"] for c in suite["configs"] if (cell, c["name"]) in rounds):
            tail = statistics.median(p99[cell, config].values()) if stamped else None
            values[config] = (Spread.of(rounds[cell, config].values()), tail)
        panels += [(cell, stamped, values)] if values else []
    return panels


def plot(suite: Suite, metric: str, label: str, path: Path, concurrency: int | None = None) -> None:
    """Draw one panel per cell (at ``concurrency``, or all): each configuration's median bar
    with its min-max over the rounds, the value written beside it.

    Sized to be read at the docs' page width (800 px): one column, 11-12 pt text. The axis is
    logarithmic, with labelled ticks at 1, 2 and 5 of each decade, where the values span more
    than 20x; linear from 0 otherwise.
    """  # noqa: D205
    import matplotlib  # imported here: only plots need it, and it is slow to import

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch
    from matplotlib.ticker import FuncFormatter, LogLocator

    panels = _panels(suite, metric, concurrency)
    heights = [len(values) * 0.42 + 1.3 for _, _, values in panels]
    size = (8, sum(heights) + 0.6)
    figure, axes = plt.subplots(len(panels), squeeze=False, figsize=size, height_ratios=heights)
    for axis, (cell, stamped, values) in zip(axes[:, 0], panels, strict=True):
        names, spreads = list(values), [spread for spread, _ in values.values()]
        errors = [[v.median - v.low for v in spreads], [v.high - v.median for v in spreads]]
        colors = ["tab:orange" if any(o in n for o in OURS) else "tab:blue" for n in names]
        axis.barh(names, [v.median for v in spreads], xerr=errors, color=colors, capsize=3)
        p99 = [p for _, p in values.values()]
        if stamped:
            axis.plot(p99, names, "kD", markersize=5, label="p99")
        top = max(*(v.high for v in spreads), *(p or 0 for p in p99))
        if top / min(v.low for v in spreads) > 20:
            axis.set_xscale("log")
            axis.xaxis.set_major_locator(LogLocator(subs=(1, 2, 5)))
            axis.set_xlim(min(v.low for v in spreads) / 1.5, top * 3)
        else:
            axis.set_xlim(0, top * 1.3)
        axis.xaxis.set_major_formatter(
            FuncFormatter(lambda x, _: f"{x:,.0f}".replace(",", " ") if x >= 1 else f"{x:g}")
        )
        axis.xaxis.set_minor_formatter(FuncFormatter(lambda x, _: ""))
        axis.invert_yaxis()
        unit = "ms from yield to read: bars p50, diamonds p99" if stamped else label
        axis.set_xlabel(unit, fontsize=11)
        axis.set_title(cell, fontsize=12, loc="left")
        axis.tick_params(labelsize=11)
        for y, (value, tail) in enumerate(zip(spreads, p99, strict=True)):
            text = number(value.median) + (f" / {number(tail)}" if tail else "")
            at = (max(value.high, tail or 0), y)
            axis.annotate(text, at, (6, 0), textcoords="offset points", va="center", fontsize=10)
    ours = Patch(color="tab:orange", label="this project (orjson-dispatch, uvicorn-keepalive)")
    theirs = Patch(color="tab:blue", label="FastAPI, Starlette, peers and limits")
    figure.legend(handles=[ours, theirs], loc="upper center", ncol=2, fontsize=10, frameon=False)
    figure.tight_layout(rect=(0, 0, 1, 1 - 0.5 / size[1]))
    figure.savefig(path, dpi=100)
    plt.close(figure)
