"""mypy rejects the misuses of both public APIs, each with the expected error.

The snippet below is written to a file and checked with the repository's mypy
configuration (strict); every line marked ``# E: <code>`` must produce exactly that
error code, and no other line may produce any error.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.paths import ROOT

MISUSE = """\
import socket

import orjson
from fastapi import FastAPI
from pydantic import BaseModel

from orjson_dispatch import dispatch, dumps
from uvicorn_keepalive import KeepaliveSettings, Protocol, protocol, set_keepalive

app = FastAPI()


class Item(BaseModel):
    id: int


@app.get("/items/{item_id}")
@dispatch
def read_item(item_id: int) -> Item:
    return Item(id=item_id)


# dispatch keeps the endpoint's parameter and return types.
read_item("1")  # E: arg-type
name: str = read_item(1)  # E: assignment
# Options are keyword-only, known and typed.
dispatch(statuscode=201)  # E: call-overload
dispatch(status_code="201")  # E: call-overload
dispatch(by_alias=1.5)  # E: call-overload
dispatch(read_item, status_code=201)  # E: call-overload
dispatch(42)  # E: call-overload
dumps({"a": 1}, by_alias="yes")  # E: arg-type
dumps({"a": 1}, orjson.OPT_SORT_KEYS)  # E: call-arg
body: str = dumps({"a": 1})  # E: assignment
# Keepalive settings are a KeepaliveSettings or keyword arguments, ints.
protocol(idle="60")  # E: call-overload
protocol(60, 10, 3)  # E: call-overload
protocol(http=2)  # E: call-overload
h11: type[Protocol] = protocol(http="h11")  # E: assignment
set_keepalive(socket.socket(), idle=1.5)  # E: arg-type
set_keepalive("localhost:8000")  # E: arg-type
KeepaliveSettings(idle=None)  # E: arg-type
"""

_ERROR = re.compile(r"^[^:]+:(\d+): error: .*\[([\w-]+)\]$")


def expected_errors() -> set[tuple[int, str]]:
    return {
        (number, match.group(1))
        for number, line in enumerate(MISUSE.splitlines(), start=1)
        if (match := re.search(r"# E: ([\w-]+)$", line))
    }


def test_mypy_reports_every_misuse_and_nothing_else(tmp_path: Path) -> None:
    source = tmp_path / "misuse.py"
    source.write_text(MISUSE)
    done = subprocess.run(
        [
            *(sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml")),
            *("--no-error-summary", "--show-error-codes", "--hide-error-context", "--no-pretty"),
            str(source),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    reported = {
        (int(match.group(1)), match.group(2))
        for line in done.stdout.splitlines()
        if (match := _ERROR.match(line))
    }
    assert done.returncode == (1 if reported else 0), done.stdout + done.stderr
    assert reported == expected_errors(), done.stdout
    assert len(expected_errors()) == 17
