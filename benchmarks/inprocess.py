"""Returned bodies in process: every way of turning a model into JSON, paired with the limit.

``python -m benchmarks.inprocess [--quick]``. Each body of :data:`bodies.IN_PROCESS`, validated
and constructed, is encoded by every approach, checked against the limit's JSON
(``orjson.dumps`` of the ready ``model_dump(mode="json", by_alias=True)``), then timed right
after the limit in an order shuffled each round; tables give the medians of its time over the
limit's and of its speed over the helper's. The method: docs/benchmarks.md.
"""

import functools
import json
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import orjson
from fastapi.encoders import jsonable_encoder
from pydantic import BaseModel, TypeAdapter

from benchmarks import summary
from benchmarks.cli import main
from bodies import IN_PROCESS
from bodies.sdk_corpus import BUILT, Built, build
from orjson_dispatch import dumps

SUITE = "inprocess"
HELPER = "helper"
ROUNDS = 7
PASS_BYTES = 16_384  # the least JSON one timed pass writes, its body list repeated up to 64 times


def _starlette_json(data: Any) -> bytes:
    """Encode as Starlette's ``JSONResponse.render`` does (FastAPI's untyped path ends there)."""
    return json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


Encode = Callable[[list[Any], list[Any]], list[Any]]  # the bodies as models and as ready dicts


def approaches(cls: type[BaseModel]) -> dict[str, tuple[str, Encode]]:
    """Return the approaches for models of ``cls``: name to label and ``encode(models, dicts)``.

    Each encodes every body in a loop of its own, the call written out in it: a function called
    per body would add its own call to every approach's time.
    """
    adapter: TypeAdapter[Any] = TypeAdapter(cls)
    validate, dump = adapter.validate_python, adapter.dump_json
    return {
        HELPER: (
            'orjson.dumps(m.model_dump(mode="json", by_alias=True)) (the helper)',
            lambda ms, ds: [orjson.dumps(m.model_dump(mode="json", by_alias=True)) for m in ms],
        ),
        "dumps-untyped": ("orjson_dispatch.dumps(m)", lambda ms, ds: [dumps(m) for m in ms]),
        "dumps-typed": (
            f"orjson_dispatch.dumps(m, response_model={cls.__name__})",
            lambda ms, ds: [dumps(m, response_model=cls) for m in ms],
        ),
        "model-dump-json": (
            "m.model_dump_json(by_alias=True)",
            lambda ms, ds: [m.model_dump_json(by_alias=True) for m in ms],
        ),
        "typeadapter": (
            "TypeAdapter.validate_python + dump_json (FastAPI typed)",
            lambda ms, ds: [dump(validate(m, from_attributes=True), by_alias=True) for m in ms],
        ),
        "jsonable-encoder": (
            "jsonable_encoder + json.dumps (FastAPI untyped)",
            lambda ms, ds: [_starlette_json(jsonable_encoder(m)) for m in ms],
        ),
        "msgspec-dict": (
            "msgspec.json.encode(d) on the ready dict (peer)",
            lambda ms, ds: [msgspec.json.encode(d) for d in ds],
        ),
    }


def _batch(encode: Callable[[], Any], loops: int) -> float:
    """Return the seconds per call of ``loops`` calls of ``encode``."""
    started = time.perf_counter()
    for _ in range(loops):
        encode()
    return (time.perf_counter() - started) / loops


def _loops(encode: Callable[[], Any], min_time: float) -> int:
    """Return how many calls of ``encode`` last at least ``min_time`` seconds."""
    loops = 1
    while _batch(encode, loops) * loops < min_time and loops < 1 << 20:
        loops *= 4
    return loops


def measure_body(name: str, built: Built, rounds: int, min_time: float) -> list[dict[str, Any]]:
    """Time every approach on the body ``name`` built so, each right after the limit.

    Raises:
        AssertionError: an approach encodes other JSON than the limit.
    """
    cls, make = IN_PROCESS[name]
    models = [build(cls, data, built) for data in make()]
    dicts = [model.model_dump(mode="json", by_alias=True) for model in models]
    # A small body list is repeated, for the call of each pass not to weigh on its time.
    copies = min(64, max(1, PASS_BYTES // sum(len(orjson.dumps(d)) for d in dicts)))
    models, dicts = models * copies, dicts * copies
    runs = {k: functools.partial(e, models, dicts) for k, (_, e) in approaches(cls).items()}
    limit = functools.partial(lambda ds: [orjson.dumps(d) for d in ds], dicts)
    for key, encode in runs.items():
        if list(map(orjson.loads, encode())) != list(map(orjson.loads, limit())):
            raise AssertionError(f"{key} encodes {name} ({built}) differently from the limit")
    loops = {key: _loops(encode, min_time) for key, encode in runs.items()}
    limit_loops, samples = _loops(limit, min_time), []
    for number in range(rounds):
        order = list(runs)
        random.Random(number).shuffle(order)
        for key in order:
            limit_s = _batch(limit, limit_loops)
            seconds = _batch(runs[key], loops[key])
            keys = {"round": number, "body": name, "built": built, "approach": key}
            samples.append(keys | {"s": seconds / copies, "limit_s": limit_s / copies})
    return samples


def measure(quick: bool, logs: Path) -> dict[str, Any]:
    """Time every body, validated and constructed."""
    min_time, samples = 0.02 if quick else 0.1, []
    for name in IN_PROCESS:
        for built in BUILT:
            samples += measure_body(name, built, ROUNDS, min_time)
            print(f"inprocess: {name} ({built}) timed", file=sys.stderr, flush=True)
    labels = {
        name: {k: label for k, (label, _) in approaches(cls).items()}
        for name, (cls, _) in IN_PROCESS.items()
    }
    found = {"name": SUITE, "rounds": ROUNDS, "min_time_s": min_time, "labels": labels}
    return found | {"samples": samples}


def ratios(suite: Any, body: str, built: str) -> dict[str, dict[str, float]]:
    """Return, per approach: median us per call, x limit's time, x the helper's speed."""
    mine = [s for s in suite["samples"] if (s["body"], s["built"]) == (body, built)]
    helper = {s["round"]: s["s"] / s["limit_s"] for s in mine if s["approach"] == HELPER}
    found: dict[str, dict[str, float]] = {}
    for key in suite["labels"][body]:
        own = [s for s in mine if s["approach"] == key]
        if not own:
            continue
        found[key] = {
            "us": statistics.median(s["s"] for s in own) * 1e6,
            "limit": statistics.median(s["s"] / s["limit_s"] for s in own),
            "helper": statistics.median(helper[s["round"]] * s["limit_s"] / s["s"] for s in own),
        }
    return found


def render(suite: Any) -> list[str]:
    """Return one table per body: time, time over the limit's, speed over the helper's."""
    lines = summary.heading("Returned bodies in process", suite)
    header = ["approach", "built", "us per call", "x limit's time", "x helper's speed"]
    for body in dict.fromkeys(s["body"] for s in suite["samples"]):
        rows = [
            [
                f"`{suite['labels'][body][key]}`",
                built,
                summary.number(r["us"]),
                f"{summary.number(r['limit'])}x",
                f"{summary.number(r['helper'])}x",
            ]
            for built in BUILT
            for key, r in ratios(suite, body, built).items()
        ]
        lines += summary.table(body, header, rows)
    return lines


if __name__ == "__main__":
    raise SystemExit(main(question=sys.modules[__name__]))
