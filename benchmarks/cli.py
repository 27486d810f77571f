"""The command line of every question, and of ``python -m benchmarks``, which runs them all.

``python -m benchmarks.<question> [--quick] [--out DIR | --render DIR] [--plots DIR]`` measures
one question into ``<out>/<question>.json``; ``python -m benchmarks`` runs every question (or
those ``--only`` names) one after the other, the same way, so that running one again replaces
only its file; then each prints the summary of what it measured. ``--render DIR`` measures
nothing and writes nothing: it prints the summary of the files in DIR. Plots are drawn only
with ``--plots DIR``.
"""

import argparse
import importlib
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Any

from benchmarks import summary
from benchmarks.runner import ROOT, ServerError, WrkError

SUITES = ("serialization", "requests", "inprocess", "streaming", "keepalive")
RESULTS = ROOT / "benchmarks" / "results"
#: The distributions whose versions decide the figures, recorded with each suite.
PACKAGES = [
    "fastapi",
    "pydantic",
    "orjson",
    "uvicorn",
    "uvloop",
    "httptools",
    "msgspec",
    "sse-starlette",
    "orjson-dispatch",
    "uvicorn-keepalive",
]
#: The suites plotted: the metric, its axis label, the concurrency of the cells drawn (None: all).
PLOTS = {
    "serialization": ("rps", "requests/s at 32 connections", 32),
    "streaming": ("events_per_s", "events/s, one uvicorn worker", None),
}


def questions() -> dict[str, ModuleType]:
    """Return every question's module: its ``measure(quick, log_dir)`` and ``render(results)``."""
    return {suite: importlib.import_module(f"benchmarks.{suite}") for suite in SUITES}


def header(command: Sequence[str]) -> dict[str, Any]:
    """Return what a result file records beside the samples: command, commit, versions, load."""
    python = Path(sys.executable)
    shown = python.relative_to(ROOT) if python.is_relative_to(ROOT) else python
    git = ["git", "rev-parse", "--short=12", "HEAD"]
    commit = subprocess.run(git, cwd=ROOT, capture_output=True, text=True, check=False).stdout
    return {
        "command": shlex.join([str(shown), *command]),
        "git": commit.strip(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "packages": {package: metadata.version(package) for package in PACKAGES},
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "load_average": [round(value, 2) for value in os.getloadavg()],
    }


def measure_into(question: ModuleType, quick: bool, out: Path, command: Sequence[str]) -> Any:
    """Measure ``question``; write its results, with :func:`header`, to ``out/<suite>.json``."""
    run, started = header(command), time.monotonic()
    with tempfile.TemporaryDirectory(prefix="benchmarks-") as logs:
        measured = question.measure(quick, Path(logs))
    measured["run"] = run | {"elapsed_s": round(time.monotonic() - started)}
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{question.SUITE}.json").write_text(json.dumps(measured, indent=1))
    return measured


def load_results(directory: Path) -> dict[str, Any]:
    """Return the results of every suite with a file in ``directory``."""
    paths = {name: directory / f"{name}.json" for name in SUITES}
    return {name: json.loads(path.read_text()) for name, path in paths.items() if path.is_file()}


def render(results: Mapping[str, Any], modules: Mapping[str, ModuleType] | None = None) -> str:
    """Return the summary of every suite in ``results`` (suite name to its data)."""
    modules = modules or questions()
    return "\n".join(line for s in SUITES if s in results for line in modules[s].render(results[s]))


def draw(results: Mapping[str, Any], directory: Path) -> list[Path]:
    """Draw the plots of the suites in ``results`` into ``directory``; return their paths."""
    directory.mkdir(parents=True, exist_ok=True)
    drawn = []
    for suite, (metric, label, concurrency) in PLOTS.items():
        if suite in results:
            drawn.append(directory / f"{suite}.png")
            summary.plot(results[suite], metric, label, drawn[-1], concurrency=concurrency)
    return drawn


def main(argv: list[str] | None = None, question: ModuleType | None = None) -> int:
    """Run ``question`` (a question's module run as a script), or every one; return the status."""
    argv = sys.argv[1:] if argv is None else argv
    modules = {question.SUITE: question} if question else questions()
    prog = f"benchmarks.{question.SUITE}" if question else "benchmarks"
    parser = argparse.ArgumentParser(prog=f"python -m {prog}", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="shorter runs (the docs quote them)")
    if question is None:
        parser.add_argument("--only", default=",".join(SUITES), help=f"of: {', '.join(SUITES)}")
    parser.add_argument("--out", type=Path, help="default: benchmarks/results[/quick]")
    parser.add_argument("--render", type=Path, metavar="DIR", help="summarize DIR, measure nothing")
    parser.add_argument("--plots", type=Path, metavar="DIR", help="draw the plots into DIR")
    args = parser.parse_args(argv)
    only = args.only.split(",") if question is None else list(modules)
    if unknown := set(only) - set(SUITES):
        parser.error(f"--only: unknown suites {sorted(unknown)}; choose from {SUITES}")
    if args.render is not None:
        measured = {s: r for s, r in load_results(args.render).items() if s in modules}
    else:
        out, measured = args.out or (RESULTS / "quick" if args.quick else RESULTS), {}
        try:
            for suite in (s for s in SUITES if s in only):
                measured[suite] = measure_into(modules[suite], args.quick, out, ["-m", prog, *argv])
        except (WrkError, ServerError) as error:
            print(f"benchmarks: {error}", file=sys.stderr)
            return 2
    drawn = draw(measured, args.plots) if args.plots else []
    plots = ", ".join(map(str, drawn)) or "not drawn (--plots DIR)"
    print(f"benchmarks: plots {plots}", file=sys.stderr)
    print(render(measured, modules))
    return 0
