"""``python -m uvicorn_keepalive --check``: check the ``UVICORN_KEEPALIVE_*`` variables.

Importing the package reads them: a bad one is printed, naming it, and ends the process with
status 3 before this module runs. Otherwise the settings in force are printed and the status
is 0. Meant for deployment scripts, before ``uvicorn --workers N``, whose supervisor exits 0
when its workers fail to start.
"""

from __future__ import annotations

import argparse

from uvicorn_keepalive import Protocol


def main(argv: list[str] | None = None) -> None:
    """Parse the command line; print the settings in force."""
    parser = argparse.ArgumentParser(prog="python -m uvicorn_keepalive", description=__doc__)
    parser.add_argument("--check", action="store_true", required=True, help="check the settings")
    parser.parse_args(argv)
    print(Protocol.keepalive)


if __name__ == "__main__":
    main()
