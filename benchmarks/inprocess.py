"""Serialization alone, in process, timed by pyperf: every way of turning a body into JSON.

pyperf's Runner does the timing: it spawns worker processes, calibrates the loop count,
runs warmups, and stores every value with the machine's metadata in its JSON format, which
``python -m pyperf stats|check|compare_to`` read. The harness runs this module once per body
(``python -m benchmarks.inprocess --body NAME --append FILE ...``); every candidate's output
is checked against the reference before it is timed. Besides the response bodies,
:data:`CHUNKS` is a stream's events: the chat-completion chunks of one cycle, each encoded on
its own as a stream encodes its events.
"""

import argparse
import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import orjson
import pyperf
from fastapi.encoders import jsonable_encoder
from pydantic import TypeAdapter

from benchmarks.bodies import ResponseModel, body
from benchmarks.chunks import CYCLE, Chunk, chunk_dicts, chunk_models
from orjson_dispatch import dumps

#: The in-process name of the stream of :data:`benchmarks.chunks.CYCLE` chunks.
CHUNKS = "chunks"

#: The module pyperf runs again in each worker process.
_PROGRAM = ("-m", "benchmarks.inprocess")


@dataclass(frozen=True)
class Candidate:
    """One serialization to time.

    Attributes:
        name: Short identifier, the pyperf benchmark's name after ``<body>/``.
        label: The code it runs, for tables.
        encode: Returns the JSON of the body it was made for (``model_dump_json`` gives str),
            or of each chunk.
    """

    name: str
    label: str
    encode: Callable[[], bytes | str | list[bytes] | list[str]]


def _starlette_json(data: Any) -> bytes:
    """Encode like Starlette's ``JSONResponse.render`` (what FastAPI's untyped path ends in)."""
    return json.dumps(
        data, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":")
    ).encode("utf-8")


def candidates(name: str) -> list[Candidate]:
    """Return the candidates for the body (or :data:`CHUNKS`) called ``name``.

    The first, ``orjson.dumps`` of the ready dict (orjson's limit), is the baseline.
    """
    if name == CHUNKS:
        return _chunk_candidates()
    model, data = body(name).model, body(name).data
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


def _chunk_candidates() -> list[Candidate]:
    models, dicts = chunk_models(), chunk_dicts()
    adapter: TypeAdapter[Chunk] = TypeAdapter(Chunk)
    per = f"each of {CYCLE} chunks"
    return [
        Candidate(
            "orjson-dict",
            f"orjson.dumps(d), {per} a ready dict",
            lambda: list(map(orjson.dumps, dicts)),
        ),
        Candidate(
            "dispatch-dumps-typed",
            f"orjson_dispatch.dumps(chunk, response_model=Chunk), {per}",
            lambda: [dumps(chunk, response_model=Chunk) for chunk in models],
        ),
        Candidate(
            "model-dump-json",
            f"chunk.model_dump_json(), {per}",
            lambda: [chunk.model_dump_json() for chunk in models],
        ),
        Candidate(
            "typeadapter",
            f"TypeAdapter.validate_python + dump_json (FastAPI typed stream), {per}",
            lambda: [
                adapter.dump_json(adapter.validate_python(chunk, from_attributes=True))
                for chunk in models
            ],
        ),
        Candidate(
            "jsonable-encoder",
            f"jsonable_encoder + json.dumps (FastAPI untyped stream), {per} a dict",
            lambda: [_starlette_json(jsonable_encoder(chunk)) for chunk in dicts],
        ),
        Candidate(
            "msgspec-dict",
            f"msgspec.json.encode(d), {per} a ready dict (peer)",
            lambda: list(map(msgspec.json.encode, dicts)),
        ),
    ]


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

    ``options`` are pyperf Runner options (``--processes=6``, ...); pyperf runs ``--quiet``
    (the summary reports unstable results once). Benchmarks are named ``<body>/<candidate>``;
    each carries its label as the metadata ``description``.

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
    reference = expected(args.body)
    for candidate in candidates(args.body):
        if decoded(candidate.encode()) != reference:
            raise AssertionError(f"{candidate.name} encodes {args.body} differently")
        runner.bench_func(
            f"{args.body}/{candidate.name}",
            candidate.encode,
            metadata={"description": candidate.label},
        )


if __name__ == "__main__":
    main()
