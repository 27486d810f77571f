"""Goals, scaling and the Markdown report, computed from synthetic raw results."""

import io
import json
from typing import Any

import pyperf
import pytest

from benchmarks.analysis import scaling, streaming_summary
from benchmarks.goals import evaluate
from benchmarks.report import render


def sample(cell: str, config: str, round_number: int, rps: float) -> dict[str, Any]:
    """One wrk run; at concurrency 1 the mean latency is the time of one request."""
    mean_us = 1e6 / rps if cell.endswith("@c1") else 1000.0
    return {
        "round": round_number,
        "cell": cell,
        "config": config,
        "rps": rps,
        "requests": int(rps),
        "duration_s": 1.0,
        "bytes": 0,
        "errors": {"connect": 0, "read": 0, "write": 0, "status": 0, "timeout": 0},
        "latency_us": {"mean": mean_us, "max": 3000.0, "p50": 1000.0, "p90": 2000.0, "p99": 2500.0},
        "drain_s": 0.1,
    }


def suite(name: str, rps: dict[tuple[str, str], list[float]]) -> dict[str, Any]:
    cells = sorted({cell for cell, _ in rps})
    configs = sorted({config for _, config in rps})
    return {
        "name": name,
        "configs": [{"name": c, "label": f"label of {c}"} for c in configs],
        "cells": [{"key": c, "concurrency": int(c.split("@c")[1].split("+")[0])} for c in cells],
        "single_request_ms": {},
        "samples": [
            sample(cell, config, n, value)
            for (cell, config), values in rps.items()
            for n, value in enumerate(values)
        ],
        "skipped": [{"config": "untyped", "cell": "tokens-65536@c256", "why": "too slow"}],
    }


TRAINING = "tokens-65536@c32"


def pyperf_suite(values: dict[str, list[float]]) -> dict[str, Any]:
    """pyperf's JSON for one run per benchmark with these values (seconds per call)."""
    benches = [
        pyperf.Benchmark(
            [
                pyperf.Run(
                    seconds,
                    metadata={"name": name, "description": f"code of {name}", "loops": 1},
                    collect_metadata=False,
                )
            ]
        )
        for name, seconds in values.items()
    ]
    file = io.StringIO()
    pyperf.BenchmarkSuite(benches).dump(file)
    data: dict[str, Any] = json.loads(file.getvalue())
    return data


def stream_sample(config: str, round_number: int, cell: str, us: float) -> dict[str, Any]:
    return {
        "round": round_number,
        "cell": cell,
        "config": config,
        "events": 1000,
        "seconds": us * 1e-3,
        "events_per_s": 1e6 / us,
        "us_per_event": us,
        "gap_ms": {"p50": us / 10, "p99": us, "max": 2 * us},
    }


def streaming() -> dict[str, Any]:
    per_event = {"fastapi-sse-typed": [100.0, 90.0, 110.0], "orjson-limit": [10.0, 10.0, 10.0]}
    return {
        "name": "streaming",
        "configs": [{"name": c, "label": f"label of {c}"} for c in per_event],
        "settings": {"rounds": 3, "events": 1000, "streams": 32, "stream_events": 100,
                     "rss_events": 5000},
        "cells": [],
        "samples": [
            stream_sample(config, n, cell, us)
            for config, values in per_event.items()
            for n, us in enumerate(values)
            for cell in ("chunks@c1", "chunks@c32")
        ],
        "rss": [{"config": "orjson-limit", "events": 5000, "seconds": 1.0,
                 "kb_before": 51200, "kb_max": 61440, "kb_after": 51200}],
    }  # fmt: skip


def results() -> dict[str, Any]:
    serialization = suite(
        "serialization",
        {
            (TRAINING, "untyped"): [5.0, 4.0, 5.0],
            (TRAINING, "typed"): [100.0, 90.0, 105.0],
            (TRAINING, "orjson-limit"): [300.0, 240.0, 300.0],
            (TRAINING, "dispatch-model"): [
                290.0,
                250.0,
                300.0,
            ],  # medians of the round ratios: 60x, 2.86x, 1.0x
            (TRAINING, "dispatch-dict"): [270.0, 220.0, 270.0],  # 0.9x orjson-limit
            # Scaling at concurrency 1: 1 ms + 100 ns per token.
            ("tokens-32@c1", "typed"): [1 / (0.001 + 32e-7)] * 3,
            ("tokens-1024@c1", "typed"): [1 / (0.001 + 1024e-7)] * 3,
            ("tokens-65536@c1", "typed"): [1 / (0.001 + 65536e-7)] * 3,
        },
    )
    keepalive = suite(
        "keepalive",
        {
            ("plain@c32+close", "stock"): [1000.0, 1000.0, 1000.0],
            ("plain@c32+close", "keepalive"): [990.0, 980.0, 1000.0],
            ("plain@c32", "stock"): [5000.0, 5000.0, 5000.0],
            ("plain@c32", "keepalive"): [4500.0, 4600.0, 4400.0],
        },
    )
    return {
        "profile": "quick",
        "command": ".venv/bin/python -m benchmarks --quick",
        "started_at": "2026-01-01 00:00 UTC",
        "elapsed_s": 120.0,
        "machine": {
            "cpu_model": "cpu",
            "nproc": 2,
            "memory": "1 kB",
            "kernel": "Linux",
            "os": "os",
            "python": "CPython 3.11",
            "event_loop": "uvloop",
            "wrk": "wrk 4",
            "load_average_at_start": [0.0, 0.0, 0.0],
            "git_commit": "abc",
            "packages": {"fastapi": "1"},
        },
        "bodies": {"tokens-65536": {"tokens": 65536, "bytes": 1_777_837}},
        "suites": {
            "serialization": serialization,
            "keepalive": keepalive,
            "streaming": streaming(),
        },
        "connection_cost": {
            "connections": 100,
            "samples": {
                "uvloop": {"stock": [10e-6, 11e-6, 12e-6], "keepalive": [20e-6, 21e-6, 30e-6]},
                "asyncio": {"stock": [5e-6, 5e-6, 5e-6], "keepalive": [12e-6, 12e-6, 12e-6]},
            },
        },
        "inprocess": pyperf_suite(
            {
                "tokens-65536/orjson-dict": [0.002, 0.002, 0.002],
                "tokens-65536/dispatch-dumps-typed": [0.0024, 0.0024, 0.0024],
            }
        ),
    }


