"""The virtualenvs of documented installs: only what the docs tell a user to install.

``.venv-docs`` holds the documented install (getting started: both packages from their folders,
orjson-dispatch with its ``[fastapi]`` extra, and ``httpx2`` for FastAPI's ``TestClient``) and
nothing else: the documentation's examples run there. An example that needs more says so where
it is shown, in a ``pip install`` line of its own section; it runs in ``.venv-docs+<package>+...``,
the same install plus those. ``.venv-starlette`` holds orjson-dispatch without its extra, as a
Starlette app installs it (``STARLETTE``): no FastAPI.

Each environment is made on first use (by the tests, under ``scripts/test`` as in CI, with uv
under pip's configuration as ``scripts/bootstrap`` installs, else pip) and reused until a
``pyproject.toml`` or its requirements change; a lock file keeps two test workers from making
one environment at once. ``python -m tests.docs.environments [PACKAGE...]`` makes one by hand
and prints its interpreter.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from tests.paths import ROOT

#: What getting started installs. Editable: the same dependencies as ``pip install ./folder``,
#: and the sources under test without a rebuild.
DOCUMENTED = ("-e", "./uvicorn_keepalive", "-e", "./orjson_dispatch[fastapi]", "httpx2")
#: orjson-dispatch as a Starlette app installs it (its README: ``pip install orjson-dispatch``),
#: and ``httpx2`` for Starlette's ``TestClient``.
STARLETTE = ("-e", "./orjson_dispatch", "httpx2")
#: Each install by the name of its environment.
INSTALLS = {".venv-docs": DOCUMENTED, ".venv-starlette": STARLETTE}


def _uv() -> Path | None:
    """Return the uv next to the running interpreter (``scripts/bootstrap`` installs it)."""
    uv = Path(sys.executable).with_name("uv")
    return uv if uv.is_file() else None


def environment(extras: Sequence[str] = (), *, base: str = ".venv-docs") -> Path:
    """Return the interpreter of the install ``base`` names plus ``extras``, made if missing."""
    name = "+".join([base, *(re.sub(r"[^\w.-]", "_", extra) for extra in sorted(extras))])
    venv = ROOT / name
    requirements = [*INSTALLS[base], *sorted(extras)]
    pyprojects = [ROOT / d / "pyproject.toml" for d in ("uvicorn_keepalive", "orjson_dispatch")]
    wanted = hashlib.sha256(b"".join(p.read_bytes() for p in pyprojects)).hexdigest()
    wanted += " " + " ".join(requirements)
    python, stamp = venv / "bin" / "python", venv / ".docs-stamp"
    (ROOT / ".cache").mkdir(exist_ok=True)  # ignored by git, as the virtualenvs are
    with (ROOT / ".cache" / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if stamp.is_file() and stamp.read_text() == wanted and python.is_file():
            return python
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
        uv, env = _uv(), {**os.environ, "VIRTUAL_ENV": str(venv)}
        uv_env = [sys.executable, str(ROOT / "scripts" / "uv_env.py")]
        install = [*uv_env, str(uv), "pip", "install", "--quiet", "--python", str(python)]
        pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet"]
        done = (
            subprocess.run([*install, *requirements], cwd=ROOT, env=env, check=False)
            if uv
            else None
        )
        if done is None or done.returncode != 0:
            subprocess.run([*pip, *requirements], cwd=ROOT, check=True)
        stamp.write_text(wanted)
    return python


if __name__ == "__main__":
    print(environment(sys.argv[1:]))
