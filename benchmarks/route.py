"""A server library's routes: a generic ``-> Response`` route, and the first answer of a process.

``python -m benchmarks.route [--quick]``. Over HTTP: a route annotated ``-> Response`` that
returns :data:`bodies.ITEMS` (1,000 dicts of 8 keys), as a server library's generic route
does, under FastAPI's ``APIRoute`` and under ``DispatchRoute`` (wrk at 32 connections, ratios
to FastAPI's). The first answer: a fresh process per measurement answers one typed model
(``tokens-32``), timed from the request to the end of its answer, in process (the ASGI app
called directly, after the app is built) and over HTTP (a fresh uvicorn, after one answer of
its health route); it also says whether numpy was imported by then. FastAPI and
``DispatchRoute`` alternate, in the order rotated each round.
"""

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

from fastapi import APIRouter, FastAPI
from fastapi.responses import Response

from benchmarks import summary
from benchmarks.runner import (
    ROOT,
    Cell,
    LoadSettings,
    Server,
    ServerConfig,
    get,
    run_load,
    script,
    stderr,
)
from bodies import ITEMS, ResponseModel, body, items
from orjson_dispatch import DispatchRoute

SUITE = "route"
_APP = "benchmarks.route:app"
CONFIGS = (
    ServerConfig(
        "generic-fastapi", "FastAPI APIRoute, -> Response, dicts", _APP, "/generic-fastapi"
    ),
    ServerConfig("generic-route", "DispatchRoute, -> Response, dicts", _APP, "/generic-route"),
)
FIRST = ("first-fastapi", "first-route")  # the paths of the first-answer routes
WHERE = ("in-process", "http")


def first_in_process(path: str) -> None:
    """Print the ms of the first answer of ``path`` by the app called in this process."""
    sent: list[MutableMapping[str, Any]] = []

    async def receive() -> MutableMapping[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)

    async def answer() -> float:
        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
                 "method": "GET", "scheme": "http", "path": path, "raw_path": path.encode(),
                 "query_string": b"", "root_path": "", "headers": [("host", "x")],
                 "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80)}  # fmt: skip
        started = time.perf_counter()
        await app(scope, receive, send)
        return time.perf_counter() - started

    seconds = asyncio.run(answer())
    assert sent[0]["status"] == 200, sent
    print(json.dumps({"ms": seconds * 1e3, "numpy": "numpy" in sys.modules}))


def first_answer(path: str, where: str, logs: Path) -> dict[str, Any]:
    """Return the ms of the first answer of ``path`` in a fresh process, and whether numpy came."""
    if where == "in-process":
        code = f"from benchmarks.route import first_in_process; first_in_process('/{path}')"
        done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                              text=True, check=True)  # fmt: skip
        found: dict[str, Any] = json.loads(done.stdout)
        return found
    server = Server(ServerConfig(path, path, _APP, f"/{path}"), logs)
    try:
        server.wait_ready()
        started = time.perf_counter()
        status, _ = get(server.port, f"/{path}")
        seconds = time.perf_counter() - started
        numpy = get(server.port, "/numpy")[1] == b"true"
        assert status == 200, path
        return {"ms": seconds * 1e3, "numpy": numpy}
    finally:
        server.stop()


def measure(quick: bool, logs: Path) -> dict[str, Any]:
    """Measure the generic route with wrk, then the first answers."""
    settings = LoadSettings(3, 1, 2, 5, 12) if quick else LoadSettings(5, 2, 6, 15, 10)
    generic = run_load(SUITE, CONFIGS, [Cell(ITEMS, 32)], settings, log_dir=logs,
                       answer=lambda c, b: (None, items()))  # fmt: skip
    samples, rounds = [], 5 if quick else 9
    for number in range(rounds):
        for where in WHERE:
            for path in FIRST[number % 2 :] + FIRST[: number % 2]:
                found = first_answer(path, where, logs)
                samples.append({"round": number, "cell": where, "config": path} | found)
                stderr(f"first answer round {number + 1} {where} {path}: {found['ms']:.2f} ms")
    labels = ("FastAPI APIRoute, -> ResponseModel", "DispatchRoute, the same route")
    configs = [{"name": name, "label": label} for name, label in zip(FIRST, labels, strict=True)]
    first = {"configs": configs, "cells": [{"key": w} for w in WHERE], "samples": samples}
    return {"generic": generic, "first": first | {"skipped": []}}


def render(suite: Any) -> list[str]:
    """Return the generic route's tables and the first answers' tables."""
    generic, first = (suite[part] | {"run": suite["run"]} for part in ("generic", "first"))
    title, times = "A generic -> Response route", summary.LATENCY
    lines = summary.section(title, generic, "rps", {"generic-route": ("generic-fastapi",)}, times)
    title = "The first answer of a fresh process"
    lines += summary.section(title, first, "ms", {FIRST[1]: FIRST[:1]}, [])
    numpy = sorted({s["config"] for s in first["samples"] if s["numpy"]})
    return [*lines, f"- numpy imported by the first answer: {', '.join(numpy) or 'none'}", ""]


app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
dispatch_router = APIRouter(route_class=DispatchRoute)


@app.get("/health")
async def health() -> Response:
    return Response(b"ok", media_type="text/plain")


@app.get("/numpy")
async def numpy() -> Response:
    return Response(json.dumps("numpy" in sys.modules), media_type="application/json")


async def generic() -> Response:  # as a server library's route: rows under -> Response
    return items()  # type: ignore[return-value]


async def first() -> ResponseModel:
    return body("tokens-32").model  # type: ignore[return-value]


body("tokens-32")  # built with the app: the first answer times the answer only
app.get("/generic-fastapi")(generic)
app.get("/first-fastapi")(first)
dispatch_router.get("/generic-route")(generic)
dispatch_router.get("/first-route")(first)
app.include_router(dispatch_router)

if __name__ == "__main__":
    raise SystemExit(script(SUITE, measure, render))
