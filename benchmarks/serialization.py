"""Returned bodies over HTTP: ways of answering the same data, one uvicorn process each.

``python -m benchmarks.serialization [--quick]``. One FastAPI app answers
``GET /<configuration>/<body>`` as FastAPI does, as Pydantic's serializer alone, by
``@dispatch``, by ``DispatchRoute`` and by orjson's limit; every configuration answers the same
JSON, checked before measuring. The method: docs/benchmarks.md.
"""

import sys
from pathlib import Path
from typing import Any, cast

import orjson
from fastapi import APIRouter, FastAPI, HTTPException
from fastapi.responses import Response

from benchmarks import summary
from benchmarks.cli import main
from benchmarks.runner import FULL_LOAD, QUICK_LOAD, Cell, ServerConfig, run_load
from bodies import TOOLCALL, TRAINING, Body, ResponseModel, body
from orjson_dispatch import DispatchRoute, dispatch

SUITE = "serialization"
CELLS = (Cell(TRAINING, 32), Cell(TOOLCALL, 32))


def measure(quick: bool, logs: Path) -> dict[str, Any]:
    """Measure every configuration on both bodies with wrk, interleaved."""
    settings = QUICK_LOAD if quick else FULL_LOAD
    return run_load(
        SUITE, CONFIGS, CELLS, settings, answer=lambda b: (None, body(b).data), log_dir=logs
    )


def render(suite: Any) -> list[str]:
    """Return the summary tables of a result file."""
    return summary.section("Serialization over HTTP", suite, "rps", BASELINES, summary.LATENCY)


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
app.include_router(dispatch_router)
CONFIGS = tuple(
    ServerConfig(name, label, "benchmarks.serialization:app", f"/{name}/{{body}}")
    for name, (label, _) in ROUTES.items()
)
#: Every configuration is divided by FastAPI's typed path and by orjson's limit.
BASELINES = dict.fromkeys(ROUTES, ("typed", "orjson-limit"))

if __name__ == "__main__":
    raise SystemExit(main(question=sys.modules[__name__]))
