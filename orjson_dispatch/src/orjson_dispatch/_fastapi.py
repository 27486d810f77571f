"""What depends on FastAPI's release, or on FastAPI being installed: one branch per change.

FastAPI is optional: Starlette apps use `dispatch` without it, and every name here has the
answer Starlette implies when FastAPI is missing. Each probe of FastAPI runs once, at import,
and names the FastAPI release whose change it follows (checked against FastAPI's history), so
that it can be dropped with that release; docs/dispatch.md lists them (tested against this
module). Nothing here changes FastAPI: values are read, routes are given settings while FastAPI
builds their handler, and put back.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import inspect
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from typing import Any

from pydantic import ValidationError
from starlette.responses import JSONResponse

__all__ = [
    "JSON_RENDERS",
    "VALIDATION_ERRORS",
    "building_handler",
    "document_both",
    "effective_route",
    "format_sse_event",
    "handler_dependant",
    "included_routers",
    "is_async",
    "is_fastapi_route",
    "is_placeholder",
    "jsonable_encoders",
    "keepalive_comment",
    "original_route",
    "ping_interval",
    "rebuild",
    "refuse_pydantic_v1",
    "response_class_in_force",
    "response_validation_error",
    "route_being_built",
    "routes_changed",
    "seed_endpoint_context",
    "serialization_operation",
    "serializes_json",
    "served_routes",
    "server_sent_event_class",
    "signature",
    "streams",
    "streams_events",
    "type_adapter",
]

try:
    from fastapi import encoders, responses, routing
    from fastapi.datastructures import DefaultPlaceholder
    from fastapi.dependencies import models as dependency_models
    from fastapi.dependencies import utils as dependency_utils
    from fastapi.exceptions import ResponseValidationError
    from fastapi.utils import create_model_field
except ImportError:  # a Starlette app
    encoders = responses = routing = dependency_models = dependency_utils = None  # type: ignore[assignment]
    create_model_field = None  # type: ignore[assignment]
    DefaultPlaceholder = None  # type: ignore[assignment,misc]
    VALIDATION_ERRORS: tuple[type[Exception], ...] = (ValidationError,)
else:
    VALIDATION_ERRORS = (ValidationError, ResponseValidationError)

# FastAPI 0.135: Server-Sent Events (fastapi.sse).
try:
    from fastapi import sse
except ImportError:  # FastAPI before 0.135, or a Starlette app
    sse = None  # type: ignore[assignment]

# FastAPI 0.142: OpenTelemetry spans per request (fastapi.telemetry, which fastapi.routing imports).
try:
    from fastapi.telemetry import _api as telemetry
except ImportError:  # FastAPI before 0.142, or a Starlette app
    telemetry = None  # type: ignore[assignment]

#: The `render` methods that write the JSON orjson writes: JSONResponse's, and FastAPI's
#: ORJSONResponse and UJSONResponse (every supported release).
JSON_RENDERS = frozenset(
    {JSONResponse.render}
    | {
        getattr(responses, name).render
        for name in ("ORJSONResponse", "UJSONResponse")
        if hasattr(responses, name)
    }
)

Encoder = Callable[[Any], Any]

# FastAPI 0.128: pydantic.v1 models refused by jsonable_encoder.
_is_pydantic_v1 = getattr(encoders, "is_pydantic_v1_model_instance", None)
_PydanticV1Error = getattr(encoders, "PydanticV1NotSupportedError", None)
# FastAPI 0.140: async-ness decided with the outer callable first.
_is_coroutine_callable = getattr(dependency_models, "_is_coroutine_callable", None)
# FastAPI 0.124.2: endpoint signatures read with eval_str=True, unresolved names kept.
_get_signature = getattr(dependency_utils, "_get_signature", None)
# FastAPI 0.137: an included route's handler built with its effective route context set.
_effective_route_context = getattr(routing, "_effective_route_context_var", None)
# FastAPI 0.164: each route's app limits the body size.
_with_body_limit = getattr(routing, "wrap_app_with_body_limit", None)
# FastAPI 0.124: endpoint context on validation errors, cached per callable.
_extract_endpoint_context = getattr(routing, "_extract_endpoint_context", None)


def jsonable_encoders(
    fallback: Callable[[], Mapping[type[Any], Encoder]],
) -> tuple[Mapping[type[Any], Encoder], Mapping[Encoder, tuple[type[Any], ...]]]:
    """Return the tables `jsonable_encoder` reads: encoders by exact type, classes by encoder.

    FastAPI's own (`ENCODERS_BY_TYPE`, `encoders_by_class_tuples`), so that an entry a user adds
    is seen as FastAPI sees it; for a Starlette app, the table `fallback()` returns.
    """
    by_type = getattr(encoders, "ENCODERS_BY_TYPE", None)  # every release: None without FastAPI
    if by_type is not None:
        return by_type, encoders.encoders_by_class_tuples
    by_type = fallback()
    grouped: dict[Encoder, tuple[type[Any], ...]] = {}
    for cls, encoder in by_type.items():
        grouped[encoder] = (*grouped.get(encoder, ()), cls)
    return by_type, grouped


def refuse_pydantic_v1(value: Any) -> None:
    """Raise FastAPI's error for a `pydantic.v1` model, where `jsonable_encoder` raises it.

    FastAPI 0.128 dropped `pydantic.v1`: `jsonable_encoder` raises `PydanticV1NotSupportedError`
    (a 500) for such a model, after its tables of encoders and before `dict(value)`. Earlier
    releases, and a Starlette app, encode it as `dict(value)`.
    """
    if _is_pydantic_v1 is not None and _PydanticV1Error is not None and _is_pydantic_v1(value):
        msg = (
            "pydantic.v1 models are no longer supported by FastAPI."
            f" Please update the model {value!r}."
        )
        raise _PydanticV1Error(msg)


def is_async(endpoint: Callable[..., Any]) -> bool:
    """Tell whether FastAPI awaits `endpoint` (True) or runs it in the threadpool (False)."""
    # FastAPI 0.140 decides with the outer callable first, then through partials, __wrapped__
    # and __call__: an async wrapper around a sync function is async.
    if _is_coroutine_callable is not None:
        return bool(_is_coroutine_callable(endpoint))
    # Earlier FastAPI releases and Starlette look through partials and at __call__.
    while isinstance(endpoint, functools.partial):
        endpoint = endpoint.func
    if inspect.iscoroutinefunction(endpoint):
        return True
    return not inspect.isroutine(endpoint) and inspect.iscoroutinefunction(
        getattr(endpoint, "__call__", None)  # noqa: B004 - a callable object
    )


def streams(route: Any) -> bool:
    """Tell whether FastAPI streams the route's generator endpoint (0.134 JSON Lines, or events)."""
    return bool(getattr(route, "is_json_stream", False) or streams_events(route))


