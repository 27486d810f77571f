"""Returned bodies over HTTP: every way of answering the same data, one uvicorn process each.

``python -m benchmarks.serialization [--quick]``. One FastAPI app answers
``GET /<configuration>/<body>`` every way a user could, and a Litestar app the ready dict
(msgspec encodes it); every configuration answers the same JSON, checked before measuring.
The method: docs/benchmarks.md.
"""

import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import orjson
from fastapi import APIRouter, FastAPI, HTTPException
from fastapi.exceptions import FastAPIDeprecationWarning
from fastapi.responses import JSONResponse, ORJSONResponse, Response
from litestar import Litestar
from litestar import get as litestar_get
from litestar.exceptions import NotFoundException

from benchmarks import summary
from benchmarks.cli import main
from benchmarks.runner import FULL_LOAD, QUICK_LOAD, Cell, ServerConfig, run_load
from bodies import SDK_TOOLCALL, SDK_TRAINING, TOOLCALL, TRAINING, Body, ResponseModel, body
from bodies.sdk_corpus import TrainingResponse
from orjson_dispatch import DispatchRoute, dispatch

SUITE = "serialization"
_SYNTHETIC = (TRAINING, "tokens-1024", "tokens-32", TOOLCALL)
_SCALING = ("tokens-256", "tokens-4096", "tokens-16384", "tokens-262144")
#: Four bodies at 1, 32 (the profile's duration) and 256 connections (1 s, longer for slow
#: configurations), the 1.5k-token body, the SDK bodies, the scaling sizes at one connection.
FULL = (
    *(Cell(b, c, duration_s=None if c == 32 else 1) for c in (1, 32, 256) for b in _SYNTHETIC),
    Cell("tokens-1536", 32),
    *(Cell(b, 32) for b in (SDK_TRAINING, SDK_TOOLCALL)),
    *(Cell(b, 1, duration_s=1) for b in _SCALING),
)
QUICK = (Cell(TRAINING, 32), Cell(TOOLCALL, 32))
QUICK_CONFIGS = ("typed", "dump-json", "dispatch-model", "dispatch-route", "orjson-limit")


def measure(quick: bool, logs: Path) -> dict[str, Any]:
    """Measure the profile: wrk at each cell's connections, configurations interleaved."""
    configs = [c for c in CONFIGS if not quick or c.name in QUICK_CONFIGS]
    cells, settings = (QUICK, QUICK_LOAD) if quick else (FULL, FULL_LOAD)
    return run_load(
        SUITE, configs, cells, settings, answer=lambda b: (None, body(b).data), log_dir=logs
    )


def render(suite: Any) -> list[str]:
    """Return the summary tables of a result file."""
    return summary.section("Serialization over HTTP", suite, "rps", BASELINES, summary.LATENCY)


# --- the apps ---------------------------------------------------------------------------------

# ORJSONResponse is deprecated since FastAPI 0.130 but stays: many deployed apps use it.
warnings.filterwarnings("ignore", category=FastAPIDeprecationWarning)
_APP = "benchmarks.serialization:"
app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
dispatch_router = APIRouter(route_class=DispatchRoute)


def _body(name: str) -> Body:
    try:
        return body(name)
    except KeyError:
        raise HTTPException(404, f"no body called {name!r}") from None


def _json(content: bytes | str) -> Response:
    return Response(content, media_type="application/json")


async def sdk_typed(name: str) -> TrainingResponse:
    return cast(TrainingResponse, _body(f"sdk-{name}").model)


async def typed(name: str) -> ResponseModel:  # validation, then Pydantic's dump_json
    return cast(ResponseModel, _body(name).model)


async def untyped(name: str):  # type: ignore[no-untyped-def]  # jsonable_encoder + json.dumps
    return _body(name).model


async def ready_dict(name: str):  # type: ignore[no-untyped-def]
    return _body(name).data


async def dump_json(name: str) -> Response:  # Pydantic's serializer without validation
    return _json(_body(name).model.model_dump_json(by_alias=True))


