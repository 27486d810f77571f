"""``python -m benchmarks [--quick] [--only SUITES] [--out DIR | --render DIR] [--plots DIR]``.

Each suite writes its raw measurements to ``<out>/<suite>.json`` (the in-process suite:
pyperf's own file), so that running one suite again replaces only its file. A summary of every
suite measured is printed at the end. ``--render DIR`` measures nothing and writes nothing: it
prints the summary of the files in DIR. Plots are drawn only with ``--plots DIR``, into DIR.
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
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any, NamedTuple

from benchmarks import summary
from benchmarks.bodies import (
    CHAT,
    MULTI_TURN,
    SDK_BODIES,
    SDK_CHUNKS,
    SDK_TOOLCALL,
    SDK_TRAINING,
    TOOLCALL,
    TRAINING,
)
from benchmarks.configs import (
    KEEPALIVE_CONFIGS,
    REQUEST_CONFIGS,
    SERIALIZATION_CONFIGS,
    STREAMING_CONFIGS,
)
from benchmarks.inprocess import measure
from benchmarks.load import LoadSettings, WrkError, require_wrk, run_suite
from benchmarks.rounds import Cell
from benchmarks.server import ROOT, ServerError
from benchmarks.streaming import run_streaming

SUITES = ("serialization", "requests", "inprocess", "streaming", "keepalive")
RESULTS = ROOT / "benchmarks" / "results"
#: The distributions whose versions decide the figures, recorded with each suite.
PACKAGES = ("fastapi", "pydantic", "orjson", "uvicorn", "uvloop", "httptools", "litestar",
            "msgspec", "sse-starlette", "orjson-dispatch", "uvicorn-keepalive")  # fmt: skip


class Profile(NamedTuple):
    """What one invocation measures, by suite."""

    serialization: tuple[tuple[Cell, ...], LoadSettings]
    requests: tuple[tuple[Cell, ...], LoadSettings]
    keepalive: tuple[tuple[Cell, ...], LoadSettings]
    streaming: tuple[dict[str, int], int]  # events per stream by cell, rounds
    inprocess: tuple[tuple[str, ...], str]  # bodies, pyperf Runner options
    only: dict[str, set[str]]  # the configurations measured (all of a suite not listed)


# Four bodies at 1, 32 (the profile's duration) and 256 connections (1 s, longer for slow
# configurations as every run), the 1.5k-token body, the scaling sizes at one connection.
_BODIES = (TRAINING, "tokens-1024", "tokens-32", TOOLCALL)
_SCALING = ("tokens-256", "tokens-4096", "tokens-16384", "tokens-262144")
# The 1.7 MB multi-turn request and the 2 KB chat request, at a model server's 32 connections.
_REQUEST_CELLS = (Cell(MULTI_TURN, 32), Cell(CHAT, 32))
# A new connection per request (churn), long-lived connections, and one connection: the
# latency of a request on a reused connection (Nagle against delayed ACKs shows there).
_KEEPALIVE_CELLS = (Cell("plain", 32, close=True), Cell("plain", 32), Cell("plain", 1))

FULL = Profile(
    serialization=(
        (
            *(Cell(b, c, duration_s=None if c == 32 else 1) for c in (1, 32, 256) for b in _BODIES),
            Cell("tokens-1536", 32),
            *(Cell(b, 32) for b in (SDK_TRAINING, SDK_TOOLCALL)),
            *(Cell(b, 1, duration_s=1) for b in _SCALING),
        ),
        LoadSettings(3, 2, 6, min_requests=15, drain_budget_s=10),
    ),
    requests=(_REQUEST_CELLS, LoadSettings(3, 2, 6, min_requests=15, drain_budget_s=10)),
    keepalive=(_KEEPALIVE_CELLS, LoadSettings(7, 2, 2, min_requests=1, drain_budget_s=10)),
    streaming=(
        {"ready@c1": 20_000, "burst8@c1": 20_000, "paced@c1": 1_000}
        | {"ready@c32": 2_000, "burst8@c32": 2_000, "paced@c32": 500},
        3,
    ),
    inprocess=(
        (TRAINING, "tokens-1536", TOOLCALL, *SDK_BODIES, SDK_CHUNKS),
        "--processes=6 --values=3 --warmups=1 --min-time=0.1",
    ),
    only={},
)

QUICK = Profile(
    serialization=(
        (Cell(TRAINING, 32), Cell(TOOLCALL, 32)),
        LoadSettings(3, 1, 2, min_requests=5, drain_budget_s=12),
    ),
    requests=(_REQUEST_CELLS, LoadSettings(3, 1, 2, min_requests=5, drain_budget_s=12)),
    keepalive=(_KEEPALIVE_CELLS, LoadSettings(3, 1, 1, min_requests=1, drain_budget_s=5)),
    streaming=({"ready@c1": 3_000, "burst8@c1": 2_000, "burst8@c32": 300, "paced@c32": 100}, 3),
    inprocess=(
        (TOOLCALL, SDK_TRAINING, SDK_CHUNKS),
        "--processes=2 --values=3 --warmups=1 --min-time=0.05",
    ),
    only={
        "serialization": {"typed", "dump-json", "dispatch-model", "dispatch-route", "orjson-limit"},
        "keepalive": {"stock", "keepalive", "stock-b", "keepalive-asyncio", "stock-asyncio-w2"}
        | {"keepalive-asyncio-w2"},
        "streaming": {"fastapi-jsonl-typed", "fastapi-sse-typed", "sse-starlette", "orjson-limit"}
        | {"dispatch-route-jsonl", "dispatch-route-sse"},
    },
)


def parse_args(argv: list[str]) -> argparse.Namespace:
    """Parse the command line."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="the subset the docs quote")
    parser.add_argument("--only", default=",".join(SUITES), help=f"of: {', '.join(SUITES)}")
    parser.add_argument("--out", type=Path, help="default: benchmarks/results[/quick]")
    parser.add_argument("--render", type=Path, metavar="DIR", help="summarize DIR, measure nothing")
    parser.add_argument("--plots", type=Path, metavar="DIR", help="draw the plots into DIR")
    args = parser.parse_args(argv)
    unknown = set(args.only.split(",")) - set(SUITES)
    if unknown:
        parser.error(f"--only: unknown suites {sorted(unknown)}; choose from {SUITES}")
    return args