def streams_events(route: Any) -> bool:
    """Tell whether FastAPI streams the route's items as Server-Sent Events (0.135)."""
    return bool(getattr(route, "is_sse_stream", False))


def keepalive_comment() -> bytes:
    """Return the comment FastAPI sends in a silent Server-Sent Events stream."""
    # FastAPI 0.135: fastapi.sse.KEEPALIVE_COMMENT; before, and in Starlette, the same line.
    return getattr(sse, "KEEPALIVE_COMMENT", b": ping\n\n")


def server_sent_event_class() -> type[Any] | None:
    """Return FastAPI's `ServerSentEvent` (0.135), or None."""
    return getattr(sse, "ServerSentEvent", None)


def format_sse_event(**fields: Any) -> bytes:
    """Return FastAPI's wire form of one Server-Sent Event (0.135, with `ServerSentEvent`)."""
    return sse.format_sse_event(**fields)


def ping_interval() -> float:
    """Return the seconds of silence after which FastAPI's Server-Sent Events send a ping."""
    # FastAPI 0.135 pings after fastapi.routing's `_PING_INTERVAL` seconds (15), read here
    # when a stream starts, as FastAPI reads it when a stream is silent.
    return float(getattr(routing, "_PING_INTERVAL", 15.0))


def serializes_json(field: Any) -> bool:
    """Tell whether FastAPI serializes typed values straight to JSON (`serialize_json`)."""
    # FastAPI 0.130 serializes with dump_json; before, to Python, then jsonable_encoder.
    return hasattr(field, "serialize_json")


def type_adapter(field: Any) -> Any:
    """Return the pydantic `TypeAdapter` FastAPI's response `field` validates with."""
    return field._type_adapter


def signature(endpoint: Callable[..., Any]) -> inspect.Signature:
    """Return the signature FastAPI reads: string annotations evaluated where they resolve."""
    # FastAPI 0.123.7 evaluates annotations with inspect.signature(eval_str=True) (0.124.2 keeps
    # the strings where a name is missing, as TYPE_CHECKING imports are).
    if _get_signature is not None:
        return _get_signature(endpoint)  # type: ignore[no-any-return]
    try:
        return inspect.signature(endpoint, eval_str=True)
    except NameError:
        return inspect.signature(endpoint)


