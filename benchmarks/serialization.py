"""Returned bodies over HTTP: ways of answering the same data, one uvicorn process each.

``python -m benchmarks.serialization [--quick]``. One FastAPI app answers
``GET /<configuration>/<body>`` as FastAPI does, as Pydantic's serializer alone, by
``@dispatch``, by ``DispatchRoute`` and by orjson's limit; every configuration answers the same
JSON, checked before measuring. Then a server library's generic route: ``-> Response``
returning :func:`bodies.items`, under ``APIRoute`` and ``DispatchRoute``. Then the first answer
of a typed route, by a fresh uvicorn each time. The method: docs/benchmarks.md.
"""

import sys
import time
from pathlib import Path
from typing import Any, cast

import orjson
from fastapi import APIRouter, FastAPI, HTTPException
from fastapi.responses import Response

from benchmarks import summary
from benchmarks.cli import main
from benchmarks.runner import Cell, ServerConfig, ServerError, get, interleaved, run_load, running
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


def first_answer(path: str, logs: Path) -> tuple[dict[str, Any], str]:
    """Return the ms of the first answer of ``path`` by a fresh uvicorn, after it is ready."""
    with running([ServerConfig(path, path, _APP, f"/{path}")], logs) as servers:
        started = time.perf_counter()
        status, _ = get(servers[path].port, f"/{path}")
        ms = (time.perf_counter() - started) * 1e3
    if status != 200:
        raise ServerError(f"{path} answered its first request {status}")
    return {"ms": ms}, f"{ms:.2f} ms"


def measure(quick: bool, logs: Path) -> dict[str, Any]:
    """Measure both bodies, then the generic route, with wrk; then the first answers."""
    bodies = run_load(
        SUITE, CONFIGS, CELLS, quick, answer=lambda b: (None, body(b).data), log_dir=logs
    )
    generic = run_load(
        "generic", GENERIC, [Cell(ITEMS, 32)], quick, answer=lambda b: (None, items()), log_dir=logs
    )
    rounds = 5 if quick else 9
    first = interleaved(
        "first answer", FIRST, ["http"], rounds, lambda _, path: first_answer(path, logs)
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
    return lines + summary.section(title, first, "ms", {"first-route": ("first-fastapi",)}, [])


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
