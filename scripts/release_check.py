"""Build one distribution and prove it is fit to publish.

Usage::

    python scripts/release_check.py PACKAGE [TAG] [--outdir DIR] [--venv DIR]

PACKAGE is a distribution folder (``uvicorn_keepalive`` or ``orjson_dispatch``).
TAG, when given (the release workflows pass the pushed tag), must read
``<distribution>-v<__version__>``, for example ``uvicorn-keepalive-v0.1.0``; it is
checked before anything is built.

The checks, in order; every failure is reported, then the exit status is 1:

1. ``__version__`` in ``src/<package>/__init__.py`` is a string literal; with a
   TAG, the version is a final release (a ``.devN`` version, such as the
   ``0.1.0.dev0`` of an unreleased tree, is never published) and ``CHANGELOG.md``
   has a dated section for it (``## [0.1.0] - 2026-12-01``, Keep a Changelog).
2. ``python -m build`` (sdist, then the wheel built from the sdist) yields
   exactly one sdist and one wheel named after the distribution and version.
3. The wheel holds only ``<package>/`` (with ``py.typed``) and its
   ``.dist-info``; the sdist holds only ``src/<package>/``, ``pyproject.toml``,
   ``README.md``, ``CHANGELOG.md``, ``LICENSE``, ``PKG-INFO`` (and hatchling's
   copy of ``.gitignore``).
4. The metadata names the version, ``Typing :: Typed`` and a Markdown README
   whose links are all absolute (PyPI cannot resolve relative links).
5. ``twine check --strict`` passes on both files.
6. The wheel, installed alone (its dependencies from the index) into a fresh
   virtualenv, imports; ``__version__`` equals the wheel's version; ``__all__``
   is sorted and every name in it exists; neither the other package nor any
   dependency of the other package is installed or imported.

The same command runs in the test suite (tests/packaging) and in the release
workflows (.github/workflows/release-*.yml).
"""

from __future__ import annotations

import argparse
import ast
import email.parser
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
UV = Path(sys.executable).with_name("uv")
UV_ENV = ROOT / "scripts" / "uv_env.py"

# What must never arrive with a distribution: the other package and the
# dependencies only the other package needs (a user of
# uvicorn-keepalive must not pull orjson or FastAPI, a user of orjson-dispatch
# must not pull uvicorn).
FOREIGN: dict[str, frozenset[str]] = {
    "uvicorn_keepalive": frozenset(
        {"orjson_dispatch", "orjson", "fastapi", "pydantic", "pydantic_core", "starlette"}
    ),
    "orjson_dispatch": frozenset({"uvicorn_keepalive", "uvicorn", "httptools", "uvloop"}),
}

SDIST_TOP_LEVEL = frozenset({"pyproject.toml", "README.md", "CHANGELOG.md", "LICENSE", "PKG-INFO"})
# hatchling copies the repository's .gitignore into every sdist so that a
# build from the sdist excludes the same files; it is harmless.
SDIST_ALLOWED = SDIST_TOP_LEVEL | {".gitignore"}

# A Markdown link or image whose target is not absolute: [text](target).
_RELATIVE_LINK = re.compile(r"!?\[[^\]]*\]\((?!https?://|mailto:|#)([^)\s]+)[^)]*\)")

# Runs inside the fresh virtualenv: import the package, report what it saw.
_PROBE = """
import importlib, importlib.metadata, json, sys
package = importlib.import_module(sys.argv[1])
names = getattr(package, "__all__", None)
def present(name):
    try:
        getattr(package, name)
    except AttributeError:
        return False
    except ImportError as error:  # a name that needs an optional extra must say which
        return "pip install" in str(error)
    return True
print(json.dumps({
    "version": getattr(package, "__version__", None),
    "all": names,
    "missing": [n for n in (names or []) if not present(n)],
    "modules": sorted({m.partition(".")[0] for m in sys.modules}),
    "distributions": sorted(
        d.metadata["Name"].lower().replace("-", "_") for d in importlib.metadata.distributions()
    ),
}))
"""


@dataclass(frozen=True)
class Distribution:
    """One distribution folder of the repository."""

    package: str  # import name and folder name, e.g. uvicorn_keepalive
    name: str  # distribution name, e.g. uvicorn-keepalive
    version: str  # __version__ as written in the source

    @property
    def normalized(self) -> str:
        """The name as it appears in file names (PEP 625 / wheel spec)."""
        return re.sub(r"[-_.]+", "_", self.name).lower()


class CheckFailedError(Exception):
    """A release check failed; the message says which and why."""