def document_both(route: Any, item: Any, media_type: str) -> None:
    """Make FastAPI's OpenAPI document show a route's JSON body and its stream's items.

    FastAPI documents a route's response as one media type: a stream's items (`itemSchema`)
    when the route streams (`is_json_stream`, `is_sse_stream`), else the response model. The
    route (or its effective route context) is marked as a stream of `item`, and its response
    model documented as an extra `application/json` response of its status code.
    """
    # FastAPI 0.134 documents JSON Lines and 0.135 Server-Sent Events; before, the stream is
    # not documented.
    if not hasattr(route, "is_json_stream"):
        return
    if item is not None and route.stream_item_field is None:
        route.stream_item_type = item
        route.stream_item_field = create_model_field(
            name=f"StreamItem_{route.unique_id}", type_=item, mode="serialization"
        )
    if media_type == "text/event-stream":
        route.is_sse_stream = True
    else:
        route.is_json_stream = True
    if route.response_field is not None:
        status = route.status_code or 200
        route.responses = {**route.responses, status: dict(route.responses.get(status, {}))}
        route.response_fields = {**route.response_fields, status: route.response_field}


def route_being_built(route: Any) -> Any:
    """Return what FastAPI builds `route`'s handler for inside `APIRoute.get_route_handler`."""
    # FastAPI 0.137 serves an included route through an effective route context, one per
    # inclusion (prefix, default_response_class, dependencies...), and builds its handler with
    # that context set in a context variable; before, include_router copied the route.
    context = _effective_route_context.get() if _effective_route_context is not None else None
    if context is not None and context.original_route is route:
        return context
    return route


def handler_dependant(
    route: Any, call: Callable[[Callable[..., Any], str], Callable[..., Any]], response_name: str
) -> Any:
    """Return a copy of the route's `Dependant` that calls `call(endpoint, response_parameter)`.

    FastAPI (every release) solves a route's dependencies from `route.dependant`, whose `call`
    is the endpoint and whose `response_param_name` names the endpoint's `Response` parameter;
    the handler FastAPI builds reads both once. Where the endpoint declares no such parameter,
    the copy asks FastAPI to inject one as `response_name`.
    """
    dependant = copy.copy(route.dependant)
    if dependant.response_param_name is None:
        dependant.response_param_name = response_name
    dependant.call = call(route.dependant.call, dependant.response_param_name)
    return dependant


@contextlib.contextmanager
def building_handler(
    route: Any,
    *,
    response_field: Any,
    response_class: type[Any],
    default_class: bool,
    dependant: Any = None,
) -> Iterator[None]:
    """Give FastAPI these settings of `route` while it builds its handler, then put them back.

    FastAPI reads the settings of the route, or of its effective route context (0.137), in
    `APIRoute.get_route_handler`; the OpenAPI document and everything else keep reading the
    originals.

    Args:
        route: The route, or its effective route context.
        response_field: What the handler validates and serializes returned values through.
        response_class: What it renders with.
        default_class: Mark it FastAPI's default (which decides typed serialization, 0.130).
        dependant: A `handler_dependant` whose endpoint returns the finished stream: the
            handler then streams nothing itself.
    """
    substitutes: dict[str, Any] = {
        name: response_field for name in _RESPONSE_FIELDS if hasattr(route, name)
    }
    substitutes["response_class"] = (
        DefaultPlaceholder(response_class) if default_class else response_class
    )
    if dependant is not None:
        substitutes["dependant"] = dependant
        # FastAPI 0.134 streams a route whose stream_item_field or is_json_stream is set.
        if hasattr(route, "is_json_stream"):
            substitutes.update(stream_item_field=None, is_json_stream=False)
    originals = {name: getattr(route, name) for name in substitutes}
    try:
        for name, value in substitutes.items():
            setattr(route, name, value)
        yield
    finally:
        for name, value in originals.items():
            setattr(route, name, value)


# FastAPI before 0.128.4 builds the handler from `secure_cloned_response_field`, a clone of the
# response field; later releases from `response_field`.
_RESPONSE_FIELDS = ("response_field", "secure_cloned_response_field")


def is_fastapi_route(route: Any) -> bool:
    """Tell whether `route` is a FastAPI route (or effective route context), not a Starlette one."""
    # Every FastAPI release gives its routes a response field (None without a declared type).
    return hasattr(route, "response_field")


def is_placeholder(value: Any) -> bool:
    """Tell whether a route setting is FastAPI's default placeholder (nobody set it)."""
    return DefaultPlaceholder is not None and isinstance(value, DefaultPlaceholder)


def response_class_in_force(route: Any) -> tuple[type[Any], bool]:
    """Return the route's response class and whether it is FastAPI's default placeholder."""
    # Every FastAPI release marks a response class nobody set (the router's, the app's
    # default_response_class) as a DefaultPlaceholder.
    response_class = route.response_class
    if is_placeholder(response_class):
        return response_class.value, True
    return response_class, False


