"""Run documentation examples as scripts, each in its own process forked from this one.

Started by ``tests/docs/test_code_examples.py`` with the interpreter of an example's environment
(``python example_runner.py``, so that it imports nothing of the tests), it imports the
third-party modules the examples use (FastAPI alone takes half a second of CPU to import), then
reads one request per line on standard input: a JSON list ``[script, stdout, stderr]``. For each
it forks a child that runs ``script`` as ``python script`` would (``__main__``, its directory
first on ``sys.path``, its own working directory and session, standard input from /dev/null,
its output to the files named), and answers two lines: ``{"pid": ...}`` when the child is
started, then ``{"status": ...}`` (its exit status, or minus the signal that ended it).

The child leaves the server's loop and runs the script at the top level of this module, so the
interpreter ends it as it ends a script: an uncaught exception is printed and exits 1,
``SystemExit`` gives the status, non-daemon threads are joined and ``atexit`` handlers run. Our
own packages are not imported here: each example imports them afresh.

The imported objects are frozen out of the garbage collector before the first fork (gc.freeze,
https://docs.python.org/3/library/gc.html#gc.freeze): a child's collections would otherwise
touch, and so copy, every page of them (a fifth of a second of CPU per child).
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import json
import os
import runpy
import sys

#: Imported before the first fork; a module missing from the environment is skipped.
PRELOADED = (
    "fastapi",
    "fastapi.responses",
    "fastapi.testclient",
    "httpx2",
    "orjson",
    "pydantic",
    "starlette.applications",
    "starlette.requests",
    "starlette.responses",
    "starlette.routing",
    "uvicorn",
)


def _answer(message: dict[str, int]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def serve() -> str | None:
    """Fork a child per request; return the script to run in a child, None in the server."""
    for line in sys.stdin:
        script, stdout, stderr = json.loads(line)
        pid = os.fork()
        if pid == 0:
            gc.enable()
            os.setsid()
            for fd, path, flags in (
                (0, os.devnull, os.O_RDONLY),
                (1, stdout, os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                (2, stderr, os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
            ):
                opened = os.open(path, flags)
                os.dup2(opened, fd)
                os.close(opened)
            sys.stdin = open(os.devnull)  # noqa: SIM115 (the child's for its whole life)
            directory = os.path.dirname(script)
            os.chdir(directory)
            sys.argv = [script]
            sys.path[0] = directory
            return str(script)
        _answer({"pid": pid})
        _, status = os.waitpid(pid, 0)
        _answer({"status": os.waitstatus_to_exitcode(status)})
    return None


if __name__ == "__main__":
    gc.disable()  # no collection leaves holes in the pages the children share
    for name in PRELOADED:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    gc.freeze()
    script = serve()
    if script is not None:
        runpy.run_path(script, run_name="__main__")
