"""Serialization alone, in process, timed by pyperf: every way of turning a body into JSON.

The harness runs ``python -m benchmarks.inprocess --body NAME --append FILE`` once per body;
pyperf's Runner spawns the worker processes, calibrates loops, runs warmups and stores the
values with the machine's metadata (``python -m pyperf stats|check|compare_to`` read the file).
Each candidate's output is checked against the reference before it is timed. ``chunks`` is a
stream's events: the :data:`~benchmarks.bodies.CYCLE` chunks, each encoded on its own.
"""

import argparse
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import orjson
import pyperf
from fastapi.encoders import jsonable_encoder
from pydantic import TypeAdapter

from benchmarks.bodies import CHUNKS, CYCLE, Chunk, ResponseModel, body, chunk_dicts, chunk_models
from orjson_dispatch import dumps

_PROGRAM = ("-m", "benchmarks.inprocess")  # what pyperf runs in each worker process
#: A candidate: its name (after ``<body>/``), the code it runs, and that code.
Candidate = tuple[str, str, Callable[[], Any]]


def _starlette_json(data: Any) -> bytes:
    """Encode as Starlette's ``JSONResponse.render`` does (FastAPI's untyped path ends there)."""
    return json.dumps(
        data, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":")
    ).encode("utf-8")


def candidates(name: str) -> list[Candidate]:
    """Return the candidates for ``name``; the first (orjson on the ready dict) is the limit."""
    if name == CHUNKS:
        models, dicts, each = chunk_models(), chunk_dicts(), f"each of {CYCLE} chunks"
        chunk: TypeAdapter[Chunk] = TypeAdapter(Chunk)
        return [
            ("orjson-dict", f"orjson.dumps(d), {each} a ready dict",
             lambda: list(map(orjson.dumps, dicts))),
            ("dispatch-dumps-typed", f"orjson_dispatch.dumps(chunk, response_model=Chunk), {each}",
             lambda: [dumps(c, response_model=Chunk) for c in models]),
            ("model-dump-json", f"chunk.model_dump_json(), {each}",
             lambda: [c.model_dump_json() for c in models]),
            ("typeadapter", "TypeAdapter.validate_python + dump_json (FastAPI typed stream), "
             + each, lambda: [chunk.dump_json(chunk.validate_python(c, from_attributes=True))
                              for c in models]),
            ("jsonable-encoder", "jsonable_encoder + json.dumps (FastAPI untyped stream), "
             f"{each} a dict", lambda: [_starlette_json(jsonable_encoder(c)) for c in dicts]),
            ("msgspec-dict", f"msgspec.json.encode(d), {each} a ready dict (peer)",
             lambda: list(map(msgspec.json.encode, dicts))),
        ]  # fmt: skip
    model, data = body(name).model, body(name).data
    typed: TypeAdapter[ResponseModel] = TypeAdapter(ResponseModel)
    return [
        ("orjson-dict", "orjson.dumps(d) on the ready dict", lambda: orjson.dumps(data)),
        ("dispatch-dumps-typed", "orjson_dispatch.dumps(model, response_model=ResponseModel)",
         lambda: dumps(model, response_model=ResponseModel)),
        ("dispatch-dumps-model", "orjson_dispatch.dumps(model)", lambda: dumps(model)),
        ("dispatch-dumps-dict", "orjson_dispatch.dumps(d) on the ready dict", lambda: dumps(data)),
        ("model-dump-json", "model.model_dump_json(by_alias=True)",
         lambda: model.model_dump_json(by_alias=True)),
        ("typeadapter", "TypeAdapter.validate_python + dump_json (FastAPI typed path)",
         lambda: typed.dump_json(typed.validate_python(model, from_attributes=True),
                                 by_alias=True)),
        ("model-dump-orjson", 'orjson.dumps(model.model_dump(mode="json", by_alias=True))',
         lambda: orjson.dumps(model.model_dump(mode="json", by_alias=True))),
        ("jsonable-encoder", "jsonable_encoder + json.dumps (FastAPI untyped path)",
         lambda: _starlette_json(jsonable_encoder(model))),
        ("msgspec-dict", "msgspec.json.encode(d) on the ready dict (peer)",
         lambda: msgspec.json.encode(data)),
    ]  # fmt: skip


def decoded(output: bytes | str | list[bytes] | list[str]) -> Any:
    """Return the JSON value of a candidate's output (a list of values for a stream)."""
    if isinstance(output, list):
        return [orjson.loads(document) for document in output]
    return orjson.loads(output)


def expected(name: str) -> Any:
    """Return the JSON value every candidate for ``name`` must encode."""
    return list(chunk_dicts()) if name == CHUNKS else body(name).data


def measure(body_names: list[str], options: list[str], path: Path) -> dict[str, Any]:
    """Time every candidate on each body with pyperf into ``path``; return pyperf's suite.

    ``options`` are pyperf Runner options; pyperf runs ``--quiet`` (the summary reports
    unstable results once). Benchmarks are named ``<body>/<candidate>``, with the code they
    run as the metadata ``description``.

    Raises:
        subprocess.CalledProcessError: pyperf failed (e.g. a candidate's output differs).
    """
    path.unlink(missing_ok=True)
    for name in body_names:
        command = [sys.executable, *_PROGRAM, "--body", name, f"--append={path}", "--quiet"]
        subprocess.run([*command, *options], check=True)
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def main(argv: list[str] | None = None) -> None:
    """Register the candidates of ``--body`` with pyperf's Runner (worker and main process)."""

    def forward(command: list[str], args: argparse.Namespace) -> None:
        command += ["--body", args.body]

    runner = pyperf.Runner(program_args=_PROGRAM, add_cmdline_args=forward)
    runner.argparser.add_argument("--body", required=True, help="the body to serialize")
    args = runner.parse_args(argv)
    for name, label, encode in candidates(args.body):
        if decoded(encode()) != expected(args.body):
            raise AssertionError(f"{name} encodes {args.body} differently")
        runner.bench_func(f"{args.body}/{name}", encode, metadata={"description": label})


if __name__ == "__main__":
    main()
