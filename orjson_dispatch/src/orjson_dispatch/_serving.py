"""Who serializes what a route's endpoint returns: orjson (`DispatchRoute`, `dispatch`) or FastAPI.

One rule, `serving(route)`, asked by `DispatchRoute` when it builds a handler (and its debug
line), by `dispatch` when it first answers for a route, and by `dispatched_routes`. Its answer,
a `Serving`, holds every fact the handler is built from: who serializes and why, whether the
route streams, the options and the serialization in force. It reads facts each decided once:
what `dispatch` was given (`Wrapped`, on the wrapper) and what a `DispatchRoute` read of its
endpoint when it was made (`EndpointFacts`).
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable
from typing import Any, NamedTuple

import orjson
from starlette.responses import Response

from orjson_dispatch import _fastapi
from orjson_dispatch._encoders import left_to_fastapi
from orjson_dispatch._options import Options, Serialization, check_options
from orjson_dispatch._rendering import reads_content, renders_json
from orjson_dispatch._streamed import ReturnedStream, returned_stream

__all__ = [
    "MARKER",
    "REQUEST_PARAMETER",
    "RESPONSE_PARAMETER",
    "EndpointFacts",
    "Serving",
    "Wrapped",
    "bare",
    "check_stream_options",
    "endpoint_facts",
    "generator_function",
    "returns_response",
    "serialization_in_force",
    "serving",
    "wrapped_endpoint",
]

# On every wrapper `dispatch` returns: its `Wrapped`.
MARKER = "__orjson_dispatch__"
# Parameters added to the endpoint's signature when it declares none of these types itself, so
# that FastAPI injects the request (to find the route and its settings) and the response whose
# status, headers and cookies dependencies set. Neither appears in the OpenAPI document.
REQUEST_PARAMETER = "orjson_dispatch_request"
RESPONSE_PARAMETER = "orjson_dispatch_response"

_DEFAULTS = Options()


class Wrapped(NamedTuple):
    """What `dispatch` was given, and what it decided about the endpoint when it wrapped it."""

    endpoint: Any
    options: dict[str, Any]
    generator: bool


class EndpointFacts(NamedTuple):
    """What a `DispatchRoute` reads of its endpoint once, when the route is made.

    Attributes:
        returned_stream: The stream its return type declares beside a JSON body, or None.
    """

    returned_stream: ReturnedStream | None


def endpoint_facts(endpoint: Callable[..., Any]) -> EndpointFacts:
    """Read an endpoint's return type as FastAPI does (its string annotations evaluated)."""
    return EndpointFacts(returned_stream(_fastapi.signature(endpoint).return_annotation))


class Serving(NamedTuple):
    """How a route's returned values are serialized, decided once per handler built.

    Attributes:
        by: orjson's entry point serializing them (`"DispatchRoute"`, `"dispatch"`), or None:
            FastAPI does.
        reason: Why, for the debug line and the warnings.
        stream: The route streams (a generator endpoint, or a return type that declares one).
        returned_stream: The stream the endpoint may return instead of a JSON body, or None.
        options: The options of `dispatch` on the endpoint (none given: the route's settings).
        serialization: The serialization of returned values in force (see
            `serialization_in_force`), where orjson serializes them.
        written_by_pydantic: Why pydantic's serializer (the route's response field's own,
            FastAPI's) writes the JSON of its declared type, or None (`left_to_fastapi`).
    """

    by: str | None
    reason: str
    stream: bool = False
    returned_stream: ReturnedStream | None = None
    options: Options = _DEFAULTS
    serialization: Serialization | None = None
    written_by_pydantic: str | None = None

    def __str__(self) -> str:
        if self.by is None:
            return f"left to FastAPI: {self.reason}"
        served = "serialized by orjson" + (
            " (dispatch answers it)" if self.by == "dispatch" else ""
        )
        return (
            served if self.written_by_pydantic is None else f"{served}; {self.written_by_pydantic}"
        )


