"""scripts/bootstrap is idempotent: a second run with installed groups does nothing."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STAMP = ROOT / ".venv" / ".bootstrap-stamp"
PYPROJECTS = [
    "pyproject.toml",
    "uvicorn_keepalive/pyproject.toml",
    "orjson_dispatch/pyproject.toml",
]


def recorded_groups() -> list[str]:
    """The groups of a stamp that matches the current pyproject files, else skip."""
    if not STAMP.is_file():
        pytest.skip(".venv was not made by scripts/bootstrap (no stamp)")
    digest = hashlib.sha256(b"".join((ROOT / p).read_bytes() for p in PYPROJECTS)).hexdigest()
    recorded_hash, _, groups = STAMP.read_text().strip().partition("-")
    if recorded_hash != digest:
        pytest.skip("a pyproject.toml changed since the last scripts/bootstrap")
    return groups.split(",")


@pytest.mark.parametrize("subset", ["first", "all"])
def test_bootstrap_with_installed_groups_does_nothing(subset: str) -> None:
    groups = recorded_groups()
    before = STAMP.read_text()
    done = subprocess.run(
        [str(ROOT / "scripts" / "bootstrap"), *(groups[:1] if subset == "first" else groups)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""  # "bootstrap: installing ..." would mean work was done
    assert STAMP.read_text() == before
