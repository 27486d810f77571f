"""Which routes of an app serialize what their endpoints return with orjson."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from orjson_dispatch import _fastapi
from orjson_dispatch._diagnostics import methods
from orjson_dispatch._serving import serving

__all__ = ["dispatched_routes"]


def dispatched_routes(app: Any) -> dict[str, bool]:
    """Return, for each route of `app`, whether orjson serializes what its endpoint returns.

    Args:
        app: A FastAPI or Starlette app, or a FastAPI `APIRouter`.

    Returns:
        `{"GET,POST /path": served_by_orjson}` for every HTTP route, in the order the app tries
        them: included routers with their prefixes, mounted apps under their mount paths.
        True where `DispatchRoute` or `dispatch` serializes the values (the rule both follow,
        whose reason a `DispatchRoute` logs at debug level), a returned `Response` being sent
        as it is: not for a route whose response class renders something else than JSON, or a
        generator endpoint that FastAPI streams itself.
    """
    return {f"{verbs} {path}": served for verbs, path, served in _walk(app, "")}


def _walk(owner: Any, prefix: str) -> Iterator[tuple[str, str, bool]]:
    for route in _fastapi.served_routes(getattr(owner, "routes", ())):
        mounted = getattr(route, "routes", None)
        if mounted is not None and not hasattr(route, "endpoint"):  # a Mount or Host
            yield from _walk(route, prefix + getattr(route, "path", ""))
            continue
        if getattr(route, "endpoint", None) is None or not getattr(route, "methods", None):
            continue  # an app of its own, or a websocket route (it has an endpoint, no methods)
        yield methods(route), prefix + route.path, serving(route).by is not None
