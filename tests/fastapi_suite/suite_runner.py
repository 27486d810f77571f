"""Fetch FastAPI's own test suite and run it, as it is or with every route through orjson-dispatch.

The tests come from the sdist of the installed FastAPI (downloaded once with pip, cached in
.cache/fastapi-tests/<version>/: tests/, docs_src/, the pyproject.toml holding FastAPI's pytest
configuration and the one image a tutorial test reads); FastAPI itself is the installed one.

Run FastAPI's suite by hand, through orjson-dispatch (``--baseline``: without it; ``--mode
route``: on DispatchRoute); other arguments go to pytest, test paths are relative to the cached
suite (default ``tests``, all of it)::

    .venv/bin/python tests/fastapi_suite/suite_runner.py tests/test_default_response_class.py
    .venv/bin/python tests/fastapi_suite/suite_runner.py --baseline tests/test_dependency_wrapped.py
    .venv/bin/python tests/fastapi_suite/suite_runner.py -n 2
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
if __name__ == "__main__":  # run as a script: the repository's tests package must import
    sys.path.insert(0, str(ROOT))

from tests.sdist import source_tree  # noqa: E402

CACHE = ROOT / ".cache" / "fastapi-tests"
# What the suite needs from the sdist besides FastAPI itself.
WANTED = ("tests/", "docs_src/", "pyproject.toml", "docs/en/docs/img/favicon.png")
# FastAPI's release tooling tests import its scripts/ package, which is not a test of FastAPI.
IGNORED = ("tests/test_prepare_release.py", "tests/test_translate.py")
OUT_VARIABLE = "ORJSON_DISPATCH_SUITE_OUT"
MODE_VARIABLE = "ORJSON_DISPATCH_SUITE_MODE"


def fastapi_tests(fastapi_version: str | None = None) -> Path:
    """The directory holding FastAPI's tests/, docs_src/ and pyproject.toml, fetched if missing."""
    return source_tree("fastapi", fastapi_version or version("fastapi"), WANTED, CACHE)


@dataclass
class Run:
    """One run of FastAPI's suite: each test's outcome, the routes built, the tests the plugin
    deselected (dispatch_plugin.py says which and why), the wall time."""

    outcomes: dict[str, dict[str, str]]
    routes: Counter[str] = field(default_factory=Counter)
    deselected: set[str] = field(default_factory=set)
    seconds: float = 0.0
    output: str = ""

    def count(self, outcome: str) -> int:
        """How many tests ended with `outcome`."""
        return sum(1 for result in self.outcomes.values() if result["outcome"] == outcome)


def command(mode: str | None, pytest_args: list[str]) -> list[str]:
    """The pytest command line run in the suite's directory (`mode` None: the baseline)."""
    suite = fastapi_tests()
    plugins = ["-p", "outcome_plugin", "-p", "gc_plugin"]
    plugins += [] if mode is None else ["-p", "dispatch_plugin"]
    # Faker's pytest plugin, where an environment has it, is none of FastAPI's test
    # dependencies; loading it cost each run about a second of CPU.
    plugins += ["-p", "no:faker"]
    ignored = [f"--ignore={path}" for path in IGNORED]
    return [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        *plugins,
        "--rootdir",
        str(suite),
        "-c",
        str(suite / "pyproject.toml"),
        *ignored,
        *pytest_args,
    ]


def environment(mode: str | None, out: Path | None) -> dict[str, str]:
    """The child's environment: this directory on PYTHONPATH (for the plugins), the mode."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("ORJSON_")}
    env["PYTHONPATH"] = str(HERE)
    if mode is not None:
        env[MODE_VARIABLE] = mode
    if out is not None:
        env[OUT_VARIABLE] = str(out)
    return env


def run(mode: str | None, pytest_args: list[str], timeout: float = 600) -> Run:
    """Run FastAPI's suite with `pytest_args`, through orjson-dispatch unless `mode` is None."""
    suite = fastapi_tests()
    with tempfile.TemporaryDirectory() as out:
        start = time.monotonic()
        result = subprocess.run(
            # Without pytest's assertion rewriting, which parses and compiles each test module
            # once more (8 CPU-s for the whole suite from a fresh clone): the same outcomes, only
            # a failing assert's message is shorter (by hand, main runs with it).
            command(mode, ["--assert=plain", *pytest_args]),
            cwd=suite,
            env=environment(mode, Path(out)),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        seconds = time.monotonic() - start
        output = result.stdout + result.stderr
        outcomes_file = Path(out) / "outcomes.json"
        if not outcomes_file.exists():
            msg = f"FastAPI's suite wrote no outcomes (exit {result.returncode}):\n{output}"
            raise RuntimeError(msg)
        routes: Counter[str] = Counter()
        for counts in Path(out).glob("routes-*.json"):
            routes.update(json.loads(counts.read_text()))
        deselected: set[str] = set()  # every xdist worker collects, and deselects, them all
        for ids in Path(out).glob("deselected-*.json"):
            deselected.update(json.loads(ids.read_text()))
        outcomes = json.loads(outcomes_file.read_text())
        return Run(outcomes, routes, deselected, seconds, output)


def run_side_by_side(mode: str | None, runs: list[list[str]]) -> Run:
    """The runs of `run(mode, args)` for each of `runs`, in processes side by side, as one."""
    with ThreadPoolExecutor(len(runs)) as pool:
        parts = list(pool.map(lambda args: run(mode, args), runs))
    merged = Run({}, seconds=max(part.seconds for part in parts))
    for part in parts:
        merged.outcomes |= part.outcomes
        merged.routes.update(part.routes)
        merged.deselected |= part.deselected
        merged.output += part.output
    return merged


def main() -> int:
    """Run FastAPI's suite (or part of it) in the foreground with the given pytest arguments."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", action="store_true", help="run without orjson-dispatch")
    parser.add_argument("--mode", choices=("dispatch", "route"), default="dispatch")
    options, pytest_args = parser.parse_known_args()
    mode = None if options.baseline else options.mode
    suite = fastapi_tests()
    return subprocess.call(
        command(mode, pytest_args or ["tests"]), cwd=suite, env=environment(mode, None)
    )


if __name__ == "__main__":
    sys.exit(main())
