"""One FastAPI app answering ``GET /<configuration>/<body>`` every way a user could.

Every configuration answers the same JSON document (the harness checks it before measuring);
one uvicorn process runs per configuration and load goes to its route alone, so the other
routes cost a few regex matches, the same for all.
"""

import warnings

import orjson
from fastapi import APIRouter, FastAPI, HTTPException
from fastapi.exceptions import FastAPIDeprecationWarning
from fastapi.responses import JSONResponse, ORJSONResponse, Response

from benchmarks.bodies import Body, ResponseModel, body
from orjson_dispatch import DispatchRoute, dispatch

# ORJSONResponse is deprecated since FastAPI 0.130 but stays: many deployed apps use it.
warnings.filterwarnings("ignore", category=FastAPIDeprecationWarning)

app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
dispatch_router = APIRouter(route_class=DispatchRoute)


def _body(name: str) -> Body:
    try:
        return body(name)
    except KeyError:
        raise HTTPException(404, f"no body called {name!r}") from None


@app.get("/health")
async def health() -> Response:
    return Response(b"ok", media_type="text/plain")


# No return annotation: FastAPI's untyped path (jsonable_encoder, then json.dumps).
@app.get("/untyped/{name}")
async def untyped(name: str):  # type: ignore[no-untyped-def]
    return _body(name).model


@app.get("/typed/{name}")  # validation, then Pydantic's dump_json
async def typed(name: str) -> ResponseModel:
    return _body(name).model


@app.get("/dump-json/{name}")  # Pydantic's serializer without validation
async def dump_json(name: str) -> Response:
    return Response(_body(name).model.model_dump_json(by_alias=True), media_type="application/json")


@app.get("/orjson-response/{name}", response_class=ORJSONResponse)
async def orjson_response(name: str) -> ResponseModel:
    return _body(name).model


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
    return _body(name).model


@app.get("/dispatch-dict/{name}")
@dispatch
async def dispatch_dict(name: str):  # type: ignore[no-untyped-def]
    return _body(name).data


@dispatch_router.get("/dispatch-route/{name}")
async def dispatch_route(name: str) -> ResponseModel:
    return _body(name).model


app.include_router(dispatch_router)
