"""``python -m benchmarks``: see :mod:`benchmarks.cli`."""

import sys

from benchmarks.cli import main, questions

try:
    questions()
except ModuleNotFoundError as error:
    # The harness needs both packages and the bench dependency group: outside the project's
    # virtualenv the first missing import would otherwise end in a bare traceback.
    sys.exit(
        f"benchmarks: {error.name} is not installed for {sys.executable}: run "
        "scripts/bootstrap dev docs bench, then .venv/bin/python -m benchmarks"
    )

raise SystemExit(main())
