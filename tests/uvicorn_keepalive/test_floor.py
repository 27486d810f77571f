"""The oldest uvicorn (and httptools) that uvicorn_keepalive/pyproject.toml declares still works.

A second virtualenv, .venv-floor/ (built once, rebuilt when the floors change), holds those
versions; the tests that drive uvicorn (real servers, the CLI, uvicorn.run with workers) run
there in a child pytest, against the package's source tree.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.version import Version

from tests.paths import ROOT
from tests.uvicorn_keepalive.child_pytest import run_pytest

HERE = Path(__file__).resolve().parent
VENV = ROOT / ".venv-floor"
PYPROJECT = ROOT / "uvicorn_keepalive" / "pyproject.toml"

pytestmark = pytest.mark.slow


def floor(distribution: str) -> str:
    """The version after ``>=`` in the distribution's dependency on ``distribution``."""
    match = re.search(rf'"{distribution}>=([\d.]+)"', PYPROJECT.read_text())
    assert match, f"no {distribution}>= floor in {PYPROJECT}"
    return match[1]


def requirements() -> list[str]:
    pins = [f"uvicorn=={floor('uvicorn')}"]
    # httptools publishes wheels for the Pythons of its day only; on a newer Python its
    # floor would be compiled from source, so the newest release stands in there.
    if sys.version_info < (3, 13):
        pins.append(f"httptools=={floor('httptools')}")
    tools = ["pytest>=8.3", "pytest-timeout>=2.3", "uvloop>=0.19", "trustme>=1.1", "packaging"]
    return [*pins, *tools]


def floor_python() -> Path:
    python = VENV / "bin" / "python"
    stamp = VENV / "requirements.txt"
    wanted = "\n".join(requirements()) + "\n"
    if python.exists() and stamp.exists() and stamp.read_text() == wanted:
        return python
    shutil.rmtree(VENV, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "virtualenv", "--quiet", str(VENV)], check=True)
    # With the uv that scripts/bootstrap installs beside this Python, given pip's configuration
    # by scripts/uv_env.py (uv reads none of it), where that works; else with pip.
    uv = Path(sys.executable).with_name("uv")
    uv_env = [sys.executable, str(ROOT / "scripts" / "uv_env.py"), str(uv), "pip", "install"]
    command = [*uv_env, "--quiet", "--compile-bytecode", "--python", str(python), *requirements()]
    if not (uv.exists() and subprocess.run(command, check=False).returncode == 0):
        pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        subprocess.run([*pip, *requirements()], check=True)
    stamp.write_text(wanted)
    return python


def test_real_servers_and_cli_on_the_floor_versions() -> None:
    python = floor_python()
    installed = subprocess.run(
        [str(python), "-c", "import uvicorn, httptools; print(uvicorn.__version__)"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    assert Version(installed) == Version(floor("uvicorn"))
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "uvicorn_keepalive" / "src"), str(ROOT)]),
        # The CLI tests start "python -m uvicorn" with the interpreter running them.
        "PATH": os.pathsep.join([str(VENV / "bin"), os.environ.get("PATH", "")]),
    }
    returncode, report = run_pytest(
        python,
        "-q",
        "tests/uvicorn_keepalive/test_server.py",
        "tests/uvicorn_keepalive/test_processes.py",
        "-k",
        "not gunicorn",
        cwd=ROOT,
        env=env,
    )
    assert returncode == 0, report
    assert re.search(r"\b\d{2,} passed\b", report), report
    assert "skipped" not in report, report
