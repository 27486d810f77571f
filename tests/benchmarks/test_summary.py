"""The summary printed at the end of a run, and the plots, from JSON-ready results."""

from pathlib import Path
from typing import Any

from benchmarks import summary
from benchmarks.cli import draw, render
from benchmarks.summary import Spread


def _suite(metric: str, values: dict[str, list[float]], cell: str = "toolcall@c32") -> Any:
    samples = [
        {"round": r, "cell": cell, "config": config, metric: value, "latency_us": {"p99": 2000}}
        for config, by_round in values.items()
        for r, value in enumerate(by_round)
    ]
    run = {"date": "2026-12-01 07:37 UTC", "git": "abc", "command": "python -m benchmarks"}
    cells = [{"key": cell, "concurrency": int(cell.split("@c")[1])}]
    configs = [{"name": name, "label": name.upper()} for name in values]
    return {"configs": configs, "cells": cells, "samples": samples, "run": run}


SERIALIZATION = _suite(
    "rps",
    {"typed": [100, 50, 100], "dispatch-model": [150, 75, 160], "orjson-limit": [300, 150, 320]},
)


def test_load_tables_give_medians_and_paired_ratios_to_peers_and_limit() -> None:
    text = render({"serialization": SERIALIZATION})
    assert "2026-12-01 07:37 UTC, git abc: `python -m benchmarks`" in text
    assert "| configuration | req/s | x typed | x orjson-limit | p99 ms |" in text
    # The paired ratios: 1.5 in every round against typed, 0.5 against the limit.
    assert (
        "| DISPATCH-MODEL (`dispatch-model`) | 150 (75.0-160) | 1.50x (1.50-1.60) "
        "| 0.50x (0.50-0.50) | 2.00 |" in text
    )
    assert "reached" not in text.lower()  # measurements, no verdicts


def test_streaming_tables_show_events_per_second_and_yield_to_read_when_stamped() -> None:
    suite = _suite(
        "events_per_s", {"fastapi-jsonl-typed": [10] * 3, "orjson-limit": [20] * 3}, "paced@c32"
    )
    for sample in suite["samples"]:
        sample |= {"gap_ms": {"p50": 1.0, "p99": 2.0}, "yield_to_read_ms": {"p50": 0.5, "p99": 3.0}}
    text = render({"streaming": suite})
    assert (
        "| FASTAPI-JSONL-TYPED (`fastapi-jsonl-typed`) | 10.0 (10.0-10.0) | 0.50x (0.50-0.50) "
        "| 1.00 / 2.00 | 0.50 / 3.00 |" in text
    )
    for sample in suite["samples"]:
        sample["yield_to_read_ms"] = None
    assert "yield to read" not in render({"streaming": suite})


def test_plots_are_drawn_for_each_load_suite_measured(tmp_path: Path) -> None:
    streaming = _suite("events_per_s", {"typed": [10, 12], "orjson-limit": [20, 21]}, "ready@c1")
    results = {"serialization": SERIALIZATION, "streaming": streaming}
    drawn = draw(results, tmp_path)
    assert [path.name for path in drawn] == ["serialization.png", "streaming.png"]
    assert all(path.read_bytes().startswith(b"\x89PNG") for path in drawn)


def test_a_paced_panel_shows_the_latency_its_table_shows() -> None:
    suite = _suite("events_per_s", {"typed": [10, 10], "dispatch-model": [9, 9]}, "paced@c32")
    for sample in suite["samples"]:
        sample["yield_to_read_ms"] = {"p50": 0.5 if sample["round"] else 0.7, "p99": 3.0}
    ((cell, stamped, values),) = summary._panels(suite, "events_per_s", None)
    assert (cell, stamped) == ("paced@c32", True)
    assert values["typed"] == (Spread(0.6, 0.5, 0.7), 3.0)
    ready = _suite("events_per_s", {"typed": [10, 12]}, "ready@c1")
    assert summary._panels(ready, "events_per_s", None)[0][1:] == (
        False,
        {"typed": (Spread(11, 10, 12), None)},
    )
