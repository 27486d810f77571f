"""Describe the machine and the software a benchmark ran on."""

import os
import platform
import subprocess
import sys
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
    "orjson-dispatch",
    "uvicorn-keepalive",
)


def _first(path: str, key: str) -> str:
    """Return the value of the first ``key: value`` or ``key=value`` line of a file."""
    try:
        lines = Path(path).read_text().splitlines()
    except OSError:
        return "unknown"
    for line in lines:
        name, sep, value = line.partition(":" if ":" in line else "=")
        if sep and name.strip() == key:
            return value.strip().strip('"')
    return "unknown"


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


def _git_commit() -> str:
    completed = subprocess.run(
        ["git", "rev-parse", "--short=12", "HEAD"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    return completed.stdout.strip() or "unknown"


def describe(wrk: str) -> dict[str, Any]:
    """Return the machine description stored with the results."""
    return {
        "cpu_model": _first("/proc/cpuinfo", "model name"),
        "nproc": os.cpu_count(),
        "usable_cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "memory": _first("/proc/meminfo", "MemTotal"),
        "kernel": f"{platform.system()} {platform.release()}",
        "os": _first("/etc/os-release", "PRETTY_NAME"),
        "python": f"{platform.python_implementation()} {sys.version.split()[0]}",
        "event_loop": event_loop(),
        "wrk": wrk_version(wrk),
        "packages": {name: _version(name) for name in PACKAGES},
        "git_commit": _git_commit(),
        "load_average_at_start": [round(value, 2) for value in os.getloadavg()],
    }
