"""The code generated for model classes can be read: ``inspect.getsource``, tracebacks, pdb.

Each encoder (and each inlined ``default``) is registered in ``linecache`` under a file name
naming its class, its function is named after the class and the objects it uses are named after
what they hold. ``ORJSON_DISPATCH_PYDANTIC_MODELS=1`` makes pydantic write every model.
"""

from __future__ import annotations

import gc
import inspect
import linecache
import os
import subprocess
import sys
import traceback

import pytest
from orjson_dispatch._models import class_encoder, default_for
from pydantic import BaseModel

from tests.orjson_dispatch.fast_path_models import Message


class Exploding(BaseModel):
    """A model whose `__dict__` raises when read: the generated code's frame is in the trace."""

    n: int

    def __getattribute__(self, name: str) -> object:
        if name == "__dict__":
            raise RuntimeError("no dict")
        return super().__getattribute__(name)


def test_getsource_shows_the_encoder_named_after_its_class() -> None:
    _, encode = class_encoder(Message, by_alias=True)
    assert encode.__name__ == "encode_Message"
    filename = encode.__code__.co_filename
    assert "Message" in filename
    assert filename in linecache.cache
    source = inspect.getsource(encode)
    assert source.lstrip().startswith("def encode_Message(m):")
    assert "d = m.__dict__" in source
    assert "Message_" in source  # the names of what it uses start with the class's name


def test_getsource_shows_the_inlined_default() -> None:
    default = default_for([Message], by_alias=False)
    assert "Message" in default.__code__.co_filename
    source = inspect.getsource(default)
    assert source.lstrip().startswith("def default_for_Message(m):")
    assert "return other_values(m)" in source


def test_a_traceback_shows_the_generated_file_and_line() -> None:
    _, encode = class_encoder(Exploding, by_alias=True)
    with pytest.raises(RuntimeError) as caught:
        encode(Exploding(n=1))
    frames = traceback.extract_tb(caught.value.__traceback__)
    (frame,) = (f for f in frames if f.name == "encode_Exploding")
    assert "Exploding" in frame.filename
    assert frame.line == "d = m.__dict__"


def test_the_registered_source_goes_with_its_class() -> None:
    def make() -> str:
        class Ephemeral(BaseModel):
            n: int

        return str(class_encoder(Ephemeral, by_alias=True)[1].__code__.co_filename)

    filename = make()
    gc.collect()
    assert filename not in linecache.cache


_SWITCH_PROBE = """
from orjson_dispatch._models import class_encoder
from orjson_dispatch import dumps
from tests.orjson_dispatch.fast_path_models import Message
value = Message(content="hi")
print(class_encoder(Message, by_alias=True)[0] is None, dumps(value).decode())
"""


def _run(switch: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ORJSON_DISPATCH_PYDANTIC_MODELS": switch}
    return subprocess.run(
        [sys.executable, "-c", _SWITCH_PROBE], env=env, capture_output=True, text=True, check=False
    )


def test_the_switch_sends_every_model_to_pydantic() -> None:
    on, off = _run("1"), _run("0")
    assert on.returncode == 0, on.stderr
    assert off.returncode == 0, off.stderr
    used_pydantic, body = on.stdout.split(" ", 1)
    assert used_pydantic == "True"
    assert off.stdout.split(" ", 1) == ["False", body]


def test_a_bad_switch_value_names_the_variable() -> None:
    bad = _run("yes")
    assert bad.returncode != 0
    assert "ORJSON_DISPATCH_PYDANTIC_MODELS must be 1 or 0" in bad.stderr