def original_route(route: Any) -> Any:
    """Return the route itself for FastAPI's effective route context of one of its inclusions."""
    # FastAPI 0.137: an effective route context names the route it was made from.
    return getattr(route, "original_route", route)


def effective_route(scope: MutableMapping[str, Any]) -> Any:
    """Return the route (or FastAPI's effective route context) serving a request, or None."""
    # FastAPI 0.137: an included route's settings: scope["fastapi"]["effective_route_context"].
    context = scope.get("fastapi", {}).get("effective_route_context")
    route = scope.get("route")
    if context is not None and getattr(context, "original_route", None) is route:
        return context
    return route


def included_routers(router: Any) -> list[Any]:
    """Return the routers `router` includes (not their own inclusions), without building them."""
    # FastAPI 0.137 keeps an included router as one `_IncludedRouter` (`original_router`).
    return [
        route.original_router
        for route in router.routes
        if hasattr(route, "original_router") and not hasattr(route, "endpoint")
    ]


def served_routes(routes: Any) -> Iterator[Any]:
    """Yield the routes of a router as it serves them, each included router's expanded."""
    # FastAPI 0.137 keeps an included router as one `_IncludedRouter` entry whose effective
    # candidates are its routes as included; before, include_router copied each route.
    for route in routes:
        candidates = getattr(route, "effective_candidates", None)
        if candidates is not None:
            yield from served_routes(candidates())
        else:
            yield route


def rebuild(route: Any, route_class: type[Any]) -> None:
    """Make `route` an instance of `route_class` (a subclass of its class) and rebuild its app.

    Everything FastAPI made of the route's settings (its dependant, fields, OpenAPI) is kept;
    the handler is built again, as `APIRoute.__init__` builds it.
    """
    route.__class__ = route_class
    app = routing.request_response(route.get_route_handler())
    # FastAPI 0.164 limits the body size of each route's app.
    route.app = app if _with_body_limit is None else _with_body_limit(app, route.max_body_size)


def routes_changed(router: Any) -> None:
    """Make FastAPI build again what it made of the routes of `router` (not of its inclusions)."""
    # FastAPI 0.137 caches an included router's effective route contexts until its routes change.
    mark = getattr(router, "_mark_routes_changed", None)
    if mark is not None:
        mark()


def seed_endpoint_context(wrapper: Callable[..., Any], endpoint: Callable[..., Any]) -> None:
    """Make FastAPI's error context for `wrapper` name `endpoint`'s file, line and function."""
    # FastAPI 0.124 adds the endpoint's file, line and function to validation errors, read once
    # per callable with inspect and cached by id(). The wrapper's code lives in this package;
    # the user's endpoint is what the errors must name.
    if _extract_endpoint_context is not None:  # its cache read now: tests replace it
        cache: dict[int, Any] = routing._endpoint_context_cache
        cache[id(wrapper)] = dict(_extract_endpoint_context(endpoint))


def response_validation_error(
    errors: Any, body: Any, wrapper: Callable[..., Any] | None
) -> Exception:
    """Return FastAPI's ResponseValidationError, with its endpoint context where it has one."""
    if _extract_endpoint_context is None or wrapper is None:  # before 0.124, or no endpoint
        return ResponseValidationError(errors=errors, body=body)
    # The cached context of the wrapper (seeded with the endpoint's) holds the request's path:
    # FastAPI writes it there when the request starts.
    context: Any = dict(_extract_endpoint_context(wrapper))
    return ResponseValidationError(errors=errors, body=body, endpoint_ctx=context)


@contextlib.contextmanager
def serialization_operation(function: Callable[..., Any]) -> Iterator[None]:
    """Open FastAPI's `fastapi.serialization` span around serialization, where FastAPI does."""
    # FastAPI 0.142 traces each request with OpenTelemetry: `fastapi.dependencies`,
    # `fastapi.endpoint` and `fastapi.serialization` spans, children of the request's span.
    # `dispatch` serializes inside the endpoint call, so its span is opened under the request's.
    request_telemetry = telemetry._get_request_telemetry() if telemetry is not None else None
    if request_telemetry is None or request_telemetry.tracer is None:
        yield
        return
    from opentelemetry import trace  # noqa: PLC0415 - FastAPI's telemetry implies it

    parent = request_telemetry.span
    with (
        # The request span is FastAPI's: an error passing through records nothing on it here.
        trace.use_span(
            parent, end_on_exit=False, record_exception=False, set_status_on_exception=False
        )
        if parent is not None
        else contextlib.nullcontext(),
        telemetry._operation(name="serialization", function=function),
    ):
        yield
