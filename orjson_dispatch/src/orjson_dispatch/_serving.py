"""Who serializes what a route's endpoint returns: orjson (`DispatchRoute`, `dispatch`) or FastAPI.

One rule, `serving(route)`, asked by `DispatchRoute` when it builds a handler (and its debug
line), by `dispatch` when it first answers for a route, and by `dispatched_routes`; and the facts
it reads, each decided once: is an endpoint wrapped in `dispatch`, is it a generator function,
does it declare a `Response`.
"""

from __future__ import annotations

import functools
import inspect
import sys
import typing
from collections.abc import Callable
from typing import Any, NamedTuple

from starlette.responses import Response

from orjson_dispatch import _fastapi
from orjson_dispatch._rendering import reads_content, renders_json

__all__ = [
    "MARKER",
    "Serving",
    "Wrapped",
    "bare",
    "generator_function",
    "returns_response",
    "serving",
    "wrapped_endpoint",
]

# On every wrapper `dispatch` returns: its `Wrapped`.
MARKER = "__orjson_dispatch__"


class Wrapped(NamedTuple):
    """What `dispatch` was given, and what it decided about the endpoint when it wrapped it."""

    endpoint: Any
    options: dict[str, Any]
    generator: bool
    returns_response: bool


class Serving(NamedTuple):
    """Who serializes a route's returned values: `by` orjson's entry point, or None (FastAPI)."""

    by: str | None
    reason: str

    def __str__(self) -> str:
        if self.by is None:
            return f"left to FastAPI: {self.reason}"
        return "serialized by orjson" + (" (dispatch answers it)" if self.by == "dispatch" else "")


def wrapped_endpoint(endpoint: Any) -> Wrapped | None:
    """Return what `dispatch` was given for a wrapper it returned, else None."""
    wrapped: Wrapped | None = getattr(endpoint, MARKER, None)
    return wrapped


def bare(annotation: Any) -> Any:
    """Return `annotation` without its `Annotated[...]` layers."""
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    return annotation


def returns_response(annotation: Any) -> bool:
    """Tell whether a return annotation declares a Response (`Annotated[Response, ...]` too)."""
    annotation = bare(annotation)
    return isinstance(annotation, type) and issubclass(annotation, Response)


def generator_function(endpoint: Any) -> Callable[..., Any] | None:
    """Return the generator function an endpoint calls (partials, wrappers, `__call__`), or None."""
    function = endpoint
    while isinstance(function, functools.partial):
        function = function.func
    function = inspect.unwrap(function)
    if not inspect.isroutine(function):
        function = getattr(function, "__call__", function)  # noqa: B004 - a callable object
    if inspect.isgeneratorfunction(function) or inspect.isasyncgenfunction(function):
        return function  # type: ignore[no-any-return]
    return None


def serving(route: Any) -> Serving:
    """Return who serializes what `route`'s endpoint returns, and why.

    Args:
        route: A Starlette or FastAPI route, or FastAPI's effective route context of one of its
            inclusions (whose response class may be its router's).
    """
    original = _fastapi.original_route(route)
    # A DispatchRoute exists only once its module (which needs FastAPI) is imported.
    module = sys.modules.get("orjson_dispatch._route")
    route_class = module is not None and isinstance(original, module.DispatchRoute)
    if route_class and original._streams(route):
        return Serving("DispatchRoute", "a stream")
    wrapped = wrapped_endpoint(getattr(route, "endpoint", None))
    if wrapped is None:
        if not route_class:
            return Serving(None, "neither DispatchRoute nor dispatch serves it")
        if original._returns_response:
            return Serving(None, "the endpoint returns a Response")
        return _by_response_class(route, "DispatchRoute", typed_default=False)
    if wrapped.generator:
        return Serving(None, "a generator endpoint outside a streaming DispatchRoute")
    if wrapped.returns_response:
        return Serving(None, "the endpoint returns a Response")
    if not hasattr(route, "response_field"):
        return Serving("dispatch", "a Starlette route")
    # FastAPI's typed path answers JSON under a default response class, whatever the class.
    return _by_response_class(route, "dispatch", typed_default=route.response_field is not None)


def _by_response_class(route: Any, by: str, *, typed_default: bool) -> Serving:
    response_class, is_default = _fastapi.response_class_in_force(route)
    if typed_default and is_default:
        return Serving(by, "a declared type under the default response class")
    name = f"response_class={response_class.__qualname__}"
    if reads_content(response_class):
        return Serving(None, f"{name} has an __init__ of its own")
    if not renders_json(response_class):
        return Serving(None, f"{name} does not render JSON")
    return Serving(by, name)