def measure_suite(name: str, profile: Profile, wrk: str, logs: Path, out: Path) -> Any:
    """Run one suite of ``profile``; return its JSON-ready results."""
    configs = {"serialization": SERIALIZATION_CONFIGS, "keepalive": KEEPALIVE_CONFIGS}
    configs["requests"] = REQUEST_CONFIGS
    wanted = profile.only.get(name)
    if name == "inprocess":
        bodies, options = profile.inprocess
        return measure(list(bodies), options.split(), out / "inprocess.json")
    if name == "streaming":
        chosen = [c for c in STREAMING_CONFIGS if wanted is None or c.name in wanted]
        return run_streaming(chosen, *profile.streaming, log_dir=logs)
    cells, settings = getattr(profile, name)
    chosen_load = [c for c in configs[name] if wanted is None or c.name in wanted]
    return run_suite(name, chosen_load, cells, settings, wrk=wrk, log_dir=logs)


def load_results(directory: Path) -> dict[str, Any]:
    """Return the results of every suite with a file in ``directory``."""
    paths = {name: directory / f"{name}.json" for name in SUITES}
    return {name: json.loads(path.read_text()) for name, path in paths.items() if path.is_file()}


def draw(results: dict[str, Any], directory: Path) -> list[Path]:
    """Draw the plots of the suites in ``results`` into ``directory``; return their paths."""
    directory.mkdir(parents=True, exist_ok=True)
    drawn = []
    if "serialization" in results:
        drawn.append(directory / "serialization.png")
        label = "requests/s at 32 connections"
        summary.plot(results["serialization"], "rps", label, drawn[-1], concurrency=32)
    if "streaming" in results:
        drawn.append(directory / "streaming.png")
        label = "events/s, one uvicorn worker"
        summary.plot(results["streaming"], "events_per_s", label, drawn[-1])
    return drawn


def _header(argv: list[str]) -> dict[str, Any]:
    """Return the command, the commit and the versions of a run, recorded with each suite."""
    python = Path(sys.executable)
    shown = python.relative_to(ROOT) if python.is_relative_to(ROOT) else python
    git = ["git", "rev-parse", "--short=12", "HEAD"]
    return {
        "command": shlex.join([str(shown), "-m", "benchmarks", *argv]),
        "git": subprocess.run(
            git, cwd=ROOT, capture_output=True, text=True, check=False
        ).stdout.strip(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "packages": {package: metadata.version(package) for package in PACKAGES},
    }


def main(argv: list[str] | None = None) -> int:
    """Run the benchmarks; return the exit status."""
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.render is not None:
        results = load_results(args.render)
        drawn = draw(results, args.plots) if args.plots else []
        print(f"benchmarks: plots {', '.join(map(str, drawn)) or 'not drawn'}", file=sys.stderr)
        print(summary.render(results))
        return 0
    out = args.out or (RESULTS / "quick" if args.quick else RESULTS)
    out.mkdir(parents=True, exist_ok=True)
    if os.getloadavg()[0] > 0.5 * (os.cpu_count() or 1):
        print(
            f"benchmarks: load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs: other "
            "work adds noise; ratios of interleaved runs stay comparable, absolute figures less so",
            file=sys.stderr,
        )
    header, measured = _header(argv), {}
    try:
        wrk = require_wrk()
        with tempfile.TemporaryDirectory(prefix="benchmarks-") as logs:
            for name in (s for s in SUITES if s in args.only.split(",")):
                date = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
                load, started = [round(value, 2) for value in os.getloadavg()], time.monotonic()
                profile = QUICK if args.quick else FULL
                measured[name] = measure_suite(name, profile, wrk, Path(logs), out)
                if name != "inprocess":  # pyperf's file carries pyperf's metadata
                    elapsed = round(time.monotonic() - started)
                    run = {"date": date, "load_average": load, "elapsed_s": elapsed}
                    measured[name]["run"] = header | run
                    (out / f"{name}.json").write_text(json.dumps(measured[name], indent=1))
    except (WrkError, ServerError, subprocess.CalledProcessError) as error:
        print(f"benchmarks: {error}", file=sys.stderr)
        return 2
    drawn = draw(measured, args.plots) if args.plots else []
    plots = ", ".join(map(str, drawn)) or "not drawn (--plots DIR)"
    print(f"benchmarks: results in {out}, plots {plots}", file=sys.stderr)
    print(summary.render(measured))
    return 0
