"""scripts/bootstrap is idempotent; scripts/test-versions pins the floors the pyprojects declare."""

from __future__ import annotations

import hashlib
import re
import subprocess

import pytest
from packaging.version import Version

from tests.paths import ROOT

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


def declared_floors() -> dict[str, str]:
    """Every ``name>=version`` floor in the pyproject files (the distributions' and the groups')."""
    floors: dict[str, str] = {}
    for path in PYPROJECTS:
        for name, floor in re.findall(
            r'"([A-Za-z][\w.-]*)(?:\[[^]]*\])?>=([\d.]+)', (ROOT / path).read_text()
        ):
            floors.setdefault(name.lower(), floor)
    return floors


def test_lowest_constraints_pin_the_declared_floors() -> None:
    pins = dict(
        re.findall(
            r"^([\w.-]+)==([\d.]+)", (ROOT / "scripts/constraints-lowest.txt").read_text(), re.M
        )
    )
    floors = declared_floors()
    assert set(pins) == {"uvicorn", "httptools", "fastapi", "starlette", "pydantic", "orjson"}
    for name, pin in pins.items():
        if name == "starlette":
            # The lowest FastAPI (0.115.0) requires starlette>=0.37.2, above our 0.37.
            assert Version(pin) >= Version(floors[name]), name
        else:
            assert Version(pin) == Version(floors[name]), (name, pin, floors[name])


def test_test_versions_refuses_an_unknown_set() -> None:
    done = subprocess.run(
        [str(ROOT / "scripts" / "test-versions"), "oldest"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 2
    assert "usage: scripts/test-versions lowest|newest" in done.stderr