def read_distribution(package: str) -> Distribution:
    """Read the distribution's name and literal ``__version__`` from its folder."""
    folder = ROOT / package
    if not (folder / "pyproject.toml").is_file():
        known = ", ".join(sorted(FOREIGN))
        raise CheckFailedError(f"{package!r} is not a distribution folder (known: {known})")
    # The distribution is named after its folder (checked against the built
    # metadata in check_wheel).
    name = package.replace("_", "-")
    init = folder / "src" / package / "__init__.py"
    targets: list[ast.expr]
    for node in ast.parse(init.read_text()).body:
        if isinstance(node, ast.AnnAssign):
            targets, value = [node.target], node.value
        elif isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        else:
            continue
        if any(isinstance(t, ast.Name) and t.id == "__version__" for t in targets):
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                return Distribution(package, name, value.value)
            raise CheckFailedError(f"{init}: __version__ must be a string literal")
    raise CheckFailedError(f"{init}: no __version__")


def check_tag(dist: Distribution, tag: str) -> None:
    """Fail unless ``tag`` is ``<distribution>-v<version>`` and the version is not ``.devN``."""
    expected = f"{dist.name}-v{dist.version}"
    if tag != expected:
        raise CheckFailedError(
            f"tag {tag!r} does not match {dist.package}.__version__ = {dist.version!r}: "
            f"expected the tag {expected!r}"
        )
    if re.search(r"\.dev\d*$", dist.version):
        raise CheckFailedError(
            f"{dist.package}.__version__ = {dist.version!r} is a development version, which is "
            "never published: set the release's version and date its changelog section first"
        )


def check_changelog(dist: Distribution) -> list[str]:
    """Problems with the changelog entry of the version being released."""
    changelog = (ROOT / dist.package / "CHANGELOG.md").read_text()
    # Keep a Changelog: "## [0.1.0] - 2026-12-01".
    heading = re.compile(
        rf"^## \[{re.escape(dist.version)}\] - \d{{4}}-\d{{2}}-\d{{2}}$", re.MULTILINE
    )
    if heading.search(changelog):
        return []
    return [
        f"{dist.package}/CHANGELOG.md has no dated section for {dist.version} "
        f"('## [{dist.version}] - YYYY-MM-DD'): move its entries out of Unreleased"
    ]


def build(dist: Distribution, outdir: Path) -> tuple[Path, Path]:
    """Build the sdist and the wheel (from the sdist) into ``outdir``."""
    outdir.mkdir(parents=True, exist_ok=True)
    for stale in [
        *outdir.glob(f"{dist.normalized}-*.whl"),
        *outdir.glob(f"{dist.normalized}-*.tar.gz"),
    ]:
        stale.unlink()
    command = [sys.executable, "-m", "build", "--outdir", str(outdir), str(ROOT / dist.package)]
    run_with_uv_or_pip([*command, "--installer", "uv"], command)
    wheels = sorted(outdir.glob(f"{dist.normalized}-*.whl"))
    sdists = sorted(outdir.glob(f"{dist.normalized}-*.tar.gz"))
    if len(wheels) != 1 or len(sdists) != 1:
        raise CheckFailedError(f"expected one wheel and one sdist, got {wheels + sdists}")
    wheel, sdist = wheels[0], sdists[0]
    if not wheel.name.startswith(f"{dist.normalized}-{dist.version}-"):
        raise CheckFailedError(f"{wheel.name} does not carry version {dist.version}")
    if sdist.name != f"{dist.normalized}-{dist.version}.tar.gz":
        raise CheckFailedError(f"{sdist.name} is not {dist.normalized}-{dist.version}.tar.gz")
    return sdist, wheel


def check_wheel(dist: Distribution, wheel: Path) -> list[str]:
    """Problems with the wheel's file list and metadata."""
    problems = []
    dist_info = f"{dist.normalized}-{dist.version}.dist-info/"
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = email.parser.Parser().parsestr(archive.read(dist_info + "METADATA").decode())
    foreign = [n for n in names if not n.startswith((f"{dist.package}/", dist_info))]
    if foreign:
        problems.append(f"{wheel.name} holds files outside {dist.package}/: {foreign}")
    for required in ("__init__.py", "py.typed"):
        if f"{dist.package}/{required}" not in names:
            problems.append(f"{wheel.name} lacks {dist.package}/{required}")
    if metadata["Name"] != dist.name:
        problems.append(f"wheel metadata name {metadata['Name']} != {dist.name}")
    if metadata["Version"] != dist.version:
        problems.append(f"wheel metadata version {metadata['Version']} != {dist.version}")
    if "Typing :: Typed" not in metadata.get_all("Classifier", []):
        problems.append(f"{wheel.name} lacks the classifier 'Typing :: Typed'")
    if metadata["Description-Content-Type"] != "text/markdown":
        problems.append(f"{wheel.name}: the long description is not Markdown")
    relative = _RELATIVE_LINK.findall(str(metadata.get_payload()))
    if relative:
        problems.append(
            f"{dist.package}/README.md (the PyPI page) has relative links that PyPI "
            f"cannot resolve: {relative}"
        )
    return problems


