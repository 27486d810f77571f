"""Serialization alone, in process, timed by pyperf: every way of turning a body into JSON.

pyperf's Runner does the timing: it spawns worker processes, calibrates the loop count,
runs warmups, and stores every value with the machine's metadata in its JSON format, which
``python -m pyperf stats|hist|compare_to`` read. The harness runs this module once per body
(``python -m benchmarks.inprocess --body NAME --append FILE ...``); every candidate's output
is checked against the reference before it is timed.
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

from benchmarks.bodies import Body, ResponseModel, body
from orjson_dispatch import dumps

#: The module pyperf runs again in each worker process.
_PROGRAM = ("-m", "benchmarks.inprocess")


@dataclass(frozen=True)
class Candidate:
    """One serialization to time.

    Attributes:
        name: Short identifier, the pyperf benchmark's name after ``<body>/``.
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


def measure(body_names: list[str], options: list[str], directory: Path) -> dict[str, Any]:
    """Time every candidate on each body with pyperf and return pyperf's suite as JSON data.

    ``options`` are pyperf Runner options (``--processes=6``, ``--fast``, ...). Benchmarks are
    named ``<body>/<candidate>``; each carries its label as the metadata
    ``description``. The suite is also left in ``directory/inprocess.json``.

    Raises:
        subprocess.CalledProcessError: pyperf failed (e.g. a candidate's output differs).
    """
    path = directory / "inprocess.json"
    path.unlink(missing_ok=True)
    for name in body_names:
        command = [sys.executable, *_PROGRAM, "--body", name, f"--append={path}"]
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
    item = body(args.body)
    for candidate in candidates(item):
        if orjson.loads(candidate.encode()) != item.data:
            raise AssertionError(f"{candidate.name} encodes {args.body} differently")
        runner.bench_func(
            f"{args.body}/{candidate.name}",
            candidate.encode,
            metadata={"description": candidate.label},
        )


if __name__ == "__main__":
    main()
