"""One FastAPI application serving the same bodies every way a user could.

Each route prefix is one serialization configuration; the benchmark harness starts one uvicorn
process per configuration and sends load only to that configuration's route, so the other
routes cost nothing but a few regex matches, the same for every configuration.

``GET /<configuration>/<body>`` answers the body called ``<body>`` (see
:func:`benchmarks.bodies.body`) as JSON. Every configuration answers the same JSON document;
the harness checks that before it measures.
"""

import warnings

import orjson
from fastapi import APIRouter, FastAPI, HTTPException
from fastapi.exceptions import FastAPIDeprecationWarning
from fastapi.responses import JSONResponse, ORJSONResponse, Response

from benchmarks.bodies import Body, ResponseModel, body
from orjson_dispatch import DispatchRoute, dispatch

# ORJSONResponse is deprecated since FastAPI 0.130 (the typed path serializes with Pydantic's
# Rust core instead) but still shipped; it stays here because many deployed apps use it.
warnings.filterwarnings("ignore", category=FastAPIDeprecationWarning)

app = FastAPI(title="orjson-dispatch benchmark", openapi_url=None, docs_url=None, redoc_url=None)


def _body(name: str) -> Body:
    """Return the body called ``name``, or answer 404."""
    try:
        return body(name)
    except KeyError:
        raise HTTPException(404, f"no body called {name!r}") from None


@app.get("/health")
async def health() -> Response:
    """Answer 200 once the application is up."""
    return Response(b"ok", media_type="text/plain")


# The two endpoints without a return annotation are the point of the benchmark: FastAPI's
# untyped default path (jsonable_encoder, then json.dumps in JSONResponse).
@app.get("/untyped/{name}")
async def untyped(name: str):  # type: ignore[no-untyped-def]
    """FastAPI's untyped default: ``jsonable_encoder(model)`` then ``json.dumps``."""
    return _body(name).model


@app.get("/typed/{name}")
async def typed(name: str) -> ResponseModel:
    """FastAPI's typed path: validation, then Pydantic's ``dump_json`` (FastAPI >= 0.130)."""
    return _body(name).model


@app.get("/dump-json/{name}")
async def dump_json(name: str) -> Response:
    """Pydantic's own serializer without validation: ``model.model_dump_json()``."""
    return Response(_body(name).model.model_dump_json(by_alias=True), media_type="application/json")


@app.get("/orjson-response/{name}", response_class=ORJSONResponse)
async def orjson_response(name: str) -> ResponseModel:
    """The pre-0.130 recipe: typed, ``model_dump(mode="json")``, then ``orjson.dumps``."""
    return _body(name).model


@app.get("/starlette-json/{name}")
async def starlette_json(name: str) -> JSONResponse:
    """Starlette's ``JSONResponse`` (``json.dumps``) on the ready dict."""
    return JSONResponse(_body(name).data)


@app.get("/orjson-limit/{name}")
async def orjson_limit(name: str) -> Response:
    """The limit of orjson: ``Response(orjson.dumps(d))`` on the ready dict ``d``."""
    return Response(orjson.dumps(_body(name).data), media_type="application/json")


@app.get("/bytes-limit/{name}")
async def bytes_limit(name: str) -> Response:
    """The transport's limit: the finished bytes, serialized once at startup."""
    return Response(_body(name).json, media_type="application/json")


@app.get("/dispatch-model/{name}")
@dispatch
async def dispatch_model(name: str) -> ResponseModel:
    """``@dispatch`` returning the model, declared as the return type."""
    return _body(name).model


@app.get("/dispatch-dict/{name}")
@dispatch
async def dispatch_dict(name: str):  # type: ignore[no-untyped-def]
    """``@dispatch`` returning the ready dict, without an annotation (untyped semantics)."""
    return _body(name).data


dispatch_router = APIRouter(route_class=DispatchRoute)


@dispatch_router.get("/dispatch-route/{name}")
async def dispatch_route(name: str) -> ResponseModel:
    """``DispatchRoute`` on a router, returning the model declared as the return type."""
    return _body(name).model


app.include_router(dispatch_router)
