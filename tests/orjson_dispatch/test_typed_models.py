"""The per-class fast path: taken where it is exact, filtering what the declared class lacks.

Seen through the public ``dumps`` (and, for memory, through HTTP); the private plans themselves
are tested in ``test_typed_model_plans.py``.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import itertools
import json
import math
import os
import subprocess
import sys
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from pydantic import BaseModel, TypeAdapter, create_model

from orjson_dispatch import dispatch, dumps
from tests.orjson_dispatch.apps import Decorate, undecorated
from tests.orjson_dispatch.fast_path_models import (
    Camel,
    Completion,
    FunctionCall,
    Holder,
    Message,
    Open,
    SecretCompletion,
)
from tests.orjson_dispatch.samples import Item


class CountingSerializer:
    """Stands in for a class's pydantic serializer and counts the calls that reach it."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.calls = 0

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self.real, name)
        if callable(attribute):

            @functools.wraps(attribute)
            def counted(*args: Any, **kwargs: Any) -> Any:
                self.calls += 1
                return attribute(*args, **kwargs)

            return counted
        return attribute


@pytest.fixture
def pydantic_calls(monkeypatch: pytest.MonkeyPatch) -> dict[type[BaseModel], CountingSerializer]:
    counters: dict[type[BaseModel], CountingSerializer] = {}
    for cls in (Completion, Message, FunctionCall, Camel, Open):
        counter = CountingSerializer(cls.__pydantic_serializer__)
        monkeypatch.setattr(cls, "__pydantic_serializer__", counter)
        counters[cls] = counter
    return counters


def completion() -> Completion:
    return Completion(
        ids=[1, 2, 3],
        logprobs=[-0.5, math.nan, -1.25],
        output=[Message(content="hi"), FunctionCall(name="f", callId="c1")],
        meta={"when": datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone.utc), "n": Decimal("1.5")},
    )


def as_pydantic(model: BaseModel, annotation: Any = None) -> Any:
    adapter: TypeAdapter[Any] = TypeAdapter(annotation or type(model))
    return json.loads(adapter.dump_json(model, by_alias=True))


def test_plain_model_never_reaches_pydantic(
    pydantic_calls: dict[type[BaseModel], CountingSerializer],
) -> None:
    value = completion()
    expected = as_pydantic(value)
    for counter in pydantic_calls.values():
        counter.calls = 0
    assert json.loads(dumps(value, response_model=Completion)) == expected
    assert json.loads(dumps(value)) == expected
    assert {cls: counter.calls for cls, counter in pydantic_calls.items() if counter.calls} == {}


def test_subclass_instance_is_filtered_to_the_declared_class() -> None:
    value = SecretCompletion(ids=[1], logprobs=[0.0], output=[], password="hunter2")
    body = dumps(value, response_model=Completion)
    assert b"hunter2" not in body
    assert json.loads(body) == as_pydantic(value, Completion)


def test_nested_subclass_instance_is_filtered() -> None:
    class LoudMessage(Message):
        volume: int

    value = Holder(
        inner=LoudMessage(content="x", volume=11), many={"a": LoudMessage(content="y", volume=3)}
    )
    for body in (dumps(value), dumps(value, response_model=Holder)):
        assert b"volume" not in body
        assert json.loads(body) == as_pydantic(value)


def test_big_integers_are_exact() -> None:
    value = Completion(ids=[2**70, -(2**65)], logprobs=[], output=[])
    assert json.loads(dumps(value, response_model=Completion))["ids"] == [2**70, -(2**65)]
    assert json.loads(dumps({"n": 2**80, "m": value}))["n"] == 2**80


def test_dict_is_validated_and_filtered() -> None:
    body = dumps(
        {"ids": [1], "logprobs": [1], "output": [], "password": "x"}, response_model=Completion
    )
    assert json.loads(body) == {
        "ids": [1],
        "logprobs": [1.0],
        "output": [],
        "meta": {},
        "finished": None,
    }


# --- a model class created per request ------------------------------------------------------------

_MEMORY_REQUESTS = 4000
_MEMORY_SLACK = 10 * 2**20
ROOT = Path(__file__).resolve().parents[2]


def rss_growth(decorated: bool, typed: bool, requests: int) -> int:
    """Bytes the process's RSS grows over ``requests`` GETs, each creating a model class.

    Run in a fresh interpreter (``_measure``) so that both sides start from the same state.
    """

    def build(decorate: Decorate) -> FastAPI:
        app = FastAPI()
        counter = itertools.count()

        async def endpoint() -> Any:
            model = create_model(f"PerRequest{next(counter)}", __base__=Item, extra=(int, 0))
            return model(name="n", price=1)

        app.get("/x", response_model=Item if typed else None)(decorate(endpoint))
        return app

    app = build(dispatch) if decorated else build(undecorated)

    async def run() -> int:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            for _ in range(200):  # warm up: first-request caches, allocator arenas
                assert (await client.get("/x")).status_code == 200
            before = _rss()
            for _ in range(requests):
                assert (await client.get("/x")).status_code == 200
            return _rss() - before

    return asyncio.run(run())


def _rss() -> int:
    gc.collect()
    status = Path("/proc/self/status").read_text()
    kilobytes = next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:"))
    return int(kilobytes) * 1024


def _measure(decorated: bool, typed: bool) -> int:
    code = (
        "from tests.orjson_dispatch.test_typed_models import rss_growth; "
        f"print(rss_growth({decorated}, {typed}, {_MEMORY_REQUESTS}))"
    )
    result = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", code],
        cwd=ROOT,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        },
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return int(result.stdout)


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmRSS from /proc")
@pytest.mark.parametrize("typed", [False, True], ids=["untyped", "typed"])
def test_model_class_per_request_does_not_grow_memory(typed: bool) -> None:
    fastapi = _measure(decorated=False, typed=typed)
    ours = _measure(decorated=True, typed=typed)
    assert ours - fastapi < _MEMORY_SLACK, (
        f"dispatch +{ours / 1e6:.1f} MB, FastAPI +{fastapi / 1e6:.1f} MB"
    )
