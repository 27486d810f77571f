"""Render results as Markdown: the goal table, one table per workload, scaling, in process."""

from collections.abc import Sequence
from typing import Any

from benchmarks.analysis import (
    connection_summary,
    inprocess_benchmarks,
    ratio,
    relative_time,
    scaling,
    streaming_summary,
    summarize,
)
from benchmarks.configs import KEEPALIVE_BASELINES, SERIALIZATION_BASELINES, STREAMING_BASELINE
from benchmarks.goals import evaluate
from benchmarks.stats import Spread

#: The plots, in the order the report shows them, with their captions.
PLOTS = {
    "serialization.png": "Requests/s per configuration on each body at 32 connections",
    "scaling.png": "Request time against generated tokens at concurrency 1",
    "inprocess.png": "Serialization alone, in process, training body: time relative to orjson",
    "streaming.png": "Streaming chat-completion chunks: time per event and time between events",
    "keepalive.png": "Stock uvicorn against uvicorn-keepalive",
}


def number(value: float) -> str:
    """Format a measurement with 3 significant digits (thousands separated by a space)."""
    if value >= 1000:
        return f"{value:,.0f}".replace(",", " ")
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def spread(value: Spread | None, suffix: str = "") -> str:
    """Format ``median (min-max)``, or a dash when nothing was measured."""
    if value is None:
        return "-"
    return f"{number(value.median)}{suffix} ({number(value.low)}-{number(value.high)})"


def precise(value: Spread | None) -> str:
    """Format a ratio with 4 significant digits, so that a verdict near its bound reads right."""
    if value is None:
        return "-"
    return f"{value.median:#.4g}x ({value.low:#.4g}-{value.high:#.4g})"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def goals_section(results: dict[str, Any]) -> list[str]:
    """Return the goal table: each goal, its target, the measured ratio and the verdict."""
    rows = []
    for goal in evaluate(results):
        bound = {"min": ">=", "max": "<=", "band": "1 +/-"}[goal.direction]
        rows.append(
            [
                goal.package,
                goal.text,
                f"{bound} {goal.target:g}",
                precise(goal.measured),
                f"**{goal.status}**",
                goal.where,
                f"{goal.context[0]}: {spread(goal.context[1], 'x')}" if goal.context else "",
            ]
        )
    return [
        "## Goals",
        "",
        "Median of the paired per-round ratios (min-max over the rounds in brackets); "
        "a goal is reached when the median meets the bound. For context: what the "
        "configuration's own limit allows (orjson's limit against the same baseline), or, for "
        "the keepalive goals, how much two identical stock servers differ (A/A).",
        "",
        *_table(
            ["package", "goal", "target", "measured", "verdict", "measured as", "for context"], rows
        ),
        "",
    ]


def load_section(
    results: dict[str, Any], suite_name: str, title: str, baselines: dict[str, list[str]]
) -> list[str]:
    """Return one table per cell of a load suite, with ratios to the baselines.

    Args:
        results: The results.
        suite_name: The suite's key in ``results["suites"]``.
        title: The section title.
        baselines: For each configuration, the baselines it is divided by (the same list
            for every configuration in the serialization suite; the stock server with as
            many workers in the keepalive suite).
    """
    suite = results.get("suites", {}).get(suite_name)
    if suite is None:
        return []
    summaries = summarize(suite)
    labels = {config["name"]: config["label"] for config in suite["configs"]}
    wanted = {b for names in baselines.values() for b in names}
    columns = [name for name in labels if name in wanted]
    lines = [f"## {title}", ""]
    for cell in suite["cells"]:
        rows = []
        for config, label in labels.items():
            summary = summaries.get((cell["key"], config))
            if summary is None:
                continue
            ratios = [
                "baseline"
                if b == config
                else spread(ratio(suite, cell["key"], config, b), "x")
                if b in baselines.get(config, [])
                else ""
                for b in columns
            ]
            rows.append(
                [
                    f"{label} (`{config}`)",
                    spread(summary.rps),
                    number(summary.p50_ms),
                    number(summary.p99_ms),
                    *ratios,
                    str(summary.errors),
                ]
            )
        if not rows:
            continue
        header = ["configuration", "req/s", "p50 ms", "p99 ms"]
        header += [f"x {b}" for b in columns] + ["errors"]
        lines += [f"### `{cell['key']}`", "", *_table(header, rows), ""]
    if suite["skipped"]:
        lines += ["Skipped runs:", ""]
        lines += [f"- `{s['config']}` on `{s['cell']}`: {s['why']}" for s in suite["skipped"]]
        lines += [""]
    return lines


