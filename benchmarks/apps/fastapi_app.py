"""One FastAPI app answering ``GET /<configuration>/<body>`` every way a user could.

Every configuration answers the same JSON document (the harness checks it before measuring);
one uvicorn process runs per configuration and load goes to its route alone, so the other
routes cost a few regex matches, the same for all. Typed configurations declare the body's own
class: ``ResponseModel``, or ``TrainingResponse`` for the SDK-type bodies ``sdk-training`` and
``sdk-toolcall`` (routes ``/<configuration>/sdk-<name>``, matched first).
"""

import warnings
from typing import TypeVar

import orjson
from fastapi import APIRouter, FastAPI, HTTPException
from fastapi.exceptions import FastAPIDeprecationWarning
from fastapi.responses import JSONResponse, ORJSONResponse, Response
from pydantic import BaseModel

from benchmarks.bodies import Body, ResponseModel, body
from orjson_dispatch import DispatchRoute, dispatch
from tests.orjson_dispatch.sdk_corpus import TrainingResponse

# ORJSONResponse is deprecated since FastAPI 0.130 but stays: many deployed apps use it.
warnings.filterwarnings("ignore", category=FastAPIDeprecationWarning)

app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
dispatch_router = APIRouter(route_class=DispatchRoute)
M = TypeVar("M", bound=BaseModel)


def _body(name: str) -> Body:
    try:
        return body(name)
    except KeyError:
        raise HTTPException(404, f"no body called {name!r}") from None


def _model(name: str, cls: type[M]) -> M:
    model = _body(name).model
    if not isinstance(model, cls):
        raise HTTPException(404, f"the body {name!r} is no {cls.__name__}")
    return model


async def sdk_typed(name: str) -> TrainingResponse:
    return _model(f"sdk-{name}", TrainingResponse)


app.get("/typed/sdk-{name}")(sdk_typed)
app.get("/orjson-response/sdk-{name}", response_class=ORJSONResponse)(sdk_typed)
app.get("/dispatch-model/sdk-{name}")(dispatch(sdk_typed))
dispatch_router.get("/dispatch-route/sdk-{name}")(sdk_typed)


@app.get("/health")
async def health() -> Response:
    return Response(b"ok", media_type="text/plain")


# No return annotation: FastAPI's untyped path (jsonable_encoder, then json.dumps).
@app.get("/untyped/{name}")
async def untyped(name: str):  # type: ignore[no-untyped-def]
    return _body(name).model


@app.get("/typed/{name}")  # validation, then Pydantic's dump_json
async def typed(name: str) -> ResponseModel:
    return _model(name, ResponseModel)


@app.get("/dump-json/{name}")  # Pydantic's serializer without validation
async def dump_json(name: str) -> Response:
    return Response(_body(name).model.model_dump_json(by_alias=True), media_type="application/json")


@app.get("/orjson-response/{name}", response_class=ORJSONResponse)
async def orjson_response(name: str) -> ResponseModel:
    return _model(name, ResponseModel)


@app.get("/starlette-json/{name}")
async def starlette_json(name: str) -> JSONResponse:
    return JSONResponse(_body(name).data)


@app.get("/orjson-limit/{name}")
async def orjson_limit(name: str) -> Response:
    return Response(orjson.dumps(_body(name).data), media_type="application/json")


@app.get("/bytes-limit/{name}")  # the transport's limit: bytes serialized once
async def bytes_limit(name: str) -> Response:
    return Response(_body(name).json, media_type="application/json")


@app.get("/dispatch-model/{name}")
@dispatch
async def dispatch_model(name: str) -> ResponseModel:
    return _model(name, ResponseModel)


@app.get("/dispatch-dict/{name}")
@dispatch
async def dispatch_dict(name: str):  # type: ignore[no-untyped-def]
    return _body(name).data


@dispatch_router.get("/dispatch-route/{name}")
async def dispatch_route(name: str) -> ResponseModel:
    return _model(name, ResponseModel)


@app.get("/helper/{name}")  # what model servers write by hand
async def helper(name: str) -> Response:
    model = _body(name).model
    return Response(orjson.dumps(model.model_dump(mode="json", by_alias=True)),
                    media_type="application/json")  # fmt: skip


@app.get("/dispatch-untyped/{name}")
@dispatch
async def dispatch_untyped(name: str):  # type: ignore[no-untyped-def]
    return _body(name).model


@dispatch_router.get("/dispatch-route-untyped/{name}")
async def dispatch_route_untyped(name: str):  # type: ignore[no-untyped-def]
    return _body(name).model


app.include_router(dispatch_router)
