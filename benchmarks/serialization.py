"""Returned bodies over HTTP: ways of answering the same data, one uvicorn process each.

``python -m benchmarks.serialization [--quick]``. One FastAPI app answers
``GET /<configuration>/<body>`` as FastAPI does, as Pydantic's serializer alone, by
``@dispatch``, by ``DispatchRoute`` and by orjson's limit; every configuration answers the same
JSON, checked before measuring. Then a server library's generic route: ``-> Response``
returning :func:`bodies.items`, under ``APIRoute`` and ``DispatchRoute``. Then the first answer
of a typed route in a fresh process per run, in process (the ASGI app called) and over HTTP (a
fresh uvicorn), and whether numpy was imported by then. The method: docs/benchmarks.md.
"""

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import MutableMapping
from functools import partial
from pathlib import Path
from typing import Any, cast

import orjson
from fastapi import APIRouter, FastAPI, HTTPException
from fastapi.responses import Response

from benchmarks import summary
from benchmarks.cli import main
from benchmarks.runner import (
    FULL_LOAD,
    QUICK_LOAD,
    ROOT,
    Cell,
    ServerConfig,
    get,
    interleaved,
    run_load,
    running,
)
from bodies import ITEMS, TOOLCALL, TRAINING, Body, ResponseModel, body, items
from orjson_dispatch import DispatchRoute, dispatch

SUITE = "serialization"
_APP = "benchmarks.serialization:app"
CELLS = (Cell(TRAINING, 32), Cell(TOOLCALL, 32))
GENERIC = (
    ServerConfig(
        "generic-fastapi", "FastAPI APIRoute, -> Response, dicts", _APP, "/generic-fastapi"
    ),
    ServerConfig("generic-route", "DispatchRoute, -> Response, dicts", _APP, "/generic-route"),
)
#: The paths of the first-answer routes, and their labels.
FIRST = {
    "first-fastapi": "FastAPI APIRoute, -> ResponseModel",
    "first-route": "DispatchRoute, the same route",
}
WHERE = ("in-process", "http")


def first_in_process(path: str) -> None:
    """Print the ms of the first answer of ``path`` by the app called in this process."""
    sent: list[MutableMapping[str, Any]] = []

    async def receive() -> MutableMapping[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)

    async def answer() -> float:
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "GET",
            "scheme": "http",
            "path": path,
            "raw_path": path.encode(),
            "query_string": b"",
            "root_path": "",
            "headers": [("host", "x")],
            "client": ("127.0.0.1", 1),
            "server": ("127.0.0.1", 80),
        }
        started = time.perf_counter()
        await app(scope, receive, send)
        return time.perf_counter() - started

    seconds = asyncio.run(answer())
    assert sent[0]["status"] == 200, sent
    print(json.dumps({"ms": seconds * 1e3, "numpy": "numpy" in sys.modules}))


def first_answer(where: str, path: str, logs: Path) -> tuple[dict[str, Any], str]:
    """Return the ms of the first answer of ``path`` in a fresh process, and whether numpy came."""
    if where == "in-process":
        code = f"from {__name__} import first_in_process; first_in_process('/{path}')"
        done = subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
        )
        found: dict[str, Any] = json.loads(done.stdout)
    else:
        with running([ServerConfig(path, path, _APP, f"/{path}")], logs) as servers:
            port, started = servers[path].port, time.perf_counter()
            status, _ = get(port, f"/{path}")
            found = {
                "ms": (time.perf_counter() - started) * 1e3,
                "numpy": get(port, "/numpy")[1] == b"true",
            }
            assert status == 200, path
    return found, f"{found['ms']:.2f} ms"


def measure(quick: bool, logs: Path) -> dict[str, Any]:
    """Measure both bodies, then the generic route, with wrk; then the first answers."""
    settings = QUICK_LOAD if quick else FULL_LOAD
    bodies = run_load(
        SUITE, CONFIGS, CELLS, settings, answer=lambda b: (None, body(b).data), log_dir=logs
    )
    generic = run_load(
        "generic",
        GENERIC,
        [Cell(ITEMS, 32)],
        settings,
        answer=lambda b: (None, items()),
        log_dir=logs,
    )
    first = interleaved(
        "first answer", FIRST, WHERE, 5 if quick else 9, partial(first_answer, logs=logs)
    )
    return bodies | {"generic": generic, "first": first}


def render(suite: Any) -> list[str]:
    """Return the bodies' tables, the generic route's and the first answers'."""
    lines = summary.section("Serialization over HTTP", suite, "rps", BASELINES, summary.LATENCY)
    if "first" not in suite:
        return lines
    generic, first = (suite[part] | {"run": suite["run"]} for part in ("generic", "first"))
    title, times = "A generic -> Response route", summary.LATENCY
    lines += summary.section(title, generic, "rps", {"generic-route": ("generic-fastapi",)}, times)
    title = "The first answer of a fresh process"
    lines += summary.section(title, first, "ms", {"first-route": ("first-fastapi",)}, [])
    numpy = sorted({s["config"] for s in first["samples"] if s["numpy"]})
    return [*lines, f"- numpy imported by the first answer: {', '.join(numpy) or 'none'}", ""]


# --- the app ----------------------------------------------------------------------------------

app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
dispatch_router = APIRouter(route_class=DispatchRoute)


def _body(name: str) -> Body:
    try:
        return body(name)
    except KeyError:
        raise HTTPException(404, f"no body called {name!r}") from None


def _json(content: bytes | str) -> Response:
    return Response(content, media_type="application/json")


async def typed(name: str) -> ResponseModel:  # validation, then Pydantic's dump_json
    return cast(ResponseModel, _body(name).model)


async def dump_json(name: str) -> Response:  # Pydantic's serializer without validation
    return _json(_body(name).model.model_dump_json(by_alias=True))


async def orjson_limit(name: str) -> Response:
    return _json(orjson.dumps(_body(name).data))


#: Name: label and endpoint. ``dispatch-route`` is a route of an
#: ``APIRouter(route_class=DispatchRoute)``. The @dispatch wrapper is made before any route:
#: wrapping a function a route serves is warned.
ROUTES = {
    "typed": ("FastAPI typed (-> Model: validate + Pydantic dump_json)", typed),
    "dump-json": ("Response(model.model_dump_json()) (Pydantic's serializer alone)", dump_json),
    "dispatch-model": ("@dispatch returning the model (-> Model)", dispatch(typed)),
    "dispatch-route": ("APIRouter(route_class=DispatchRoute), -> Model", typed),
    "orjson-limit": ("Response(orjson.dumps(d)) on a ready dict (orjson's limit)", orjson_limit),
}
for name, (_, endpoint) in ROUTES.items():
    router = dispatch_router if name == "dispatch-route" else app.router
    router.get(f"/{name}/{{name}}")(endpoint)
CONFIGS = tuple(
    ServerConfig(name, label, _APP, f"/{name}/{{body}}") for name, (label, _) in ROUTES.items()
)
#: Every configuration is divided by FastAPI's typed path and by orjson's limit.
BASELINES = dict.fromkeys(ROUTES, ("typed", "orjson-limit"))


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
    raise SystemExit(main(question=sys.modules[__name__]))
