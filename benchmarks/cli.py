"""The command line: ``python -m benchmarks [--quick] [--only ...] [--render DIR]``.

Each suite writes its raw measurements to ``<out>/<suite>.json`` (the in-process suite:
pyperf's own file, ``inprocess.json``), so that running one suite again replaces only its
file; the plots go to ``docs/assets/benchmarks`` (``--quick`` or ``--out``: next to the
files). A summary of every suite measured is printed at the end.
"""

import argparse
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any, TypeVar

from benchmarks import plots, summary
from benchmarks.bodies import CHUNKS, TOOLCALL, TRAINING, body
from benchmarks.configs import (
    KEEPALIVE_CONFIGS,
    SERIALIZATION_CONFIGS,
    STREAMING_CONFIGS,
    ServerConfig,
)
from benchmarks.inprocess import measure
from benchmarks.load import LoadSettings, run_suite
from benchmarks.rounds import Cell
from benchmarks.server import ROOT, ServerError
from benchmarks.streaming import StreamSettings, run_streaming
from benchmarks.wrk import WrkError, require_wrk

_C = TypeVar("_C", bound=ServerConfig)
SUITES = ("serialization", "inprocess", "streaming", "keepalive")
RESULTS = ROOT / "benchmarks" / "results"
PLOTS = ROOT / "docs" / "assets" / "benchmarks"
#: The distributions whose versions decide the figures, recorded with each suite.
PACKAGES = ("fastapi", "pydantic", "orjson", "uvicorn", "uvloop", "httptools", "litestar",
            "msgspec", "sse-starlette", "orjson-dispatch", "uvicorn-keepalive")  # fmt: skip


@dataclass(frozen=True)
class Profile:
    """What one invocation measures.

    Attributes:
        serialization: Cells, durations and rounds of the serialization suite.
        keepalive: Likewise, of the keepalive suite.
        streaming: Cells, events and rounds of the streaming suite.
        inprocess: The bodies timed in process, and pyperf's Runner options.
        only: The configurations measured, by suite (every one of a suite not listed).
    """

    serialization: tuple[tuple[Cell, ...], LoadSettings]
    keepalive: tuple[tuple[Cell, ...], LoadSettings]
    streaming: StreamSettings
    inprocess: tuple[tuple[str, ...], tuple[str, ...]]
    only: dict[str, set[str]]


def _full_cells() -> tuple[Cell, ...]:
    """Four bodies at 1, 32 and 256 connections, the 1.5k-token body, the scaling sizes.

    The cells at 32 connections run the profile's duration, the others 1 s (longer for slow
    configurations, as every run).
    """
    bodies = (TRAINING, "tokens-1024", "tokens-32", TOOLCALL)
    cells = [Cell(b, c, duration_s=None if c == 32 else 1) for c in (1, 32, 256) for b in bodies]
    scaling = [f"tokens-{n}" for n in (256, 4096, 16384, 262144)]
    return (*cells, Cell("tokens-1536", 32), *(Cell(n, 1, duration_s=1) for n in scaling))


_KEEPALIVE_CELLS = (Cell("plain", 32, close=True), Cell("plain", 32))
_STREAMS = {"ready@c1": 20_000, "burst8@c1": 20_000, "paced@c1": 1_000}
_STREAMS |= {"ready@c32": 2_000, "burst8@c32": 2_000, "paced@c32": 500}

FULL = Profile(
    serialization=(_full_cells(), LoadSettings(3, 2, 6, min_requests=15, drain_budget_s=10)),
    keepalive=(_KEEPALIVE_CELLS, LoadSettings(7, 2, 2, min_requests=1, drain_budget_s=10)),
    streaming=StreamSettings(rounds=3, events=_STREAMS),
    inprocess=(
        (TRAINING, "tokens-1536", TOOLCALL, CHUNKS),
        ("--processes=6", "--values=3", "--warmups=1", "--min-time=0.1"),
    ),
    only={},
)

QUICK = Profile(
    serialization=(
        (Cell(TRAINING, 32), Cell(TOOLCALL, 32)),
        LoadSettings(3, 1, 2, min_requests=5, drain_budget_s=12),
    ),
    keepalive=(_KEEPALIVE_CELLS, LoadSettings(3, 1, 1, min_requests=1, drain_budget_s=5)),
    streaming=StreamSettings(3, {"ready@c1": 3_000, "burst8@c32": 300, "paced@c32": 100}),
    inprocess=(
        (TOOLCALL, CHUNKS),
        ("--processes=2", "--values=3", "--warmups=1", "--min-time=0.05"),
    ),
    only={
        "serialization": {"typed", "dump-json", "dispatch-model", "dispatch-route", "orjson-limit"},
        "keepalive": {"stock", "keepalive", "stock-b"},
        "streaming": {"fastapi-jsonl-typed", "fastapi-sse-typed", "sse-starlette", "orjson-limit"}
        | {"dispatch-route-jsonl", "dispatch-route-sse"},
    },
)


