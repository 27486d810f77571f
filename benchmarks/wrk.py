"""Run wrk, the C HTTP load generator, and parse what it reports.

wrk comes from the Debian package ``wrk`` (``scripts/system-packages`` installs it). Its Lua
``done`` hook (``wrk_report.lua``) prints the summary as one JSON line, which is more precise
and easier to parse than wrk's human-readable output.
"""

import json
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_LUA = Path(__file__).with_name("wrk_report.lua")
_MARKER = "BENCH_JSON "

INSTALL_HINT = (
    "wrk is not installed: run scripts/system-packages (as root: apt-get install wrk on "
    "Debian/Ubuntu), or install wrk with your package manager (brew install wrk on macOS)"
)


class WrkError(RuntimeError):
    """wrk is missing, failed, or printed no summary."""


@dataclass(frozen=True)
class WrkResult:
    """One wrk run.

    Attributes:
        requests: Completed requests.
        duration_s: The measured wall time in seconds.
        bytes: Bytes read, headers included.
        errors: wrk's error counters: connect, read, write, status (non-2xx/3xx), timeout.
        latency_us: Latency of the completed requests in microseconds: mean, max, p50, p90, p99.
    """

    requests: int
    duration_s: float
    bytes: int
    errors: dict[str, int]
    latency_us: dict[str, float]

    @property
    def rps(self) -> float:
        """Completed requests per second."""
        return self.requests / self.duration_s if self.duration_s > 0 else 0.0

    @property
    def error_count(self) -> int:
        """All errors together."""
        return sum(self.errors.values())


def require_wrk() -> str:
    """Return the path of the wrk executable.

    Raises:
        WrkError: wrk is not on PATH; the message says how to install it.
    """
    path = shutil.which("wrk")
    if path is None:
        raise WrkError(INSTALL_HINT)
    return path


def wrk_command(
    wrk: str, url: str, *, connections: int, duration_s: int, timeout_s: int, close: bool = False
) -> list[str]:
    """Return the wrk command line for one run.

    One wrk thread drives every connection: on a 2-core machine the server gets one core
    and the load generator the other. ``close`` adds ``Connection: close`` so that every
    request opens a new TCP connection (connection churn).
    """
    options = f"--threads 1 --connections {connections} --duration {duration_s}s"
    command = [wrk, *options.split(), "--timeout", f"{timeout_s}s", "--script", str(_LUA)]
    return [*command, *(["--header", "Connection: close"] if close else []), url]


def parse_wrk_output(stdout: str) -> WrkResult:
    """Parse the JSON summary line that ``wrk_report.lua`` prints.

    Raises:
        WrkError: No summary line was printed.
    """
    for line in stdout.splitlines():
        if line.startswith(_MARKER):
            raw: dict[str, Any] = json.loads(line[len(_MARKER) :])
            return WrkResult(
                requests=int(raw["requests"]),
                duration_s=raw["duration_us"] / 1e6,
                bytes=int(raw["bytes"]),
                errors={key: int(value) for key, value in raw["errors"].items()},
                latency_us={key: float(value) for key, value in raw["latency_us"].items()},
            )
    raise WrkError(f"wrk printed no summary line; its output was:\n{stdout}")


def run_wrk(wrk: str, url: str, **options: Any) -> WrkResult:
    """Run wrk against ``url`` (``options``: those of :func:`wrk_command`); return its summary.

    Raises:
        WrkError: wrk exited with an error or printed no summary.
    """
    command = wrk_command(wrk, url, **options)
    completed = subprocess.run(command, capture_output=True, text=True, check=False)
    if completed.returncode != 0:
        raise WrkError(
            f"{shlex.join(command)} exited with {completed.returncode}: {completed.stderr}"
        )
    return parse_wrk_output(completed.stdout)
