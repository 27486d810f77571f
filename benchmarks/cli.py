"""The command line: ``python -m benchmarks [--quick] [--only ...] [--render FILE]``."""

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from benchmarks import connection_cost, docs_page, plots
from benchmarks.bodies import body
from benchmarks.configs import KEEPALIVE_CONFIGS, SERIALIZATION_CONFIGS, STREAMING_CONFIGS
from benchmarks.inprocess import measure
from benchmarks.load import run_suite
from benchmarks.machine import describe
from benchmarks.profiles import PROFILES, Profile
from benchmarks.report import render
from benchmarks.server import ROOT, ServerError
from benchmarks.streaming import run_streaming
from benchmarks.update import latest_run, merge, notes_are_current
from benchmarks.wrk import WrkError, require_wrk

SUITES = ("serialization", "inprocess", "streaming", "keepalive", "connections")
RESULTS = ROOT / "benchmarks" / "results"


def parse_args(argv: list[str]) -> argparse.Namespace:
    """Parse the command line."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="Run the side-by-side benchmarks of orjson-dispatch and uvicorn-keepalive.",
    )
    parser.add_argument(
        "--quick", action="store_true", help="a ~2 minute subset (default: the full suite)"
    )
    parser.add_argument(
        "--only",
        default=",".join(SUITES),
        help=f"comma-separated suites to run, of: {', '.join(SUITES)} (default: all)",
    )
    parser.add_argument("--rounds", type=int, help="override the profile's number of rounds")
    parser.add_argument(
        "--out",
        type=Path,
        help="output directory (default: benchmarks/results, or benchmarks/results/quick)",
    )
    parser.add_argument(
        "--no-docs", action="store_true", help="do not regenerate docs/benchmarks.md"
    )
    parser.add_argument(
        "--update",
        action="store_true",
        help="merge the suites of this run into the output directory's results.json, keeping "
        "the other suites' figures (e.g. --only keepalive --update)",
    )
    parser.add_argument(
        "--render",
        type=Path,
        metavar="RESULTS_JSON",
        help="only redraw tables, plots and docs from an existing results.json",
    )
    args = parser.parse_args(argv)
    unknown = set(args.only.split(",")) - set(SUITES)
    if unknown:
        parser.error(f"--only: unknown suites {sorted(unknown)}; choose from {SUITES}")
    if args.rounds is not None and args.rounds < 3:
        parser.error("--rounds: at least 3 rounds are needed for a median with a spread")
    return args


def _command(argv: list[str]) -> str:
    python = Path(sys.executable)
    shown = python.relative_to(ROOT) if python.is_relative_to(ROOT) else python
    return shlex.join([str(shown), "-m", "benchmarks", *argv])


def _with_rounds(profile: Profile, rounds: int | None) -> Profile:
    if rounds is None:
        return profile
    return replace(
        profile,
        serialization=replace(profile.serialization, rounds=rounds),
        keepalive=replace(profile.keepalive, rounds=rounds),
        streaming=replace(profile.streaming, rounds=rounds),
        connection_rounds=max(rounds, profile.connection_rounds),
    )


def measure_all(profile: Profile, suites: set[str], wrk: str, command: str) -> dict[str, Any]:
    """Run the selected suites of ``profile`` and return the JSON-ready results."""
    started = time.monotonic()
    load = os.getloadavg()[0]
    if load > 0.5 * (os.cpu_count() or 1):
        print(
            f"benchmarks: load average {load:.1f} on {os.cpu_count()} CPUs: other work on this "
            "machine will add noise; the ratios stay comparable, absolute figures will not",
            file=sys.stderr,
        )
    results: dict[str, Any] = {
        "schema": 1,
        "profile": profile.name,
        "command": command,
        "started_at": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": describe(wrk),
        "settings": asdict(profile),
        "bodies": {},
        "suites": {},
        "inprocess": None,
        "connection_cost": None,
    }
    names = {cell.body for cell in profile.serialization_cells} | set(profile.inprocess_bodies)
    results["bodies"] = {
        name: {"tokens": body(name).tokens, "bytes": len(body(name).json)} for name in sorted(names)
    }
    with tempfile.TemporaryDirectory(prefix="benchmarks-") as logs:
        if "serialization" in suites:
            expected = {cell.body: body(cell.body).data for cell in profile.serialization_cells}
            suite = run_suite(
                "serialization",
                SERIALIZATION_CONFIGS,
                profile.serialization_cells,
                expected,
                profile.serialization,
                wrk=wrk,
                log_dir=Path(logs),
            )
            results["suites"]["serialization"] = asdict(suite)
        if "inprocess" in suites:
            results["inprocess"] = measure(
                list(profile.inprocess_bodies), list(profile.inprocess), Path(logs)
            )
        if "streaming" in suites:
            results["suites"]["streaming"] = run_streaming(
                STREAMING_CONFIGS, profile.streaming, log_dir=Path(logs)
            )
        if "keepalive" in suites:
            suite = run_suite(
                "keepalive",
                KEEPALIVE_CONFIGS,
                profile.keepalive_cells,
                {"plain": {}},
                profile.keepalive,
                wrk=wrk,
                log_dir=Path(logs),
            )
            results["suites"]["keepalive"] = asdict(suite)
        if "connections" in suites:
            results["connection_cost"] = connection_cost.measure(
                rounds=profile.connection_rounds, connections=profile.connection_count
            )
    results["elapsed_s"] = round(time.monotonic() - started, 1)
    results["machine"]["load_average_at_end"] = [round(v, 2) for v in os.getloadavg()]
    return results


def publish(results: dict[str, Any], out: Path, docs: bool) -> None:
    """Write results.json, results.md and the plots into ``out``; the docs page if asked."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    if results.get("inprocess"):
        # pyperf's own file, for `python -m pyperf stats|hist|compare_to`.
        (out / "inprocess.json").write_text(json.dumps(results["inprocess"]) + "\n")
    drawn = plots.draw_all(results, out)
    notes_file = out / "notes.md"
    notes = notes_file.read_text() if notes_file.is_file() else ""
    if notes and not notes_are_current(notes, results):
        notes = (
            f'!!! warning "Notes written for an earlier run"\n    The notes below do not '
            f"name the latest run ({latest_run(results)}): their figures may differ from the "
            f"tables.\n\n{notes}"
        )
    report = render(results, "", notes, drawn)
    (out / "results.md").write_text("# Benchmark results\n\n" + report + "\n")
    print(f"results in {out}", file=sys.stderr)
    if docs:
        page = docs_page.write(results, out, ROOT / "docs", notes, drawn)
        print(f"docs page {page}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmarks; return the exit status."""
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.render is not None:
        results = json.loads(args.render.read_text())
        publish(results, args.out or args.render.parent, docs=not args.no_docs)
        return 0
    profile = _with_rounds(PROFILES["quick" if args.quick else "full"], args.rounds)
    try:
        wrk = require_wrk()
        results = measure_all(profile, set(args.only.split(",")), wrk, _command(argv))
    except (WrkError, ServerError, subprocess.CalledProcessError) as error:
        print(f"benchmarks: {error}", file=sys.stderr)
        return 2
    default_out = RESULTS / "quick" if args.quick else RESULTS
    out = args.out or default_out
    if args.update:
        try:
            earlier = json.loads((out / "results.json").read_text())
            results = merge(earlier, results, set(args.only.split(",")))
        except (OSError, ValueError) as error:
            print(f"benchmarks: --update: {error}", file=sys.stderr)
            return 2
    publish(results, out, docs=not args.no_docs and not args.quick and args.out is None)
    return 0
