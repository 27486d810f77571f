"""The documentation site builds strictly and its API reference covers every public name."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.paths import ROOT


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site as ``mkdocs build --strict`` builds it: scripts/test's build (``DOCS_SITE``,
    which holds a site only when that build succeeded), else one built here."""
    built = os.environ.get("DOCS_SITE")
    if built and (Path(built) / "index.html").is_file():
        return Path(built)
    site_dir = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site_dir)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return site_dir


@pytest.mark.parametrize("package", ["uvicorn_keepalive", "orjson_dispatch"])
def test_api_reference_documents_every_public_name(site: Path, package: str) -> None:
    page = (site / "reference" / package / "index.html").read_text()
    public = [n for n in importlib.import_module(package).__all__ if not n.startswith("__")]
    assert public
    missing = [name for name in public if f'id="{package}.{name}"' not in page]
    assert missing == [], f"the API reference of {package} lacks {missing}"


def test_every_page_in_the_nav_is_built(site: Path) -> None:
    for page in ["getting-started", "keepalive", "dispatch", "benchmarks", "contributing"]:
        assert (site / page / "index.html").is_file()
    for changelog in ["uvicorn-keepalive", "orjson-dispatch"]:
        html = (site / "changelog" / changelog / "index.html").read_text()
        assert "Keep a Changelog" in html  # the distribution's CHANGELOG.md was included
