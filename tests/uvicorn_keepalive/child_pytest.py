"""A pytest run in a child process, for the tests that drive another environment's pytest."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path


def run_pytest(
    python: str | Path, *args: str, cwd: Path, env: Mapping[str, str]
) -> tuple[int, str]:
    """Run ``python -m pytest -p no:cacheprovider *args``: its exit code and its whole output."""
    result = subprocess.run(
        [str(python), "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return result.returncode, result.stdout + result.stderr
