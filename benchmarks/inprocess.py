"""Serialization alone, in this process: every way of turning a body into JSON bytes.

A careful ``timeit``: each candidate is calibrated to a loop count that takes about
``sample_s`` seconds, then the candidates are timed in interleaved rounds (the order rotates
each round), with a garbage collection before each sample and the collector left on during
it, as in a server. Every candidate's output is checked against the reference before timing.
"""

import gc
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgspec
import orjson
from fastapi.encoders import jsonable_encoder
from pydantic import TypeAdapter

from benchmarks.bodies import Body, ResponseModel, body
from orjson_dispatch import dumps


@dataclass(frozen=True)
class Candidate:
    """One serialization to time.

    Attributes:
        name: Short identifier for result files.
        label: The code it runs, for tables.
        encode: Returns the JSON of the body it was made for (``model_dump_json`` gives str).
    """

    name: str
    label: str
    encode: Callable[[], bytes | str]


def _starlette_json(data: Any) -> bytes:
    """Encode like Starlette's ``JSONResponse.render`` (what FastAPI's untyped path ends in)."""
    return json.dumps(
        data, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":")
    ).encode("utf-8")


def candidates(item: Body) -> list[Candidate]:
    """Return the candidates for ``item``; the first, ``orjson.dumps(d)``, is the baseline."""
    model, data = item.model, item.data
    adapter: TypeAdapter[ResponseModel] = TypeAdapter(ResponseModel)
    return [
        Candidate("orjson-dict", "orjson.dumps(d) on the ready dict", lambda: orjson.dumps(data)),
        Candidate(
            "dispatch-dumps-typed",
            "orjson_dispatch.dumps(model, response_model=ResponseModel)",
            lambda: dumps(model, response_model=ResponseModel),
        ),
        Candidate("dispatch-dumps-model", "orjson_dispatch.dumps(model)", lambda: dumps(model)),
        Candidate(
            "dispatch-dumps-dict", "orjson_dispatch.dumps(d) on the ready dict", lambda: dumps(data)
        ),
        Candidate(
            "model-dump-json",
            "model.model_dump_json(by_alias=True)",
            lambda: model.model_dump_json(by_alias=True),
        ),
        Candidate(
            "typeadapter",
            "TypeAdapter.validate_python + dump_json (FastAPI typed path)",
            lambda: adapter.dump_json(
                adapter.validate_python(model, from_attributes=True), by_alias=True
            ),
        ),
        Candidate(
            "model-dump-orjson",
            'orjson.dumps(model.model_dump(mode="json", by_alias=True))',
            lambda: orjson.dumps(model.model_dump(mode="json", by_alias=True)),
        ),
        Candidate(
            "jsonable-encoder",
            "jsonable_encoder + json.dumps (FastAPI untyped path)",
            lambda: _starlette_json(jsonable_encoder(model)),
        ),
        Candidate(
            "msgspec-dict",
            "msgspec.json.encode(d) on the ready dict (peer)",
            lambda: msgspec.json.encode(data),
        ),
    ]


def _time(encode: Callable[[], bytes | str], loops: int) -> float:
    """Return the seconds per call of ``loops`` calls of ``encode``."""
    gc.collect()
    started = time.perf_counter()
    for _ in range(loops):
        encode()
    return (time.perf_counter() - started) / loops


def measure(
    body_name: str,
    *,
    rounds: int,
    sample_s: float,
    log: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True),
) -> dict[str, Any]:
    """Time every candidate on the body called ``body_name``.

    Returns:
        JSON-ready: the body, each candidate's label and loop count, and its seconds per
        call in each round (``samples[name][round]``).

    Raises:
        AssertionError: A candidate's output does not parse to the reference JSON.
    """
    item = body(body_name)
    found = candidates(item)
    reference = item.data
    loops: dict[str, int] = {}
    for candidate in found:
        if orjson.loads(candidate.encode()) != reference:
            raise AssertionError(f"{candidate.name} encodes {body_name} differently")
        once = _time(candidate.encode, 1)
        loops[candidate.name] = max(1, round(sample_s / max(once, 1e-9)))
    samples: dict[str, list[float]] = {candidate.name: [] for candidate in found}
    for round_number in range(rounds):
        shift = round_number % len(found)
        for candidate in [*found[shift:], *found[:shift]]:
            samples[candidate.name].append(_time(candidate.encode, loops[candidate.name]))
        log(f"in-process {body_name}: round {round_number + 1}/{rounds} done")
    return {
        "body": body_name,
        "bytes": len(item.json),
        "candidates": [{"name": c.name, "label": c.label, "loops": loops[c.name]} for c in found],
        "samples": samples,
    }