def parse_args(argv: list[str]) -> argparse.Namespace:
    """Parse the command line."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="Run the side-by-side benchmarks of orjson-dispatch and uvicorn-keepalive.",
    )
    parser.add_argument("--quick", action="store_true", help="a few minutes' subset")
    parser.add_argument(
        "--only",
        default=",".join(SUITES),
        help=f"comma-separated suites to run, of: {', '.join(SUITES)} (default: all)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        help="output directory (default: benchmarks/results, or benchmarks/results/quick)",
    )
    parser.add_argument(
        "--render",
        type=Path,
        metavar="DIR",
        help="measure nothing: print the summary and draw the plots of the results in DIR",
    )
    args = parser.parse_args(argv)
    unknown = set(args.only.split(",")) - set(SUITES)
    if unknown:
        parser.error(f"--only: unknown suites {sorted(unknown)}; choose from {SUITES}")
    return args


def _run_header(command: str) -> dict[str, Any]:
    """When, from which commit and with which packages a suite ran (pyperf's metadata aside)."""
    git = ["git", "rev-parse", "--short=12", "HEAD"]
    return {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": command,
        "git": subprocess.run(
            git, cwd=ROOT, capture_output=True, text=True, check=False
        ).stdout.strip(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_average": [round(value, 2) for value in os.getloadavg()],
        "packages": {name: metadata.version(name) for name in PACKAGES},
    }


def _only(profile: Profile, name: str, configs: Sequence[_C]) -> list[_C]:
    wanted = profile.only.get(name)
    return [config for config in configs if wanted is None or config.name in wanted]


def measure_suite(name: str, profile: Profile, wrk: str, logs: Path, out: Path) -> Any:
    """Run one suite of ``profile``; return its JSON-ready results."""
    if name == "inprocess":
        bodies, options = profile.inprocess
        return measure(list(bodies), list(options), out / "inprocess.json")
    if name == "streaming":
        configs = _only(profile, name, STREAMING_CONFIGS)
        return run_streaming(configs, profile.streaming, log_dir=logs)
    every = SERIALIZATION_CONFIGS if name == "serialization" else KEEPALIVE_CONFIGS
    cells, settings = getattr(profile, name)
    expected = {cell.body: {} if cell.body == "plain" else body(cell.body).data for cell in cells}
    suite = run_suite(
        name, _only(profile, name, every), cells, expected, settings, wrk=wrk, log_dir=logs
    )
    return asdict(suite)


def load_results(directory: Path) -> dict[str, Any]:
    """Return the results of every suite with a file in ``directory``."""
    found = {}
    for name in SUITES:
        path = directory / f"{name}.json"
        if path.is_file():
            found[name] = json.loads(path.read_text())
    return found


def main(argv: list[str] | None = None) -> int:
    """Run the benchmarks; return the exit status."""
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.render is not None:
        results = load_results(args.render)
        plots.draw(results, PLOTS if args.render.resolve() == RESULTS else args.render)
        print(summary.render(results))
        return 0
    profile = QUICK if args.quick else FULL
    out = args.out or (RESULTS / "quick" if args.quick else RESULTS)
    out.mkdir(parents=True, exist_ok=True)
    load = os.getloadavg()[0]
    if load > 0.5 * (os.cpu_count() or 1):
        print(
            f"benchmarks: load average {load:.1f} on {os.cpu_count()} CPUs: other work adds "
            "noise; ratios of interleaved runs stay comparable, absolute figures less so",
            file=sys.stderr,
        )
    python = Path(sys.executable)
    shown = python.relative_to(ROOT) if python.is_relative_to(ROOT) else python
    command = shlex.join([str(shown), "-m", "benchmarks", *argv])
    measured: dict[str, Any] = {}
    try:
        wrk = require_wrk()
        with tempfile.TemporaryDirectory(prefix="benchmarks-") as logs:
            for name in (s for s in SUITES if s in args.only.split(",")):
                started, header = time.monotonic(), _run_header(command)
                measured[name] = measure_suite(name, profile, wrk, Path(logs), out)
                if name != "inprocess":  # pyperf's file carries pyperf's own metadata
                    header["elapsed_s"] = round(time.monotonic() - started)
                    measured[name]["run"] = header
                    (out / f"{name}.json").write_text(json.dumps(measured[name], indent=1))
    except (WrkError, ServerError, subprocess.CalledProcessError) as error:
        print(f"benchmarks: {error}", file=sys.stderr)
        return 2
    drawn = plots.draw(measured, out if args.quick or args.out else PLOTS)
    print(f"benchmarks: results in {out}, plots {', '.join(map(str, drawn))}", file=sys.stderr)
    print(summary.render(measured))
    return 0