def scaling_section(results: dict[str, Any]) -> list[str]:
    """Return the scaling table: slope in ns per token and the time at each size."""
    suite = results.get("suites", {}).get("serialization")
    if suite is None:
        return []
    found = scaling(suite)
    if not found:
        return []
    sizes = sorted({n for item in found for n, _ in item.points})
    rows = []
    for item in sorted(found, key=lambda s: -s.ns_per_token):
        at = dict(item.points)
        rows.append(
            [
                f"`{item.config}`",
                number(item.ns_per_token),
                *[number(at[n]) if n in at else "-" for n in sizes],
            ]
        )
    header = ["configuration", "ns per token", *[f"ms @ {n}" for n in sizes]]
    return [
        "## Scaling with the number of generated tokens",
        "",
        "Time of one request at concurrency 1 (wrk's mean latency, median over rounds) for "
        "bodies of N generated tokens (prompt N/16); the slope is the least-squares fit of "
        "that time against N.",
        "",
        *_table(header, rows),
        "",
    ]


def inprocess_section(results: dict[str, Any]) -> list[str]:
    """Return one table per body of pyperf's in-process timings, relative to the first."""
    lines = []
    for name, benches in inprocess_benchmarks(results).items():
        baseline = benches[0]
        rows = [
            [
                f"`{bench.get_metadata().get('description', bench.get_name())}`",
                f"{number(bench.mean() * 1e6)} +- {number(bench.stdev() * 1e6)}",
                spread(relative_time(bench, baseline), "x"),
            ]
            for bench in benches
        ]
        size = results.get("bodies", {}).get(name, {}).get("bytes")
        lines += [
            f"### `{name}`" + (f" ({size} bytes of JSON)" if size else ""),
            "",
            *_table(["code", "us per call (mean +- std dev)", "x orjson.dumps(d) time"], rows),
            "",
        ]
    if not lines:
        return []
    return [
        "## Serialization alone, in process",
        "",
        "Timed by pyperf (worker processes, calibrated loops, warmups); the ratio divides the "
        "means, as `python -m pyperf compare_to` does, its range moves each mean by one "
        "standard deviation. The raw values and pyperf's metadata are in `results.json` "
        "under `inprocess` (pyperf's JSON format).",
        "",
        *lines,
    ]


def streaming_section(results: dict[str, Any]) -> list[str]:
    """Return the streaming table: time per event, time between events, memory."""
    suite = results.get("suites", {}).get("streaming")
    if suite is None:
        return []
    settings = suite["settings"]
    labels = {config["name"]: config["label"] for config in suite["configs"]}
    rows = [
        [
            f"{labels[row.config]} (`{row.config}`)",
            spread(row.us_per_event),
            spread(row.relative, "x"),
            spread(row.events_per_s),
            number(row.concurrent_events_per_s),
            f"{number(row.gap_p50_ms)} / {number(row.gap_p99_ms)}",
            f"{number(row.rss['kb_before'] / 1024)} / {number(row.rss['kb_max'] / 1024)}"
            if row.rss
            else "-",
        ]
        for row in streaming_summary(suite, STREAMING_BASELINE)
    ]
    header = [
        "configuration",
        "us per event",
        f"x {STREAMING_BASELINE} time",
        "events/s",
        f"events/s, {settings['streams']} streams",
        "ms between events p50 / p99",
        "RSS MB before / peak",
    ]
    return [
        "## Streaming chat-completion chunks",
        "",
        f"One stream of {settings['events']} chunks per run (time from the request to the "
        f"end of the stream, per event); {settings['streams']} concurrent streams of "
        f"{settings['stream_events']} chunks (the time a reader waits between two reads that "
        "bring events, pooled over the streams; median over rounds); the server's VmRSS "
        f"before and at its peak during one stream of {settings['rss_events']} chunks. One "
        "uvicorn worker per configuration, configurations interleaved over "
        f"{settings['rounds']} rounds; ratios are medians of the per-round ratios.",
        "",
        *_table(header, rows),
        "",
    ]