async def starlette_json(name: str) -> JSONResponse:
    return JSONResponse(_body(name).data)


async def orjson_limit(name: str) -> Response:
    return _json(orjson.dumps(_body(name).data))


async def bytes_limit(name: str) -> Response:  # the transport's limit: bytes serialized once
    return _json(_body(name).json)


async def helper(name: str) -> Response:  # what model servers write by hand
    return _json(orjson.dumps(_body(name).model.model_dump(mode="json", by_alias=True)))


#: Name: label and endpoints, a typed pair's first answering the SDK bodies (``sdk-*``, matched
#: first: they declare their own class); ``litestar`` has none here, the Litestar app answers it.
#: The ``dispatch-route*`` routes are those of an ``APIRouter(route_class=DispatchRoute)``. The
#: @dispatch wrappers are made before any route: wrapping a function a route serves is warned.
TYPED, DISPATCHED = (sdk_typed, typed), (dispatch(sdk_typed), dispatch(typed))
ROUTES: dict[str, tuple[str, tuple[Callable[..., Any], ...]]] = {
    "untyped": ("FastAPI untyped (jsonable_encoder + json.dumps)", (untyped,)),
    "starlette-json": ("Starlette JSONResponse on the dict (json.dumps)", (starlette_json,)),
    "orjson-response": ("FastAPI typed, response_class=ORJSONResponse (deprecated)", TYPED),
    "typed": ("FastAPI typed (-> Model: validate + Pydantic dump_json)", TYPED),
    "dump-json": ("Response(model.model_dump_json()) (Pydantic's serializer alone)", (dump_json,)),
    "litestar": ("Litestar returning the ready dict (msgspec; framework peer)", ()),
    "dispatch-model": ("@dispatch returning the model (-> Model)", DISPATCHED),
    "dispatch-dict": ("@dispatch returning the ready dict (untyped)", (dispatch(ready_dict),)),
    "dispatch-route": ("APIRouter(route_class=DispatchRoute), -> Model", TYPED),
    "dispatch-untyped": ("@dispatch returning the model (untyped)", (dispatch(untyped),)),
    "dispatch-route-untyped": ("DispatchRoute returning the model (untyped)", (untyped,)),
    "helper": ('Response(orjson.dumps(model.model_dump(mode="json"))) (the helper)', (helper,)),
    "orjson-limit": ("Response(orjson.dumps(d)) on a ready dict (orjson's limit)", (orjson_limit,)),
    "bytes-limit": ("Response(pre-serialized bytes) (the transport's limit)", (bytes_limit,)),
}
for name, (_, endpoints) in ROUTES.items():
    router = dispatch_router if name.startswith("dispatch-route") else app.router
    options: dict[str, Any] = (
        {"response_class": ORJSONResponse} if name == "orjson-response" else {}
    )
    if len(endpoints) == 2:
        router.get(f"/{name}/sdk-{{name}}", **options)(endpoints[0])
    if endpoints:
        router.get(f"/{name}/{{name}}", **options)(endpoints[-1])
app.include_router(dispatch_router)
CONFIGS = tuple(
    ServerConfig(
        name, label, _APP + ("litestar_app" if name == "litestar" else "app"), f"/{name}/{{body}}"
    )
    for name, (label, _) in ROUTES.items()
)
#: Every configuration is divided by FastAPI's two paths, the helper and orjson's limit.
BASELINES = dict.fromkeys((c.name for c in CONFIGS), ("untyped", "typed", "helper", "orjson-limit"))


@litestar_get("/litestar/{name:str}")
async def litestar_body(name: str) -> dict[str, Any]:
    try:
        return body(name).data
    except KeyError:
        raise NotFoundException(f"no body called {name!r}") from None


with warnings.catch_warnings():  # the "{name:str}" path style: Litestar >= 2.12 reads it
    warnings.simplefilter("ignore", DeprecationWarning)
    litestar_app = Litestar(route_handlers=[litestar_body], openapi_config=None)

if __name__ == "__main__":
    raise SystemExit(main(question=sys.modules[__name__]))
