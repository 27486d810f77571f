"""``python -m uvicorn_keepalive --check``: print the settings in force, exit 0.

A bad ``UVICORN_KEEPALIVE_*`` variable is named and ends the process with status 3, as in a
server. For scripts, before ``uvicorn --workers N``, whose supervisor exits 0 when its workers
fail to start.
"""

import argparse

from uvicorn_keepalive._settings import environment_or_exit


def main(argv: list[str] | None = None) -> None:
    """Parse the command line; print the settings in force."""
    parser = argparse.ArgumentParser(prog="python -m uvicorn_keepalive", description=__doc__)
    parser.add_argument("--check", action="store_true", required=True, help="check the settings")
    parser.parse_args(argv)
    print(environment_or_exit())


if __name__ == "__main__":
    main()
