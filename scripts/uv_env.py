"""Run uv with the package indexes, certificate and constraints that pip would use.

Usage::

    python scripts/uv_env.py [COMMAND [ARGUMENTS...]]

uv reads none of pip's configuration (``pip.conf`` files, ``PIP_*`` variables), so on a
machine whose index, CA certificate or constraints are configured for pip, a bare ``uv pip
install`` goes to pypi.org with its own certificates and fails where pip works. This script
asks the running interpreter's pip what it would use (``python -m pip config list``: the
``[global]`` section, then ``[install]``, then ``PIP_*`` variables, later ones winning, as pip
applies them) and hands the same settings to uv as its environment variables:

=================  =============================================================
pip                uv
=================  =============================================================
index-url          UV_DEFAULT_INDEX
extra-index-url    UV_INDEX
find-links         UV_FIND_LINKS
constraint         UV_CONSTRAINT
trusted-host       UV_INSECURE_HOST
cert               SSL_CERT_FILE (SSL_CERT_DIR for a directory); without it,
                   UV_NATIVE_TLS: pip trusts the system's certificate store
client-cert        SSL_CLIENT_CERT
timeout            UV_HTTP_TIMEOUT (whole seconds, rounded up)
retries            UV_HTTP_RETRIES
proxy              HTTP_PROXY and HTTPS_PROXY
pre                UV_PRERELEASE=allow
=================  =============================================================

and ``UV_INDEX_STRATEGY=unsafe-best-match``: pip takes the best version found on any index,
uv by default only looks at the first index that has the package
(https://docs.astral.sh/uv/concepts/indexes/#searching-across-multiple-indexes).

A variable already set in the environment wins, except the lists (indexes, find-links,
constraints, trusted hosts), which are extended with pip's, as pip extends its configured
lists with the command line's: ``UV_CONSTRAINT=extra.txt python scripts/uv_env.py uv pip
install ...`` applies both ``extra.txt`` and pip's constraints.

With a COMMAND, runs it with these variables added to its environment; without one, prints
them, one ``NAME=value`` a line. Exits 3, naming the option, when pip's configuration holds
an option that changes what gets installed and that uv cannot take from its environment
(``no-index``, ``only-binary``, ...): callers then install with pip itself.
"""

from __future__ import annotations

import ast
import math
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

# pip's list options and the uv variables that take them, with uv's separator.
LISTS = {
    "extra-index-url": ("UV_INDEX", " "),
    "find-links": ("UV_FIND_LINKS", ","),
    "constraint": ("UV_CONSTRAINT", " "),
    "trusted-host": ("UV_INSECURE_HOST", " "),
}
SCALARS = {
    "index-url": "UV_DEFAULT_INDEX",
    "client-cert": "SSL_CLIENT_CERT",
    "retries": "UV_HTTP_RETRIES",
}
# Options about pip's own output, cache and prompts (and PIP_CONFIG_FILE, already read):
# nothing uv installs depends on them.
IGNORED = frozenset(
    {
        "cache-dir",
        "config-file",
        "disable-pip-version-check",
        "exists-action",
        "log",
        "no-cache-dir",
        "no-color",
        "no-input",
        "no-python-version-warning",
        "no-warn-conflicts",
        "no-warn-script-location",
        "progress-bar",
        "quiet",
        "require-virtualenv",
        "root-user-action",
        "verbose",
    }
)
# Another long name pip accepts for the same option.
ALIASES = {"default-timeout": "timeout"}
# The sections pip reads for `pip install`, in the order it applies them.
SECTIONS = ("global", "install", ":env:")
FALSE = frozenset({"", "0", "false", "no", "off"})


class UntranslatableError(Exception):
    """pip's configuration holds an option that uv cannot take from its environment."""


def pip_configuration(python: str = sys.executable) -> dict[str, str]:
    """The options ``python``'s pip applies to ``pip install``, by long name.

    Raises:
        subprocess.CalledProcessError: ``python -m pip config list`` failed.
    """
    listing = subprocess.run(
        [python, "-m", "pip", "config", "list"], capture_output=True, text=True, check=True
    ).stdout
    # Lines read `section.name='value'`; the value is a Python literal.
    found: dict[tuple[str, str], str] = {}
    for line in listing.splitlines():
        key, _, value = line.partition("=")
        section, _, name = key.partition(".")
        if section in SECTIONS:
            found[section, ALIASES.get(name, name)] = str(ast.literal_eval(value))
    return {
        name: value
        for section in SECTIONS
        for (where, name), value in found.items()
        if where == section
    }


def uv_environment(pip: Mapping[str, str], environ: Mapping[str, str]) -> dict[str, str]:
    """The variables that give uv pip's configuration ``pip``, merged into ``environ``.

    Raises:
        UntranslatableError: ``pip`` sets an option uv cannot take from its environment.
    """
    wanted: dict[str, str] = {"UV_INDEX_STRATEGY": "unsafe-best-match"}
    cert = pip.get("cert")
    if cert:
        wanted["SSL_CERT_DIR" if Path(cert).is_dir() else "SSL_CERT_FILE"] = cert
    else:
        wanted["UV_NATIVE_TLS"] = "1"
    if "timeout" in pip:
        wanted["UV_HTTP_TIMEOUT"] = str(math.ceil(float(pip["timeout"])))
    if pip.get("proxy"):
        wanted["HTTP_PROXY"] = wanted["HTTPS_PROXY"] = pip["proxy"]
    if pip.get("pre", "").lower() not in FALSE:
        wanted["UV_PRERELEASE"] = "allow"
    wanted.update({SCALARS[name]: value for name, value in pip.items() if name in SCALARS})
    untranslatable = sorted(
        name
        for name, value in pip.items()
        if name not in {*LISTS, *SCALARS, *IGNORED, "cert", "timeout", "proxy", "pre"}
        and value.lower() not in FALSE
    )
    if untranslatable:
        raise UntranslatableError(
            f"pip's configuration sets {', '.join(untranslatable)}, which uv cannot take "
            "from its environment (see `python -m pip config list`)"
        )
    merged = {**wanted, **environ}
    for name, (variable, separator) in LISTS.items():
        values = [*environ.get(variable, "").split(separator), *pip.get(name, "").split()]
        merged[variable] = separator.join(v for v in values if v)
        if not merged[variable]:
            del merged[variable]
    return merged


def main(argv: list[str]) -> int:
    """Run ``argv`` (or print the variables) with pip's configuration given to uv."""
    try:
        environ = uv_environment(pip_configuration(), os.environ)
    except UntranslatableError as error:
        print(f"uv_env: {error}; install with pip", file=sys.stderr)
        return 3
    if argv:
        os.execvpe(argv[0], argv, environ)
    for name, value in sorted(environ.items()):
        if os.environ.get(name) != value:
            print(f"{name}={value}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