def test_goals_are_judged_on_the_median_paired_ratio() -> None:
    verdicts = {goal.text: (goal.status, goal.measured) for goal in evaluate(results())}
    status, measured = verdicts["dispatch on the model >= 50x FastAPI untyped"]
    assert status == "reached"
    assert measured is not None
    assert measured.median == pytest.approx(60.0)
    assert verdicts["dispatch on the model >= 3x FastAPI typed"][0] == "NOT reached"
    assert verdicts["dispatch on the model >= 0.85x Response(orjson.dumps(d))"][0] == "reached"
    assert verdicts["dispatch on the dict >= 0.95x Response(orjson.dumps(d))"][0] == "NOT reached"
    assert verdicts["small body: dispatch on the model >= 1.5x FastAPI typed"][0] == "not measured"
    inprocess = verdicts[
        "serialization alone: dumps(model, response_model=...) <= 1.3x orjson.dumps(d)"
    ]
    assert inprocess[0] == "reached"  # means 2.4 ms / 2 ms: 1.2x
    assert inprocess[1] is not None
    assert inprocess[1].median == pytest.approx(1.2)
    churn = "connection churn: keepalive.Protocol >= 0.97x stock, 1 worker"
    assert verdicts[churn][0] == "reached"
    long_lived = "long-lived connections: no change (within 3 %), 1 worker"
    assert verdicts[long_lived][0] == "NOT reached"  # 0.9x


def test_scaling_slope_is_in_nanoseconds_per_token() -> None:
    (typed,) = scaling(results()["suites"]["serialization"])
    assert typed.config == "typed"
    assert typed.ns_per_token == pytest.approx(100.0)
    assert [n for n, _ in typed.points] == [32, 1024, 65536]


def test_report_shows_goals_tables_skips_and_plots() -> None:
    text = render(results(), image_prefix="assets/")
    goal = (
        "| orjson-dispatch | dispatch on the model >= 50x FastAPI untyped | >= 50 "
        "| 60.00x (58.00-62.50) |"
    )
    assert goal in text
    assert "**NOT reached**" in text
    assert "**not measured**" in text
    assert "### `tokens-65536@c32`" in text
    assert "`untyped` on `tokens-65536@c256`: too slow" in text
    assert "![Request time against generated tokens at concurrency 1](assets/scaling.png)" in text
    assert ".venv/bin/python -m benchmarks --quick" in text


def test_connection_cost_gives_the_expected_churn_ratio() -> None:
    text = render(results(), image_prefix="")
    assert "| uvloop | 11.0 | 21.0 | +10.0 |" in text
    assert "| asyncio | 5.00 | 12.0 | +7.00 |" in text
    # Stock churns 1000 connections/s: 1000 us each, +10 us is 1.0 %, about 0.99x.
    assert "the difference is 1.0 % of each connection's time" in text
    assert "expected churn ratio of about 0.99x" in text


def test_inprocess_section_reads_pyperf_means_and_labels() -> None:
    text = render(results(), image_prefix="")
    assert "### `tokens-65536` (1777837 bytes of JSON)" in text
    assert (
        "| `code of tokens-65536/dispatch-dumps-typed` | 2 400 +- 0.00 | 1.20x (1.20-1.20) |"
        in text
    )


def test_streaming_time_per_event_is_paired_with_the_limit() -> None:
    rows = {row.config: row for row in streaming_summary(streaming(), "orjson-limit")}
    sse = rows["fastapi-sse-typed"]
    assert sse.us_per_event.median == 100.0
    assert sse.relative is not None
    assert (sse.relative.median, sse.relative.low, sse.relative.high) == (10.0, 9.0, 11.0)
    assert sse.gap_p99_ms == 100.0
    assert sse.rss is None
    assert rows["orjson-limit"].rss is not None
    text = render(results(), image_prefix="")
    assert "## Streaming chat-completion chunks" in text
    assert (
        "| label of orjson-limit (`orjson-limit`) | 10.0 (10.0-10.0) | 1.00x (1.00-1.00) |" in text
    )
    assert "| 50.0 / 60.0 |" in text  # RSS MB before / peak
