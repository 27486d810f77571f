"""Serialization alone, in process, timed by pyperf: every way of turning a body into JSON.

The harness runs ``python -m benchmarks.inprocess --body NAME --append FILE`` once per body;
pyperf's Runner spawns the worker processes, calibrates loops, runs warmups and stores the
values with the machine's metadata (``python -m pyperf stats|check|compare_to`` read the file).
Each candidate's output is checked against the reference before it is timed. ``sdk-chunks`` is a
stream's events: the :data:`~benchmarks.bodies.CYCLE` chunks, each encoded on its own.
"""

import argparse
import functools
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
from pydantic import BaseModel, TypeAdapter

from benchmarks.bodies import CYCLE, SDK_CHUNKS, body, sdk_chunk_models
from orjson_dispatch import dumps
from tests.orjson_dispatch.sdk_corpus import ChatCompletionChunk

_PROGRAM = ("-m", "benchmarks.inprocess")  # what pyperf runs in each worker process
#: A candidate: its name (after ``<body>/``), the code it runs, and that code.
Candidate = tuple[str, str, Callable[[], Any]]


def _starlette_json(data: Any) -> bytes:
    """Encode as Starlette's ``JSONResponse.render`` does (FastAPI's untyped path ends there)."""
    return json.dumps(
        data, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":")
    ).encode("utf-8")


def candidates(name: str) -> list[Candidate]:
    """Return the candidates for ``name``; the first (orjson on the ready dict) is the limit.

    Each encodes the body's values one by one (one value, or a stream's
    :data:`~benchmarks.bodies.CYCLE` chunks) and returns the list of their JSON documents.
    """
    if name == SDK_CHUNKS:
        models: list[BaseModel] = list(sdk_chunk_models())
        cls: type[BaseModel] = ChatCompletionChunk
        each = f", each of {CYCLE} chunks"
    else:
        models, cls, each = [body(name).model], body(name).cls, ""
    pairs = [(model, model.model_dump(mode="json", by_alias=True)) for model in models]
    typed: TypeAdapter[Any] = TypeAdapter(cls)
    rows: list[tuple[str, str, Callable[[Any, Any], Any]]] = [
        ("orjson-dict", "orjson.dumps(d) on the ready dict (the limit)",
         lambda m, d: orjson.dumps(d)),
        ("dispatch-dumps-model", "orjson_dispatch.dumps(model) (untyped: no declared type)",
         lambda m, d: dumps(m)),
        ("dispatch-dumps-typed", f"orjson_dispatch.dumps(model, response_model={cls.__name__})",
         lambda m, d: dumps(m, response_model=cls)),
        ("model-dump-orjson", 'the helper: orjson.dumps(model.model_dump(mode="json", '
         "by_alias=True))", lambda m, d: orjson.dumps(m.model_dump(mode="json", by_alias=True))),
        ("model-dump-json", "model.model_dump_json(by_alias=True)",
         lambda m, d: m.model_dump_json(by_alias=True)),
        ("typeadapter", "TypeAdapter.validate_python + dump_json (FastAPI typed)",
         lambda m, d: typed.dump_json(typed.validate_python(m, from_attributes=True),
                                      by_alias=True)),
        ("jsonable-encoder", "jsonable_encoder + json.dumps (FastAPI untyped)",
         lambda m, d: _starlette_json(jsonable_encoder(m))),
        ("dispatch-dumps-dict", "orjson_dispatch.dumps(d) on the ready dict",
         lambda m, d: dumps(d)),
        ("msgspec-dict", "msgspec.json.encode(d) on the ready dict (peer)",
         lambda m, d: msgspec.json.encode(d)),
    ]  # fmt: skip
    return [
        (row, label + each, functools.partial(_each, encode, pairs)) for row, label, encode in rows
    ]


def _each(encode: Callable[[Any, Any], Any], pairs: list[tuple[Any, Any]]) -> list[Any]:
    return [encode(model, data) for model, data in pairs]


def decoded(output: list[bytes] | list[str]) -> list[Any]:
    """Return the JSON values of a candidate's output."""
    return [orjson.loads(document) for document in output]


def expected(name: str) -> list[Any]:
    """Return the JSON values every candidate for ``name`` must encode."""
    if name == SDK_CHUNKS:
        return [chunk.model_dump(mode="json", by_alias=True) for chunk in sdk_chunk_models()]
    return [body(name).data]


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
