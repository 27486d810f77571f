"""uvicorn's own HTTP protocol tests pass with Protocol and H11Protocol in place of its classes.

The tests come from the sdist of the installed uvicorn (downloaded once with pip, cached
in .cache/uvicorn-tests/<version>/) and run in a child pytest with uvicorn's pytest
configuration and the ``http_protocol_cls`` fixture of uvicorn_suite_conftest.py.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tarfile
from importlib.metadata import version
from pathlib import Path

import pytest

from tests.paths import ROOT
from tests.sdist import extract, source_tree
from tests.uvicorn_keepalive.child_pytest import run_pytest

HERE = Path(__file__).resolve().parent
CACHE = ROOT / ".cache" / "uvicorn-tests"

pytestmark = pytest.mark.slow


def uvicorn_tests(uvicorn_version: str) -> Path:
    """The directory holding uvicorn's tests/ and pyproject.toml for ``uvicorn_version``."""
    return source_tree("uvicorn", uvicorn_version, ("tests/", "pyproject.toml"), CACHE)


def test_uvicorn_http_protocol_suite() -> None:
    suite = uvicorn_tests(version("uvicorn"))
    shutil.copyfile(
        HERE / "uvicorn_suite_conftest.py", suite / "tests" / "protocols" / "conftest.py"
    )
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    returncode, report = run_pytest(
        sys.executable,
        "-v",
        "-o",
        "addopts=",
        # Plugins that our dev group installs and uvicorn's tests do not use (about 2 s of CPU).
        *("-p", "no:faker", "-p", "no:logfire", "-p", "no:pytest_logfire"),
        *("-p", "no:inline_snapshot"),
        "--rootdir",
        str(suite),
        "-c",
        str(suite / "pyproject.toml"),
        "tests/protocols/test_http.py",
        cwd=suite,
        env=env,
    )
    assert returncode == 0, report
    passed = re.findall(r"\[uvicorn_keepalive\.(H11Protocol|Protocol)\S*\] PASSED", report)
    assert passed.count("Protocol") > 50, report
    assert passed.count("H11Protocol") > 50, report
    assert "FAILED" not in report
    # The modules under test really were the installed ones, not copies from the sdist.
    assert not (suite / "uvicorn").exists()


@pytest.mark.parametrize("name", ["../escaped", "{tmp}/escaped"])
def test_extract_refuses_members_outside_the_destination(tmp_path: Path, name: str) -> None:
    archive_path = tmp_path / "archive.tar"
    with tarfile.open(archive_path, "w") as archive:
        archive.addfile(tarfile.TarInfo(name.format(tmp=tmp_path)))
    (tmp_path / "dest").mkdir()
    with tarfile.open(archive_path) as archive, pytest.raises(ValueError, match="refusing"):
        extract(archive, archive.getmembers(), tmp_path / "dest")
    assert not (tmp_path / "escaped").exists()
