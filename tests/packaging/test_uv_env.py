"""scripts/uv_env.py gives uv the configuration pip reads, in a clean environment (``env -i``).

The packages live only on local indexes and find-links directories named in a pip
configuration file, and uv runs offline: it finds them only through what the script
translated, and it must pick the very versions pip picks.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.paths import ROOT

UV_ENV = ROOT / "scripts" / "uv_env.py"
UV = Path(sys.executable).with_name("uv")

# name: the versions on each location; pip's configuration names every location.
PACKAGES = {
    "probe-index": {"index": ["1.0"]},
    # pip takes the best version of every index, uv's default only the first index's.
    "probe-extra": {"extra": ["1.0"], "index": ["2.0"]},
    "probe-links": {"links-1": ["1.0"]},
    "probe-more-links": {"links-2": ["1.0"]},
    "probe-constrained": {"links-1": ["1.0", "2.0"]},
}
EXPECTED = {
    "probe-index": "1.0",
    "probe-extra": "2.0",
    "probe-links": "1.0",
    "probe-more-links": "1.0",
    "probe-constrained": "1.0",  # constraints.txt caps it below 2
}


def write_wheel(directory: Path, name: str, version: str) -> str:
    """A minimal pure-Python wheel of ``name`` ``version`` in ``directory``; its file name."""
    module = name.replace("-", "_")
    dist_info = f"{module}-{version}.dist-info"
    files = {
        f"{module}/__init__.py": "",
        f"{dist_info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{dist_info}/WHEEL": "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    files[f"{dist_info}/RECORD"] = "".join(f"{path},,\n" for path in [*files, "RECORD"])
    filename = f"{module}-{version}-py3-none-any.whl"
    directory.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(directory / filename, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    return filename


def write_locations(base: Path) -> None:
    """The two simple indexes (PEP 503 pages) and the two find-links directories."""
    for name, locations in PACKAGES.items():
        for location, versions in locations.items():
            if location.startswith("links"):
                for version in versions:
                    write_wheel(base / location, name, version)
                continue
            project = base / location / name
            links = [write_wheel(project, name, version) for version in versions]
            anchors = "".join(f'<a href="{link}">{link}</a>\n' for link in links)
            (project / "index.html").write_text(
                f"<!DOCTYPE html><html><body>\n{anchors}</body></html>\n"
            )


@pytest.fixture
def clean_environment(tmp_path: Path) -> dict[str, str]:
    """``env -i`` with PATH, HOME and a pip configuration file naming the local locations."""
    write_locations(tmp_path)
    (tmp_path / "constraints.txt").write_text("probe-constrained<2\n")
    config = tmp_path / "pip.conf"
    config.write_text(
        "[global]\n"
        f"index-url = {(tmp_path / 'index').as_uri()}\n"
        f"extra-index-url = {(tmp_path / 'extra').as_uri()}\n"
        f"find-links = {tmp_path / 'links-1'} {tmp_path / 'links-2'}\n"
        f"constraint = {tmp_path / 'constraints.txt'}\n"
        "trusted-host = 192.0.2.1 198.51.100.1\n"
        "[install]\n"
        "timeout = 7.5\n"
    )
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path / "home"),
        "PIP_CONFIG_FILE": str(config),
        "PIP_CERT": str(tmp_path / "ca.pem"),
        "PIP_RETRIES": "4",
    }


def uv_environment(environ: dict[str, str]) -> dict[str, str]:
    done = subprocess.run(
        [sys.executable, str(UV_ENV)], env=environ, capture_output=True, text=True, check=True
    )
    return dict(line.split("=", 1) for line in done.stdout.splitlines())


def test_uv_gets_each_setting_pip_reads(clean_environment: dict[str, str], tmp_path: Path) -> None:
    uv = uv_environment(clean_environment)
    assert uv["UV_DEFAULT_INDEX"] == (tmp_path / "index").as_uri()
    assert uv["UV_INDEX"] == (tmp_path / "extra").as_uri()
    assert uv["UV_FIND_LINKS"] == f"{tmp_path / 'links-1'},{tmp_path / 'links-2'}"
    assert uv["UV_CONSTRAINT"] == str(tmp_path / "constraints.txt")
    assert uv["UV_INSECURE_HOST"] == "192.0.2.1 198.51.100.1"
    assert uv["SSL_CERT_FILE"] == str(tmp_path / "ca.pem")  # from PIP_CERT
    assert uv["UV_HTTP_TIMEOUT"] == "8"  # from the [install] section, whole seconds
    assert uv["UV_HTTP_RETRIES"] == "4"
    assert uv["UV_INDEX_STRATEGY"] == "unsafe-best-match"


def test_lists_already_in_the_environment_are_extended(
    clean_environment: dict[str, str], tmp_path: Path
) -> None:
    uv = uv_environment({**clean_environment, "UV_CONSTRAINT": "lowest.txt"})
    assert uv["UV_CONSTRAINT"] == f"lowest.txt {tmp_path / 'constraints.txt'}"


def test_an_option_uv_cannot_take_is_refused_by_name(clean_environment: dict[str, str]) -> None:
    done = subprocess.run(
        [sys.executable, str(UV_ENV), "true"],
        env={**clean_environment, "PIP_NO_INDEX": "1"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 3
    assert "pip's configuration sets no-index" in done.stderr


VERSIONS = """
import importlib.metadata, json, sys
print(json.dumps({name: importlib.metadata.version(name) for name in sys.argv[1:]}))
"""


def installed_versions(python: Path) -> dict[str, str]:
    done = subprocess.run(
        [str(python), "-c", VERSIONS, *PACKAGES], capture_output=True, text=True, check=True
    )
    versions: dict[str, str] = json.loads(done.stdout)
    return versions


def test_uv_installs_what_pip_would_from_where_only_pip_is_configured(
    clean_environment: dict[str, str], tmp_path: Path
) -> None:
    if not UV.exists():
        pytest.skip(f"no uv beside {sys.executable} (scripts/bootstrap installs it)")
    target = tmp_path / "target"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(target)], check=True)
    python = target / "bin" / "python"
    environ = {**clean_environment, "UV_OFFLINE": "1", "UV_CACHE_DIR": str(tmp_path / "cache")}
    del environ["PIP_CERT"]  # a certificate file that does not exist: nothing goes online
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet"]
    report = subprocess.run(
        [*pip, "--dry-run", "--report", "-", *PACKAGES],
        env=environ,
        capture_output=True,
        text=True,
        check=True,
    )
    chosen = {
        item["metadata"]["name"]: item["metadata"]["version"]
        for item in json.loads(report.stdout)["install"]
    }
    assert chosen == EXPECTED  # what pip itself installs from this configuration

    command = [str(UV), "pip", "install", "--quiet", "--python", str(python), *PACKAGES]
    subprocess.run([sys.executable, str(UV_ENV), *command], env=environ, check=True)
    assert installed_versions(python) == EXPECTED