def serialization_in_force(options: Options, route: Any, field: Any) -> Serialization:
    """Return the serialization of values validated by `field` (a response or stream item field).

    FastAPI's untyped path (`field` None: `jsonable_encoder(value)`) takes none of the route's
    `response_model_*` settings; a declared type takes them, under the options of `dispatch`.
    """
    return options.serialization(route if field is not None else None)


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


def check_stream_options(options: Options, name: str) -> None:
    """Refuse the options a stream cannot honour: its events are framed one per line."""
    given = [
        f"{key}=..." for key in ("status_code", "headers", "media_type") if getattr(options, key)
    ]
    if options.option & (orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE):
        given.append("option=OPT_INDENT_2/OPT_APPEND_NEWLINE")
    if given:
        msg = (
            f"dispatch({', '.join(given)}) for the endpoint {name}, which streams: a stream takes "
            "its status and headers from its route, and each event is one line; only by_alias, "
            "exclude_unset, exclude_defaults, exclude_none and option=orjson.OPT_SORT_KEYS apply"
        )
        raise TypeError(msg)


def serving(route: Any) -> Serving:
    """Return who serializes what `route`'s endpoint returns, why, and how.

    An endpoint may return a `Response` whatever it declares (`-> Response`, `-> Any`, a union
    with one): FastAPI sends a returned `Response` as it is, and so does orjson's path; what
    else it returns is serialized as FastAPI's path for its declared type (or none) would.

    Args:
        route: A Starlette or FastAPI route, or FastAPI's effective route context of one of its
            inclusions (whose response class may be its router's).

    Raises:
        TypeError: `dispatch` on a streaming endpoint was given options a stream cannot honour.
    """
    facts = getattr(_fastapi.original_route(route), "endpoint_facts", None)
    if not isinstance(facts, EndpointFacts):  # not a DispatchRoute
        facts = None
    route_class = facts is not None
    wrapped = wrapped_endpoint(getattr(route, "endpoint", None))
    options = _DEFAULTS if wrapped is None else check_options(wrapped.options, route.name)
    if facts is not None and (_fastapi.streams(route) or facts.returned_stream is not None):
        if wrapped is not None:
            check_stream_options(options, route.name)
        return _served(route, "DispatchRoute", "a stream", options, facts)
    if wrapped is None:
        if not route_class:
            return Serving(None, "neither DispatchRoute nor dispatch serves it")
        return _by_response_class(route, "DispatchRoute", options, typed_default=False)
    if wrapped.generator:
        return Serving(None, "a generator endpoint outside a streaming DispatchRoute")
    if not _fastapi.is_fastapi_route(route):
        return Serving(
            "dispatch", "a Starlette route", options=options, serialization=options.serialization()
        )
    # FastAPI's typed path answers JSON under a default response class, whatever the class.
    return _by_response_class(
        route, "dispatch", options, typed_default=route.response_field is not None
    )


def _served(
    route: Any, by: str, reason: str, options: Options, stream: EndpointFacts | None = None
) -> Serving:
    """The route served by `by`; `stream`: the facts of a `DispatchRoute` that streams."""
    serialization = serialization_in_force(options, route, route.response_field)
    return Serving(
        by,
        reason,
        stream=stream is not None,
        returned_stream=stream.returned_stream if stream is not None else None,
        options=options,
        serialization=serialization,
        written_by_pydantic=left_to_fastapi(route.response_field, serialization),
    )


def _by_response_class(route: Any, by: str, options: Options, *, typed_default: bool) -> Serving:
    response_class, is_default = _fastapi.response_class_in_force(route)
    if typed_default and is_default:
        return _served(route, by, "a declared type under the default response class", options)
    name = f"response_class={response_class.__qualname__}"
    if reads_content(response_class):
        return Serving(None, f"{name} has an __init__ of its own")
    if not renders_json(response_class):
        return Serving(None, f"{name} does not render JSON")
    return _served(route, by, name, options)
