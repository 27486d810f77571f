"""One FastAPI app reading ``POST /<configuration>/<body>`` every way a user could.

Every configuration answers the same counts of the request (the harness checks them before
measuring), in a ``Response`` of its own: only the reading of the body differs.
"""

from typing import Annotated, Any

import orjson
from fastapi import Body, FastAPI, Request
from fastapi.responses import Response
from fastapi.routing import APIRoute
from pydantic import TypeAdapter

from benchmarks.bodies import TurnsRequest
from orjson_dispatch import DispatchRoute

app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
_DICT = TypeAdapter(dict[str, Any])  # what FastAPI validates a body: dict with


def _counts(turns: list[Any]) -> Response:
    tokens = sum(len(t.get("token_ids", ()) if isinstance(t, dict) else t.token_ids) for t in turns)
    return Response(orjson.dumps({"items": len(turns), "tokens": tokens}))


@app.get("/health")
async def health() -> Response:
    return Response(b"ok", media_type="text/plain")


async def read_dict(name: str, body: Annotated[dict[str, Any], Body()]) -> Response:
    return _counts(body["input"])


async def read_typed(name: str, body: TurnsRequest) -> Response:
    return _counts(body.input)


# FastAPI's route and DispatchRoute's one after it, on the app's router (an included router
# costs more per request; each route before a path costs its match).
for kind, endpoint in (("dict", read_dict), ("typed", read_typed)):
    for name, route_class in (("fastapi", APIRoute), ("route", DispatchRoute)):
        app.router.add_api_route(
            f"/{name}-{kind}/{{name}}", endpoint, methods=["POST"], route_class_override=route_class
        )


@app.post("/limit-dict/{name}")
async def limit_dict(name: str, request: Request) -> Response:
    return _counts(_DICT.validate_python(orjson.loads(await request.body()))["input"])


@app.post("/limit-typed/{name}")
async def limit_typed(name: str, request: Request) -> Response:
    return _counts(TurnsRequest.model_validate(orjson.loads(await request.body())).input)


@app.post("/validate-json/{name}")
async def validate_json(name: str, request: Request) -> Response:
    return _counts(TurnsRequest.model_validate_json(await request.body()).input)
