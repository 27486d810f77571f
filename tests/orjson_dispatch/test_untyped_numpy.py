"""numpy is not imported by answering: orjson's numpy support is asked for only once it is.

With ``OPT_SERIALIZE_NUMPY``, orjson imports numpy at the first value it does not know itself
(a datetime, a Decimal, a model), which costs the first answer of every process some 130 ms and
numpy's memory. A numpy value cannot exist before numpy is imported, so the option is passed
only then. Each check runs in a fresh interpreter, where nothing else imported numpy.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("numpy")  # installed with the dev group: the check means something

_ANSWERS = """
import dataclasses, datetime, decimal, sys, uuid
from typing import Any
from fastapi import FastAPI
from fastapi.testclient import TestClient
from pydantic import BaseModel
from orjson_dispatch import DispatchRoute, dumps

@dataclasses.dataclass
class Point:
    x: int

class Item(BaseModel):
    at: datetime.datetime
    price: decimal.Decimal
    tags: set[str]
    extra: Any = None

def value():
    return {
        "item": Item(at=datetime.datetime(2020, 1, 2), price=decimal.Decimal("1.5"), tags={"a"},
                     extra=Point(1)),
        "when": datetime.date(2020, 1, 2), "id": uuid.UUID(int=1), "point": Point(2),
        "big": 2**70, "set": {1},
    }

app = FastAPI()
app.router.route_class = DispatchRoute

@app.get("/untyped")
def untyped():
    return value()

@app.get("/typed", response_model=Item)
def typed():
    return value()["item"]

client = TestClient(app)
for path in ("/untyped", "/typed"):
    assert client.get(path).status_code == 200, path
dumps(value())
dumps(value()["item"], response_model=Item)
assert "numpy" not in sys.modules, "numpy was imported"
"""


def test_answers_without_numpy_values_do_not_import_numpy() -> None:
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_ANSWERS)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr


def test_numpy_values_are_encoded_once_numpy_is_imported() -> None:
    script = """
import sys
from typing import Any
from pydantic import BaseModel
from orjson_dispatch import dumps
class Item(BaseModel):
    value: Any
# Before numpy: nothing to encode; the writers of `Item`'s class table are built.
assert dumps({"a": 1}) == b'{"a":1}'
assert dumps(Item(value=1)) == dumps(Item(value=1), response_model=Item) == b'{"value":1}'
assert "numpy" not in sys.modules
import numpy
assert dumps({"a": numpy.arange(3), "b": numpy.float32(1.5)}) == b'{"a":[0,1,2],"b":1.5}'
held = [numpy.arange(3), numpy.float32(1.5), numpy.int64(7), numpy.bool_(True)]
for body in (dumps(Item(value=held)), dumps(Item(value=held), response_model=Item)):
    assert body == b'{"value":[[0,1,2],1.5,7,true]}', body
"""
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
