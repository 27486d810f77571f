"""Source trees of installed releases, from their sdists: upstream test suites run against ours.

uvicorn's and FastAPI's sdists ship their tests; `source_tree` downloads the sdist of one
release (once, cached) and extracts only the parts asked for.
"""

from __future__ import annotations

import hashlib
import json
import ssl
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from pathlib import Path

from scripts.uv_env import pip_configuration

# PEP 691's JSON form of the simple index: one small request lists a project's files with their
# hashes. `pip download --no-binary` would also build the sdist's metadata in an isolated
# environment (installing its build backend), which once stalled a CI run for minutes.
_SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"


def source_tree(project: str, release: str, wanted: tuple[str, ...], cache: Path) -> Path:
    """Return ``cache/<release>``, holding the members of the sdist that start with ``wanted``.

    Only ``wanted`` is extracted (tests, configuration), never the package itself, which must
    come from site-packages.
    """
    target = cache / release
    if (target / "pyproject.toml").exists():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache) as scratch:
        archive = download_sdist(project, release, Path(scratch))
        top = f"{project}-{release}/"
        with tarfile.open(archive) as sdist:
            members = [
                member
                for member in sdist.getmembers()
                if member.name.startswith(top)
                and member.name[len(top) :].startswith(wanted)
                and (member.isfile() or member.isdir())  # no links: a test tree needs none
            ]
            extract(sdist, members, Path(scratch))
        try:
            (Path(scratch) / top).rename(target)
        except OSError:
            # Another worker extracted the same release first: the rename is atomic, so a
            # complete tree is there.
            if not (target / "pyproject.toml").exists():
                raise
    return target


def download_sdist(project: str, release: str, dest: Path) -> Path:
    """Download the sdist of ``project`` ``release`` into ``dest``, checked against its sha256.

    From the JSON listing of pip's index with pip's CA certificate (both as pip is configured),
    three attempts with 30 s socket timeouts; with pip (``pip download``) where the index has no
    JSON listing.
    """
    configured = pip_configuration()
    index = configured.get("index-url", "https://pypi.org/simple").rstrip("/")
    cert = configured.get("cert", "")
    tls = ssl.create_default_context(
        cafile=cert if Path(cert).is_file() else None,
        capath=cert if cert and Path(cert).is_dir() else None,
    )
    filename = f"{project}-{release}.tar.gz"
    error: Exception | None = None
    for _ in range(3):
        try:
            listing = urllib.request.Request(
                f"{index}/{project}/", headers={"Accept": _SIMPLE_JSON}
            )
            with urllib.request.urlopen(listing, timeout=30, context=tls) as response:
                files = json.load(response)["files"]
            [entry] = [file for file in files if file["filename"] == filename]
            with urllib.request.urlopen(entry["url"], timeout=30, context=tls) as response:
                data = response.read()
        except (OSError, ValueError, KeyError) as caught:  # URLError and timeouts are OSErrors
            error = caught
            continue
        if hashlib.sha256(data).hexdigest() != entry["hashes"]["sha256"]:
            msg = f"{filename}: sha256 differs from the index's"
            raise RuntimeError(msg)
        (dest / filename).write_bytes(data)
        return dest / filename
    print(f"sdist: {error!r}; downloading {filename} with pip", file=sys.stderr)
    pip = [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check"]
    options = ["--no-deps", "--no-binary", ":all:", "--dest", str(dest)]
    subprocess.run([*pip, *options, f"{project}=={release}"], check=True)
    return dest / filename


def extract(archive: tarfile.TarFile, members: list[tarfile.TarInfo], dest: Path) -> None:
    """Extract regular files and directories of ``members`` below ``dest``, nothing else.

    Raises:
        ValueError: a member is absolute, climbs out with ``..``, or is a link or device.
    """
    # Refuse first, on every Python: tarfile's data filter would not raise for an absolute
    # name (it strips the leading slash). The filter itself came with Python 3.12 and was
    # backported to 3.11.4 and 3.10.12 (CVE-2007-4559, gh-102950); Debian 12's 3.11.2 lacks it.
    for member in members:
        name = Path(member.name)
        if name.is_absolute() or ".." in name.parts or not (member.isfile() or member.isdir()):
            raise ValueError(f"refusing to extract {member.name!r} from {archive.name!r}")
    if hasattr(tarfile, "data_filter"):
        archive.extractall(dest, members=members, filter="data")
    else:
        archive.extractall(dest, members=members)
