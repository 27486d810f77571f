"""Each distribution builds alone, ships only itself, installs alone and is fit for PyPI.

The builds and the fresh virtualenvs come from ``scripts/release_check.py``, the
same command the release workflows run; the tests below then inspect the
artifacts and the installed environments on their own.
"""

from __future__ import annotations

import ast
import email.parser
import importlib.util
import json
import re
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from packaging.version import Version

from tests.paths import ROOT

RELEASE_CHECK = ROOT / "scripts" / "release_check.py"
PACKAGES = ("uvicorn_keepalive", "orjson_dispatch")

# What a user of one package must never receive: the other package and the
# dependencies only the other package needs.
FOREIGN = {
    "uvicorn_keepalive": {"orjson_dispatch", "orjson", "fastapi", "pydantic", "starlette"},
    "orjson_dispatch": {"uvicorn_keepalive", "uvicorn", "httptools"},
}
# The runtime dependencies each distribution declares: only what it imports.
RUNTIME_DEPENDENCIES = {
    "uvicorn_keepalive": {"uvicorn", "httptools"},
    "orjson_dispatch": {"orjson", "pydantic", "starlette"},
}


@dataclass(frozen=True)
class Release:
    package: str
    version: str
    wheel: Path
    sdist: Path
    venv_python: Path
    returncode: int  # of the release check
    output: str


def source_version(package: str) -> str:
    init = ROOT / package / "src" / package / "__init__.py"
    for node in ast.parse(init.read_text()).body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__version__" for t in targets):
                assert isinstance(node.value, ast.Constant), "__version__ is not a literal"
                assert isinstance(node.value.value, str)
                return node.value.value
    raise AssertionError(f"{init} has no __version__")


def tag_of(package: str) -> str:
    return f"{package.replace('_', '-')}-v{source_version(package)}"


