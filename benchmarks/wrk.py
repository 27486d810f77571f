"""Run wrk, the C HTTP load generator, and read the JSON summary its Lua hook prints.

wrk comes from the Debian package ``wrk`` (``scripts/system-packages`` installs it); the
``done`` hook of ``wrk_report.lua`` prints exact counts and latencies, easier to parse than
wrk's own report.
"""

import json
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

_LUA = Path(__file__).with_name("wrk_report.lua")
_MARKER = "BENCH_JSON "


class WrkError(RuntimeError):
    """wrk is missing, failed, or printed no summary."""


def require_wrk() -> str:
    """Return the path of the wrk executable; WrkError saying how to install it if missing."""
    path = shutil.which("wrk")
    if path is None:
        raise WrkError(
            "wrk is not installed: run scripts/system-packages (as root: apt-get install wrk on "
            "Debian/Ubuntu), or install wrk with your package manager (brew install wrk on macOS)"
        )
    return path


def wrk_command(
    wrk: str, url: str, *, connections: int, duration_s: int, timeout_s: int, close: bool = False
) -> list[str]:
    """Return the wrk command line for one run.

    One wrk thread drives every connection: on 2 cores the server gets one, wrk the other.
    ``close`` sends ``Connection: close``: a new TCP connection per request.
    """
    options = f"--threads 1 --connections {connections} --duration {duration_s}s"
    command = [wrk, *options.split(), "--timeout", f"{timeout_s}s", "--script", str(_LUA)]
    return [*command, *(["--header", "Connection: close"] if close else []), url]


def parse_wrk_output(stdout: str) -> dict[str, Any]:
    """Return the summary ``wrk_report.lua`` printed, with ``duration_s`` and ``rps`` added."""
    for line in stdout.splitlines():
        if line.startswith(_MARKER):
            found: dict[str, Any] = json.loads(line[len(_MARKER) :])
            found["duration_s"] = found.pop("duration_us") / 1e6
            found["rps"] = found["requests"] / found["duration_s"] if found["duration_s"] else 0.0
            return found
    raise WrkError(f"wrk printed no summary line; its output was:\n{stdout}")


def run_wrk(wrk: str, url: str, **options: Any) -> dict[str, Any]:
    """Run wrk on ``url`` (``options``: those of :func:`wrk_command`); return its summary."""
    command = wrk_command(wrk, url, **options)
    completed = subprocess.run(command, capture_output=True, text=True, check=False)
    if completed.returncode != 0:
        raise WrkError(f"{shlex.join(command)} exited {completed.returncode}: {completed.stderr}")
    return parse_wrk_output(completed.stdout)
