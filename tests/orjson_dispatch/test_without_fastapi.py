"""orjson-dispatch installed without FastAPI, as a Starlette app installs it, against FastAPI.

``without_fastapi.py`` runs in ``.venv-starlette`` (``pip install ./orjson_dispatch``, no
``[fastapi]`` extra), where the untyped rules read the package's copy of FastAPI's table of
encoders; here, with FastAPI installed, each of its values is FastAPI's own ``jsonable_encoder``
body.
"""

from __future__ import annotations

import json
import subprocess
from functools import cache
from typing import Any

import pytest
from fastapi.encoders import ENCODERS_BY_TYPE

from tests.docs.environments import environment
from tests.orjson_dispatch import without_fastapi
from tests.orjson_dispatch.oracles import fastapi_untyped

pytestmark = pytest.mark.slow  # makes an environment on first use


@cache
def report() -> dict[str, Any]:
    """Return what ``without_fastapi.py`` prints in ``.venv-starlette``."""
    # pydantic-extra-types: an optional package that FastAPI's table, and its copy, name.
    python = environment(["pydantic-extra-types"], base=".venv-starlette")
    done = subprocess.run(
        [python, "-W", "error", without_fastapi.__file__],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def test_fastapi_is_not_installed_and_dispatch_route_asks_for_it() -> None:
    assert report()["fastapi"] is False
    assert report()["DispatchRoute"] == (
        "DispatchRoute needs FastAPI: pip install 'orjson-dispatch[fastapi]'"
    )


def test_the_samples_hold_every_type_of_fastapis_table() -> None:
    """A type FastAPI adds to its table fails here until the copy and the samples have it."""
    values = without_fastapi.built().values()
    missing = {
        cls for cls in ENCODERS_BY_TYPE if not any(isinstance(value, cls) for value in values)
    }
    # FastAPI's stand-in for pydantic-extra-types' Color, where that package is missing.
    assert {cls.__qualname__ for cls in missing} <= {"PyExtraColor"}


@pytest.mark.parametrize("name", without_fastapi.SAMPLES)
def test_each_value_is_written_as_fastapi_writes_it(name: str) -> None:
    written = report()["dumps"][name]
    try:
        value = without_fastapi.SAMPLES[name]()
    except ImportError:  # pydantic-extra-types, not installed here: FastAPI's table has str
        assert written == '{"v":"red"}'
        return
    assert written == fastapi_untyped({"v": value}).decode()


def test_a_starlette_app_is_served() -> None:
    json_type, lines_type = "application/json", "application/jsonl"
    assert report()["answers"] == {
        "/untyped": [200, json_type, '{"path":"/untyped","when":"2024-02-29","ids":[7]}'],
        "/typed": [200, json_type, '{"id":1}'],
        "/echo": [200, json_type, '{"got":{"a":[1,2.5,null]}}'],
        "/lines": [200, lines_type, '{"n":0}\n{"n":1}\n'],
        "/events": [200, "text/event-stream; charset=utf-8", 'data: {"n":0}\n\ndata: {"n":1}\n\n'],
    }