@pytest.fixture(scope="module")
def releases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Release]:
    """Run the release check of both distributions once, side by side.

    Its verdict is test_release_check_passes; the other tests inspect what it
    built and installed on their own.
    """
    base = tmp_path_factory.mktemp("release")
    running = {
        package: subprocess.Popen(
            [
                *(sys.executable, str(RELEASE_CHECK), package),
                # A development version is checked as a build, without a tag to publish.
                *(() if Version(source_version(package)).is_devrelease else (tag_of(package),)),
                *("--outdir", str(base / package / "dist"), "--venv", str(base / package / "venv")),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for package in PACKAGES
    }
    results = {}
    for package, process in running.items():
        output, _ = process.communicate(timeout=300)
        dist = base / package / "dist"
        wheels, sdists = list(dist.glob("*.whl")), list(dist.glob("*.tar.gz"))
        venv_python = base / package / "venv/bin/python"
        assert len(wheels) == len(sdists) == 1, f"{package} did not build:\n{output}"
        assert venv_python.exists(), f"{package} was not installed:\n{output}"
        results[package] = Release(
            package,
            source_version(package),
            wheels[0],
            sdists[0],
            venv_python,
            process.returncode,
            output,
        )
    return results


@pytest.fixture(params=PACKAGES)
def release(request: pytest.FixtureRequest, releases: dict[str, Release]) -> Release:
    return releases[request.param]


def test_release_check_passes(release: Release) -> None:
    assert release.returncode == 0, release.output


def wheel_metadata(release: Release) -> email.message.Message:
    dist_info = f"{release.package}-{release.version}.dist-info"
    with zipfile.ZipFile(release.wheel) as archive:
        return email.parser.Parser().parsestr(archive.read(f"{dist_info}/METADATA").decode())


def test_build_names_the_artifacts_after_the_source_version(release: Release) -> None:
    assert release.wheel.name == f"{release.package}-{release.version}-py3-none-any.whl"
    assert release.sdist.name == f"{release.package}-{release.version}.tar.gz"


def test_wheel_holds_only_its_package_with_py_typed(release: Release) -> None:
    with zipfile.ZipFile(release.wheel) as archive:
        names = archive.namelist()
    dist_info = f"{release.package}-{release.version}.dist-info/"
    assert f"{release.package}/py.typed" in names
    assert f"{release.package}/__init__.py" in names
    assert [n for n in names if not n.startswith((f"{release.package}/", dist_info))] == []


def test_sdist_holds_sources_readme_changelog_and_license(release: Release) -> None:
    top = f"{release.package}-{release.version}/"
    with tarfile.open(release.sdist) as archive:
        names = {m.name.removeprefix(top) for m in archive.getmembers() if m.isfile()}
    assert {"pyproject.toml", "README.md", "CHANGELOG.md", "LICENSE", "PKG-INFO"} <= names
    assert f"src/{release.package}/py.typed" in names
    others = {n for n in names if "/" in n and not n.startswith(f"src/{release.package}/")}
    assert others == set(), "the sdist carries files of another package, tests or docs"


def test_metadata_declares_only_what_the_package_imports(release: Release) -> None:
    metadata = wheel_metadata(release)
    required = [r for r in metadata.get_all("Requires-Dist", []) if "extra ==" not in r]
    names = {re.split(r"[\s<>=!~;\[]", r, maxsplit=1)[0].lower() for r in required}
    assert names == RUNTIME_DEPENDENCIES[release.package]
    assert "Typing :: Typed" in metadata.get_all("Classifier", [])
    assert metadata["Requires-Python"] == ">=3.10"
    assert metadata["License-Expression"] == "MIT"
    assert metadata["Description-Content-Type"] == "text/markdown"
    readme = (ROOT / release.package / "README.md").read_text()
    assert str(metadata.get_payload()).strip() == readme.strip()


def test_twine_check_passes(release: Release) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "twine",
            "check",
            "--strict",
            str(release.sdist),
            str(release.wheel),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


PROBE = """
import importlib, importlib.metadata, json, sys
package = importlib.import_module(sys.argv[1])
extras = []  # public names that need an optional extra, which the bare install lacks
for name in package.__all__:  # imports lazy names too
    try:
        getattr(package, name)
    except ImportError as error:
        assert "pip install" in str(error), error  # the message must say how to get it
        extras.append(name)
print(json.dumps({
    "version": package.__version__,
    "metadata_version": importlib.metadata.version(sys.argv[1].replace("_", "-")),
    "all": package.__all__,
    "extras": extras,
    "file": package.__file__,
    "modules": sorted({m.partition(".")[0] for m in sys.modules}),
    "distributions": sorted(
        d.metadata["Name"].lower().replace("-", "_") for d in importlib.metadata.distributions()
    ),
}))
"""


@pytest.fixture
def installed(release: Release) -> dict[str, object]:
    done = subprocess.run(
        [str(release.venv_python), "-I", "-c", PROBE, release.package],
        capture_output=True,
        text=True,
        check=True,
    )
    probe: dict[str, object] = json.loads(done.stdout)
    return probe


def test_wheel_installs_alone_and_imports_from_the_virtualenv(
    release: Release, installed: dict[str, object]
) -> None:
    venv = release.venv_python.parent.parent
    assert str(installed["file"]).startswith(str(venv)), "imported from outside the virtualenv"
    assert release.package in installed["distributions"]  # type: ignore[operator]


def test_installed_wheel_pulls_none_of_the_other_packages_dependencies(
    release: Release, installed: dict[str, object]
) -> None:
    forbidden = FOREIGN[release.package]
    assert forbidden & set(installed["distributions"]) == set()  # type: ignore[call-overload]
    assert forbidden & set(installed["modules"]) == set()  # type: ignore[call-overload]
    # ... while the package's own dependencies did arrive from the index.
    assert RUNTIME_DEPENDENCIES[release.package] <= set(installed["distributions"])  # type: ignore[call-overload]


def test_version_is_the_wheels_version(release: Release, installed: dict[str, object]) -> None:
    assert installed["version"] == installed["metadata_version"] == release.version


def test_all_is_a_sorted_list(installed: dict[str, object]) -> None:
    names = installed["all"]
    assert isinstance(names, list)
    assert names == sorted(names)


def release_check_module() -> Any:
    spec = importlib.util.spec_from_file_location("release_check", RELEASE_CHECK)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["release_check"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("package", PACKAGES)
def test_the_changelog_agrees_with_the_version(package: str) -> None:
    """A development version has only Unreleased entries; a release has its dated section."""
    version = Version(source_version(package))
    changelog = (ROOT / package / "CHANGELOG.md").read_text()
    dated = re.findall(r"^## \[([^\]]+)\] - \d{4}-\d{2}-\d{2}$", changelog, re.MULTILINE)
    assert "\n## [Unreleased]\n" in changelog
    if version.is_devrelease:
        assert all(Version(d) < Version(version.base_version) for d in dated), dated
    else:
        assert dated[:1] == [str(version)]
    tags = re.findall(r"^\[([^\]]+)\]: \S+/releases/tag/", changelog, re.MULTILINE)
    assert set(tags) <= set(dated), "a tag link for a version with no dated section"


def test_release_check_refuses_to_publish_a_development_version() -> None:
    module = release_check_module()
    dev = module.Distribution("orjson_dispatch", "orjson-dispatch", "1.0.0.dev0")
    with pytest.raises(module.CheckFailedError, match="development version"):
        module.check_tag(dev, "orjson-dispatch-v1.0.0.dev0")


def test_release_check_rejects_a_tag_that_does_not_match_the_version() -> None:
    done = subprocess.run(
        [sys.executable, str(RELEASE_CHECK), "orjson_dispatch", "orjson-dispatch-v999.0.0"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    assert "orjson-dispatch-v999.0.0" in done.stderr
    assert f"expected the tag '{tag_of('orjson_dispatch')}'" in done.stderr


@pytest.mark.parametrize("package", PACKAGES)
def test_release_workflow_runs_the_release_check_on_its_own_tag(package: str) -> None:
    name = package.replace("_", "-")
    workflow = (ROOT / ".github" / "workflows" / f"release-{name}.yml").read_text()
    assert f"- '{name}-v*'" in workflow
    assert f'python scripts/release_check.py {package} "$GITHUB_REF_NAME"' in workflow
    assert "pypa/gh-action-pypi-publish" in workflow
    assert "id-token: write" in workflow


def test_workspace_root_is_never_published() -> None:
    # Read as text: tomllib only exists from Python 3.11 on.
    root = (ROOT / "pyproject.toml").read_text()
    classifiers = re.search(r"^classifiers = \[(.*?)\]", root, re.MULTILINE | re.DOTALL)
    assert classifiers is not None
    assert '"Private :: Do Not Upload"' in classifiers.group(1)
    assert "[build-system]" not in root
    assert re.search(r"^\[tool\.uv\]\npackage = false$", root, re.MULTILINE)


def test_ci_runs_the_same_command_as_a_developer() -> None:
    ci = (ROOT / ".github" / "workflows" / "ci.yml").read_text()
    assert re.search(r"^\s+run: sudo .* \.ci/run$", ci, re.MULTILINE)
    assert "workflow_call:" in ci  # the release workflows run it before publishing
    assert "exec scripts/test" in (ROOT / ".ci" / "run").read_text()
    for package in PACKAGES:
        name = package.replace("_", "-")
        release = (ROOT / ".github" / "workflows" / f"release-{name}.yml").read_text()
        assert "uses: ./.github/workflows/ci.yml" in release


def test_release_check_requires_a_dated_changelog_section_for_the_version() -> None:
    module = release_check_module()
    unreleased = module.Distribution("orjson_dispatch", "orjson-dispatch", "999.0.0")
    (problem,) = module.check_changelog(unreleased)
    assert "CHANGELOG.md has no dated section for 999.0.0" in problem


def test_only_fastapi_only_names_need_an_extra(
    release: Release, installed: dict[str, object]
) -> None:
    """Without FastAPI, every public name but the route class and its converter imports."""
    fastapi_only = ["DispatchRoute", "use_dispatch_routes"]
    expected = fastapi_only if release.package == "orjson_dispatch" else []
    assert installed["extras"] == expected
