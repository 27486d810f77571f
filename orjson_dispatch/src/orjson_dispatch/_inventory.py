"""Which routes of an app serialize what their endpoints return with orjson."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any

from orjson_dispatch import _fastapi
from orjson_dispatch._diagnostics import methods
from orjson_dispatch._dispatch import wrapped_endpoint

__all__ = ["dispatched_routes"]


def dispatched_routes(app: Any) -> dict[str, bool]:
    """Return, for each route of `app`, whether orjson serializes what its endpoint returns.

    Args:
        app: A FastAPI or Starlette app, or a FastAPI `APIRouter`.

    Returns:
        `{"GET,POST /path": served_by_orjson}` for every HTTP route, in the order the app tries
        them: included routers with their prefixes, mounted apps under their mount paths.
        True for a `DispatchRoute` that does not leave the route to FastAPI, and for an endpoint
        wrapped in `dispatch` that answers its values itself (not a generator endpoint outside
        `DispatchRoute`, not under a response class that renders something else than JSON).
    """
    return {f"{verbs} {path}": served for verbs, path, served in _walk(app, "")}


def _walk(owner: Any, prefix: str) -> Iterator[tuple[str, str, bool]]:
    for route in _fastapi.served_routes(getattr(owner, "routes", ())):
        mounted = getattr(route, "routes", None)
        if mounted is not None and not hasattr(route, "endpoint"):  # a Mount or Host
            yield from _walk(route, prefix + getattr(route, "path", ""))
            continue
        endpoint = getattr(route, "endpoint", None)
        if endpoint is None:
            continue  # a websocket route or an app of its own
        yield methods(route), prefix + route.path, _served_by_orjson(route)


def _served_by_orjson(route: Any) -> bool:
    original = _fastapi.original_route(route)
    try:
        from orjson_dispatch._route import DispatchRoute, left_to_fastapi  # noqa: PLC0415
    except ImportError:  # a Starlette app without FastAPI
        DispatchRoute = left_to_fastapi = None  # type: ignore[assignment,misc]
    if DispatchRoute is not None and isinstance(original, DispatchRoute):
        return left_to_fastapi(route) is None
    marker = wrapped_endpoint(route.endpoint)
    if (
        marker is None
        or inspect.isasyncgenfunction(marker[0])
        or inspect.isgeneratorfunction(marker[0])
    ):
        return False
    if not hasattr(route, "response_field"):
        return True  # a Starlette route: the decorator answers it
    from orjson_dispatch._responder import answers_as_json  # noqa: PLC0415

    return answers_as_json(route)
