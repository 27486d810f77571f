"""Describe the machine and the software a benchmark ran on: pyperf's metadata and more."""

import json
import os
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any

from benchmarks.server import ROOT, event_loop
from benchmarks.wrk import wrk_version

#: The distributions whose versions decide the figures.
PACKAGES = (
    "fastapi",
    "starlette",
    "pydantic",
    "pydantic-core",
    "orjson",
    "uvicorn",
    "httptools",
    "uvloop",
    "litestar",
    "msgspec",
    "sse-starlette",
    "pyperf",
    "orjson-dispatch",
    "uvicorn-keepalive",
)
#: The keys kept from ``python -m pyperf collect_metadata`` (the others vary per run or
#: repeat these: date, hostname, the compiler flags).
PYPERF_KEYS = (
    "cpu_model_name",
    "cpu_count",
    "cpu_freq",
    "cpu_config",
    "platform",
    "python_implementation",
    "python_version",
    "aslr",
)


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


def _run(command: list[str]) -> str:
    completed = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True)
    return completed.stdout.strip()


def pyperf_metadata() -> dict[str, Any]:
    """Return pyperf's description of this machine, limited to :data:`PYPERF_KEYS`."""
    with tempfile.TemporaryDirectory(prefix="benchmarks-") as directory:
        path = Path(directory) / "metadata.json"
        _run([sys.executable, "-m", "pyperf", "collect_metadata", f"--output={path}"])
        found: dict[str, Any] = json.loads(path.read_text())["metadata"]
    return {key: found[key] for key in PYPERF_KEYS if key in found}


def describe(wrk: str) -> dict[str, Any]:
    """Return the machine description stored with the results."""
    return {
        **pyperf_metadata(),
        "event_loop": event_loop(),
        "wrk": wrk_version(wrk),
        "packages": {name: _version(name) for name in PACKAGES},
        "git_commit": _run(["git", "rev-parse", "--short=12", "HEAD"]),
        "load_average_at_start": [round(value, 2) for value in os.getloadavg()],
    }
