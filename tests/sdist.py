"""Source trees of installed releases, from their sdists: upstream test suites run against ours.

uvicorn's and FastAPI's sdists ship their tests; `source_tree` downloads the sdist of one
release with pip (once, cached) and extracts only the parts asked for.
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path


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
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--disable-pip-version-check",
                "--no-deps",
                "--no-binary",
                ":all:",
                f"{project}=={release}",
                "--dest",
                scratch,
            ],
            check=True,
        )
        [archive] = Path(scratch).glob(f"{project}-*.tar.gz")
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
        (Path(scratch) / top).rename(target)
    return target


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
