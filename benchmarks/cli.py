"""``python -m benchmarks [--quick] [--only SUITES] [--out DIR | --render DIR] [--plots DIR]``.

Runs the questions one after the other, each as ``python -m benchmarks.<suite>`` runs it alone,
each writing ``<out>/<suite>.json``, so that running one again replaces only its file; then
prints the summary of every suite measured. ``--render DIR`` measures nothing and writes
nothing: it prints the summary of the files in DIR. Plots are drawn only with ``--plots DIR``.
"""

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from benchmarks import inprocess, keepalive, requests, route, serialization, streaming, summary
from benchmarks.runner import RESULTS, ServerError, WrkError, measure_into

QUESTIONS = {m.SUITE: m for m in (serialization, requests, inprocess, streaming, keepalive, route)}
SUITES = tuple(QUESTIONS)


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


def load_results(directory: Path) -> dict[str, Any]:
    """Return the results of every suite with a file in ``directory``."""
    paths = {name: directory / f"{name}.json" for name in SUITES}
    return {name: json.loads(path.read_text()) for name, path in paths.items() if path.is_file()}


def render(results: dict[str, Any]) -> str:
    """Return the summary of every suite in ``results`` (suite name to its data)."""
    return "\n".join(
        line for s in SUITES if s in results for line in QUESTIONS[s].render(results[s])
    )


def draw(results: dict[str, Any], directory: Path) -> list[Path]:
    """Draw the plots of the suites in ``results`` into ``directory``; return their paths."""
    directory.mkdir(parents=True, exist_ok=True)
    plots = {"serialization": ("rps", "requests/s at 32 connections", 32),
             "streaming": ("events_per_s", "events/s, one uvicorn worker", None)}  # fmt: skip
    drawn = []
    for suite, (metric, label, concurrency) in plots.items():
        if suite in results:
            drawn.append(directory / f"{suite}.png")
            summary.plot(results[suite], metric, label, drawn[-1], concurrency=concurrency)
    return drawn


def main(argv: list[str] | None = None) -> int:
    """Run the benchmarks; return the exit status."""
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    measured = load_results(args.render) if args.render is not None else {}
    if args.render is None:
        out = args.out or (RESULTS / "quick" if args.quick else RESULTS)
        try:
            for suite in (s for s in SUITES if s in args.only.split(",")):
                question, command = QUESTIONS[suite].measure, ["-m", "benchmarks", *argv]
                measured[suite] = measure_into(suite, question, args.quick, out, command)
        except (WrkError, ServerError) as error:
            print(f"benchmarks: {error}", file=sys.stderr)
            return 2
    drawn = draw(measured, args.plots) if args.plots else []
    plots = ", ".join(map(str, drawn)) or "not drawn (--plots DIR)"
    print(f"benchmarks: plots {plots}", file=sys.stderr)
    print(render(measured))
    return 0