def check_sdist(dist: Distribution, sdist: Path) -> list[str]:
    """Problems with the sdist's file list."""
    top = f"{dist.normalized}-{dist.version}/"
    with tarfile.open(sdist) as archive:
        files = [m.name for m in archive.getmembers() if m.isfile()]
    relative = [name.removeprefix(top) for name in files]
    problems = [
        f"{sdist.name}: {name} is outside {top}" for name in files if not name.startswith(top)
    ]
    unexpected = [
        r for r in relative if r not in SDIST_ALLOWED and not r.startswith(f"src/{dist.package}/")
    ]
    if unexpected:
        problems.append(f"{sdist.name} holds unexpected files: {unexpected}")
    missing = sorted(SDIST_TOP_LEVEL - set(relative))
    if missing:
        problems.append(f"{sdist.name} lacks {missing}")
    return problems


def check_installed_alone(dist: Distribution, wheel: Path, venv: Path) -> list[str]:
    """Install the wheel into a fresh virtualenv at ``venv`` and probe it."""
    shutil.rmtree(venv, ignore_errors=True)
    # No pip inside the new environment: uv, or the running pip, installs into it
    # (--python), which saves seeding a pip per environment.
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    run_with_uv_or_pip(
        [str(UV), "pip", "install", "--quiet", "--python", str(python), str(wheel)],
        [
            *(sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet"),
            *("--disable-pip-version-check", "--no-input", str(wheel)),
        ],
    )
    probe = json.loads(run([str(python), "-c", _PROBE, dist.package]))
    problems = []
    if probe["version"] != dist.version:
        problems.append(f"installed {dist.package}.__version__ = {probe['version']!r}")
    names = probe["all"]
    if not isinstance(names, list) or names != sorted(names):
        problems.append(f"{dist.package}.__all__ is not a sorted list: {names!r}")
    if probe["missing"]:
        problems.append(f"{dist.package}.__all__ names missing attributes: {probe['missing']}")
    for kind in ("modules", "distributions"):
        pulled = sorted(FOREIGN[dist.package] & set(probe[kind]))
        if pulled:
            what = "imports" if kind == "modules" else "installs"
            problems.append(f"{dist.name} {what} the other package's dependencies: {pulled}")
    return problems


def run_with_uv_or_pip(with_uv: list[str], with_pip: list[str]) -> str:
    """Run ``with_uv`` under pip's configuration where uv is installed and succeeds, else
    ``with_pip``; return its stdout or raise with its output.

    uv, beside this Python where scripts/bootstrap installs it, installs in a fraction of
    pip's time; scripts/uv_env.py gives it pip's index, certificate and constraints.
    """
    if UV.exists():
        try:
            return run([sys.executable, str(UV_ENV), *with_uv])
        except CheckFailedError as error:
            print(f"release-check: uv failed, pip takes over: {error}", file=sys.stderr)
    return run(with_pip)


def run(command: list[str]) -> str:
    """Run ``command``; return its stdout or raise with its output."""
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise CheckFailedError(
            f"{' '.join(command)} exited {done.returncode}\n{done.stdout}\n{done.stderr}"
        )
    return done.stdout


def release_check(package: str, tag: str | None, outdir: Path, venv: Path) -> list[str]:
    """Run every check; return the problems found (empty when fit to publish)."""
    dist = read_distribution(package)
    if tag is not None:
        check_tag(dist, tag)
    problems = [] if tag is None else check_changelog(dist)
    sdist, wheel = build(dist, outdir)
    problems += check_wheel(dist, wheel) + check_sdist(dist, sdist)
    problems += check_installed_alone(dist, wheel, venv)
    twine = [sys.executable, "-m", "twine", "check", "--strict", str(sdist), str(wheel)]
    try:
        run(twine)
    except CheckFailedError as error:
        problems.append(str(error))
    return problems


def main(argv: list[str] | None = None) -> int:
    """Command line entry point; exit status 0 when every check passed."""
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("package", choices=sorted(FOREIGN))
    parser.add_argument("tag", nargs="?", help="the release tag, <distribution>-v<version>")
    parser.add_argument("--outdir", type=Path, default=ROOT / "dist", help="default: dist/")
    parser.add_argument("--venv", type=Path, help="keep the test virtualenv here")
    args = parser.parse_args(argv)
    try:
        with tempfile.TemporaryDirectory() as scratch:
            venv = args.venv or Path(scratch) / "venv"
            problems = release_check(args.package, args.tag, args.outdir.resolve(), venv)
    except CheckFailedError as error:
        problems = [str(error)]
    for problem in problems:
        print(f"release-check: {args.package}: {problem}", file=sys.stderr)
    if problems:
        return 1
    print(f"release-check: {args.package}: ok, ready to publish from {args.outdir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
