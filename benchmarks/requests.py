"""Request bodies over HTTP: every way of reading the same JSON body, one uvicorn process each.

``python -m benchmarks.requests [--quick]``. POSTs of ``multi-turn`` (~1.7 MB) and ``chat``
(~2 KB), read as a dict or a ``TurnsRequest`` by FastAPI, ``DispatchRoute`` and the limit of
each kind; every endpoint answers the same counts in a ``Response`` of its own, so that only
the reading of the body differs. The method: docs/benchmarks.md.
"""

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import orjson
from fastapi import Body, FastAPI, Request
from fastapi.responses import Response
from fastapi.routing import APIRoute
from pydantic import TypeAdapter

from benchmarks import summary
from benchmarks.cli import main
from benchmarks.runner import Cell, ServerConfig, run_load
from bodies import CHAT, MULTI_TURN, TurnsRequest, request, request_answer
from orjson_dispatch import DispatchRoute

SUITE = "requests"
BASELINES = {
    "route-dict": ("fastapi-dict", "limit-dict"),
    "limit-dict": ("fastapi-dict",),
    "route-typed": ("fastapi-typed", "limit-typed", "validate-json"),
    "limit-typed": ("fastapi-typed",),
    "validate-json": ("fastapi-typed",),
}
CELLS = (Cell(MULTI_TURN, 32), Cell(CHAT, 32))


def measure(quick: bool, logs: Path) -> dict[str, Any]:
    """Measure every configuration on both bodies, interleaved."""
    return run_load(
        SUITE,
        CONFIGS,
        CELLS,
        quick,
        log_dir=logs,
        answer=lambda name: (request(name), request_answer(name)),
    )


def render(suite: Any) -> list[str]:
    """Return the summary tables of a result file."""
    return summary.section("Request bodies over HTTP", suite, "rps", BASELINES, summary.LATENCY)


app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
_DICT = TypeAdapter(dict[str, Any])  # what FastAPI validates a body: dict with


def _counts(turns: list[Any]) -> Response:
    tokens = sum(len(t.get("token_ids", ()) if isinstance(t, dict) else t.token_ids) for t in turns)
    return Response(orjson.dumps({"items": len(turns), "tokens": tokens}))


async def read_dict(name: str, body: Annotated[dict[str, Any], Body()]) -> Response:
    return _counts(body["input"])


async def read_typed(name: str, body: TurnsRequest) -> Response:
    return _counts(body.input)


async def limit_dict(name: str, request: Request) -> Response:
    return _counts(_DICT.validate_python(orjson.loads(await request.body()))["input"])


async def limit_typed(name: str, request: Request) -> Response:
    return _counts(TurnsRequest.model_validate(orjson.loads(await request.body())).input)


async def validate_json(name: str, request: Request) -> Response:
    return _counts(TurnsRequest.model_validate_json(await request.body()).input)


#: Name: label and endpoint. Every route is on the app's own router, each ``route-*`` one a
#: ``DispatchRoute`` right after FastAPI's (an included router costs more per request; each
#: route before a path costs its match).
ROUTES: dict[str, tuple[str, Callable[..., Any]]] = {
    "fastapi-dict": ("FastAPI, body: dict = Body() (json.loads)", read_dict),
    "route-dict": ("DispatchRoute, body: dict = Body()", read_dict),
    "limit-dict": ("orjson.loads(await request.body()) + the same dict validation", limit_dict),
    "fastapi-typed": ("FastAPI, body: TurnsRequest (json.loads, then validation)", read_typed),
    "route-typed": ("DispatchRoute, body: TurnsRequest", read_typed),
    "limit-typed": (
        "orjson.loads(await request.body()) + TurnsRequest.model_validate",
        limit_typed,
    ),
    "validate-json": ("TurnsRequest.model_validate_json(await request.body())", validate_json),
}
for name, (_, endpoint) in ROUTES.items():
    route_class = DispatchRoute if name.startswith("route-") else APIRoute
    path = f"/{name}/{{name}}"
    app.router.add_api_route(path, endpoint, methods=["POST"], route_class_override=route_class)
CONFIGS = tuple(
    ServerConfig(name, label, "benchmarks.requests:app", f"/{name}/{{body}}")
    for name, (label, _) in ROUTES.items()
)

if __name__ == "__main__":
    raise SystemExit(main(question=sys.modules[__name__]))
