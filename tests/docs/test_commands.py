"""The shell commands the README and the docs tell people to run name scripts that exist."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.paths import ROOT

DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
_SHELL_BLOCK = re.compile(r"^```(?:bash|console|sh|shell)\n(.*?)^```", re.MULTILINE | re.DOTALL)
_SCRIPT = re.compile(r"(?:^|[\s$;&|(])((?:\./)?(?:scripts|\.ci)/[\w.-]+)")


def scripts_named() -> list[tuple[str, str]]:
    named = []
    for path in DOCUMENTS:
        for block in _SHELL_BLOCK.findall(path.read_text()):
            for script in _SCRIPT.findall(block):
                named.append((str(path.relative_to(ROOT)), script.removeprefix("./")))
    return sorted(set(named))


def test_the_quick_start_is_exactly_the_two_scripts() -> None:
    readme = (ROOT / "README.md").read_text()
    quick_start = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    (block,) = _SHELL_BLOCK.findall(quick_start)
    commands = [line.split("#", 1)[0].strip() for line in block.splitlines()]
    assert [c for c in commands if c] == ["scripts/demo", "scripts/test"]


@pytest.mark.parametrize(("document", "script"), scripts_named())
def test_named_script_exists_and_is_executable(document: str, script: str) -> None:
    path = ROOT / script
    assert path.is_file(), f"{document} names {script}, which does not exist"
    assert os.access(path, os.X_OK) or path.suffix == ".py", f"{script} is not executable"


def test_the_readme_names_every_package_scripts_test_installs() -> None:
    script = (ROOT / "scripts" / "system-packages").read_text()
    packages = set(re.findall(r"\[[\w-]+\]=([\w-]+)", script))
    assert packages >= {"iproute2", "iptables", "procps", "curl", "wrk"}
    readme = (ROOT / "README.md").read_text()
    for package in packages:
        assert f"| `{package}` |" in readme, f"README.md does not say why {package} is installed"


# Where a newcomer reads how to install: each gives the form that works from a clone beside
# the published one.
INSTALL_DOCUMENTS = [
    ROOT / "README.md",
    ROOT / "uvicorn_keepalive" / "README.md",
    ROOT / "orjson_dispatch" / "README.md",
    ROOT / "docs" / "getting-started.md",
]
DISTRIBUTIONS = {"uvicorn-keepalive": "uvicorn_keepalive", "orjson-dispatch": "orjson_dispatch"}
_PIP_LINE = re.compile(r"^pip (?:install|wheel) .*$", re.MULTILINE)
_FOLDER = re.compile(r"'?\./([\w-]+)(?:\[([\w,-]+)\])?'?")


def pip_lines(document: Path) -> list[str]:
    return [
        line.split("#", 1)[0]
        for block in _SHELL_BLOCK.findall(document.read_text())
        for line in _PIP_LINE.findall(block)
    ]


@pytest.mark.parametrize("document", INSTALL_DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_package_installed_from_pypi_is_also_installed_from_its_folder(
    document: Path,
) -> None:
    lines = pip_lines(document)
    published = {name for line in lines for name in DISTRIBUTIONS if name in line}
    assert published, f"{document.name} gives no install command"
    local = {folder for line in lines for folder, _ in _FOLDER.findall(line)}
    for name in published:
        assert DISTRIBUTIONS[name] in local, f"no `pip install ./{DISTRIBUTIONS[name]}`"


@pytest.mark.parametrize("document", INSTALL_DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_installed_folders_are_distributions_with_the_extras_named(document: Path) -> None:
    for line in pip_lines(document):
        for folder, extras in _FOLDER.findall(line):
            pyproject = (ROOT / folder / "pyproject.toml").read_text()
            for extra in filter(None, extras.split(",")):
                assert re.search(rf"^{extra} = \[", pyproject, re.MULTILINE), (folder, extra)