def connection_cost_section(results: dict[str, Any]) -> list[str]:
    """Return the table of ``connection_made`` time per accepted connection, by event loop."""
    measured = results.get("connection_cost")
    if not measured:
        return []
    rows = [
        [loop, number(row["stock"]), number(row["keepalive"]), f"+{number(row['delta'])}"]
        for loop, row in connection_summary(measured).items()
    ]
    lines = [
        "### Cost per accepted connection, in process",
        "",
        f"Time spent in `connection_made` per accepted TCP connection on 127.0.0.1 (median over "
        f"the rounds, {measured['connections']} connections per round), where "
        "uvicorn-keepalive does all its work:",
        "",
        *_table(["event loop", "stock us", "keepalive.Protocol us", "difference us"], rows),
        "",
    ]
    keepalive = results.get("suites", {}).get("keepalive")
    stock = summarize(keepalive).get(("plain@c32+close", "stock")) if keepalive else None
    if stock is not None and "uvloop" in connection_summary(measured):
        per_connection = 1e6 / stock.rps.median
        delta = connection_summary(measured)["uvloop"]["delta"]
        lines += [
            f"At the stock server's churn rate above ({number(stock.rps.median)} new "
            f"connections/s, {number(per_connection)} us each, uvloop), the difference is "
            f"{delta / per_connection * 100:.1f} % of each connection's time, i.e. an expected "
            f"churn ratio of about {per_connection / (per_connection + delta):.2f}x.",
            "",
        ]
    return lines


def bodies_section(results: dict[str, Any]) -> list[str]:
    """Return the table of the bodies used: generated tokens and bytes of JSON."""
    rows = [
        [f"`{name}`", str(item["tokens"]), number(item["bytes"] / 1000)]
        for name, item in sorted(results["bodies"].items(), key=lambda kv: kv[1]["bytes"])
    ]
    return ["## Bodies", "", *_table(["body", "generated tokens", "KB of JSON"], rows), ""]


def render(
    results: dict[str, Any],
    image_prefix: str,
    notes: str = "",
    plots: Sequence[str] = tuple(PLOTS),
) -> str:
    """Return the whole Markdown report; plots are linked as ``<image_prefix><name>``.

    Args:
        results: The results.
        image_prefix: Prepended to each plot's file name in the image links.
        notes: Hand-written Markdown shown right after the goal table (the reading of the
            figures), or empty.
        plots: The file names of the plots that were drawn.
    """
    machine = results["machine"]
    packages = ", ".join(f"{k} {v}" for k, v in machine["packages"].items())
    suite = results.get("suites", {}).get("serialization", {"configs": []})
    lines = [
        f"Profile **{results['profile']}**, {results['started_at']} "
        f"({results['elapsed_s'] / 60:.1f} min), command:",
        "",
        f"```\n{results['command']}\n```",
        "",
        *[
            f"Updated {u['started_at']}: the figures of {', '.join(u['suites'])} come from "
            f"`{u['command']}` (git {u['git_commit']}, load average {u['load_average_at_start']}"
            + "".join(f", {name} {version}" for name, version in u.get("packages", {}).items())
            + ").\n"
            for u in results.get("updates", [])
        ],
        "Machine: "
        + "; ".join(f"{key} {value}" for key, value in machine.items() if key != "packages")
        + ".",
        "",
        f"Packages: {packages}.",
        "",
        *goals_section(results),
        *([notes.strip(), ""] if notes.strip() else []),
        *bodies_section(results),
        *[
            f"![{caption}]({image_prefix}{name})\n"
            for name, caption in PLOTS.items()
            if name in plots
        ],
        *load_section(
            results,
            "serialization",
            "Serialization over HTTP",
            {c["name"]: list(SERIALIZATION_BASELINES) for c in suite["configs"]},
        ),
        *scaling_section(results),
        *inprocess_section(results),
        *streaming_section(results),
        *load_section(
            results,
            "keepalive",
            "TCP keepalive: connection churn and long-lived connections",
            {config: [baseline] for config, baseline in KEEPALIVE_BASELINES.items()},
        ),
        *connection_cost_section(results),
    ]
    return "\n".join(lines)
