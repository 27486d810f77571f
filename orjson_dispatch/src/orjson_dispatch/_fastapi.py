"""FastAPI's own computations, used instead of copies of them; one branch per release.

FastAPI is optional: Starlette apps use `dispatch` without it, and every function here has the
answer Starlette implies when FastAPI is missing. Each branch names the FastAPI release whose
change it follows, so that it can be dropped with that release.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import inspect
import sys
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from typing import Any

__all__ = [
    "VALIDATION_ERRORS",
    "ResponseField",
    "building_with",
    "copied_dependant",
    "document_both",
    "effective_route",
    "format_sse_event",
    "included_routers",
    "is_async",
    "jsonable_encoders",
    "keepalive_comment",
    "original_route",
    "ping_interval",
    "rebuild",
    "refuse_pydantic_v1",
    "response_class_in_force",
    "response_field_attributes",
    "response_validation_error",
    "return_annotation",
    "route_being_built",
    "route_in_scope",
    "routes_changed",
    "seed_endpoint_context",
    "serialization_operation",
    "serializes_json",
    "served_routes",
    "server_sent_event_class",
    "signature",
    "streams",
    "streams_events",
    "user_frame",
    "validated",
]

from pydantic import ValidationError

from orjson_dispatch._rendering import Encoded

try:
    from fastapi import encoders, routing
    from fastapi.datastructures import DefaultPlaceholder
    from fastapi.dependencies import models as dependency_models
    from fastapi.dependencies import utils as dependency_utils
    from fastapi.exceptions import ResponseValidationError
except ImportError:  # a Starlette app
    encoders = routing = dependency_models = dependency_utils = None  # type: ignore[assignment]
    DefaultPlaceholder = None  # type: ignore[assignment,misc]
    VALIDATION_ERRORS: tuple[type[Exception], ...] = (ValidationError,)
else:
    VALIDATION_ERRORS = (ValidationError, ResponseValidationError)
try:
    from fastapi import sse
except ImportError:  # FastAPI before 0.135, or a Starlette app
    sse = None  # type: ignore[assignment]


Encoder = Callable[[Any], Any]


def jsonable_encoders(
    fallback: Mapping[type[Any], Encoder],
) -> tuple[Mapping[type[Any], Encoder], Mapping[Encoder, tuple[type[Any], ...]]]:
    """Return the tables `jsonable_encoder` reads: encoders by exact type, classes by encoder.

    FastAPI's own objects (`fastapi.encoders.ENCODERS_BY_TYPE`, `encoders_by_class_tuples`),
    so that an entry a user adds is seen as FastAPI sees it; `fallback` for a Starlette app.
    """
    by_type = getattr(encoders, "ENCODERS_BY_TYPE", None)
    if by_type is not None:
        return by_type, encoders.encoders_by_class_tuples
    grouped: dict[Encoder, tuple[type[Any], ...]] = {}
    for cls, encoder in fallback.items():
        grouped[encoder] = (*grouped.get(encoder, ()), cls)
    return fallback, grouped


def refuse_pydantic_v1(value: Any) -> None:
    """Raise FastAPI's error for a `pydantic.v1` model, where `jsonable_encoder` raises it.

    FastAPI 0.128 dropped `pydantic.v1`: `jsonable_encoder` raises `PydanticV1NotSupportedError`
    (a 500) for such a model, after its tables of encoders and before `dict(value)`. Earlier
    releases, and a Starlette app, encode it as `dict(value)`.
    """
    is_v1 = getattr(encoders, "is_pydantic_v1_model_instance", None)
    error = getattr(encoders, "PydanticV1NotSupportedError", None)
    if is_v1 is not None and error is not None and is_v1(value):
        msg = (
            "pydantic.v1 models are no longer supported by FastAPI."
            f" Please update the model {value!r}."
        )
        raise error(msg)


def is_async(endpoint: Callable[..., Any]) -> bool:
    """Tell whether FastAPI awaits `endpoint` (True) or runs it in the threadpool (False)."""
    # FastAPI 0.140 decides with the outer callable first, then through partials, __wrapped__
    # and __call__: an async wrapper around a sync function is async.
    decide = getattr(dependency_models, "_is_coroutine_callable", None)
    if decide is not None:
        return bool(decide(endpoint))
    # Earlier FastAPI releases and Starlette look through partials and at __call__.
    while isinstance(endpoint, functools.partial):
        endpoint = endpoint.func
    if inspect.iscoroutinefunction(endpoint):
        return True
    return not inspect.isroutine(endpoint) and inspect.iscoroutinefunction(
        getattr(endpoint, "__call__", None)  # noqa: B004 - a callable object
    )


def streams(route: Any) -> bool:
    """Tell whether FastAPI streams the route's generator endpoint (JSON Lines or events)."""
    # FastAPI 0.134 streams generator endpoints as JSON Lines, 0.135 as Server-Sent Events.
    return bool(getattr(route, "is_json_stream", False) or streams_events(route))


def streams_events(route: Any) -> bool:
    """Tell whether FastAPI streams the route's items as Server-Sent Events."""
    # FastAPI 0.135: response_class=EventSourceResponse.
    return bool(getattr(route, "is_sse_stream", False))


def keepalive_comment() -> bytes:
    """Return the comment FastAPI sends in a silent Server-Sent Events stream."""
    # FastAPI 0.135: fastapi.sse.KEEPALIVE_COMMENT; before, and for Starlette apps, the
    # specification's comment line as FastAPI writes it.
    return getattr(sse, "KEEPALIVE_COMMENT", b": ping\n\n")


def server_sent_event_class() -> type[Any] | None:
    """Return FastAPI's `ServerSentEvent` (0.135), or None."""
    return getattr(sse, "ServerSentEvent", None)


def format_sse_event(**fields: Any) -> bytes:
    """Return FastAPI's wire form of one Server-Sent Event (0.135, with `ServerSentEvent`)."""
    return sse.format_sse_event(**fields)


def response_field_attributes(route: Any) -> tuple[str, ...]:
    """Return the attributes of `route` the handler FastAPI builds reads the response field from."""
    # FastAPI before 0.128.4 builds the handler from a clone of the field.
    if hasattr(route, "secure_cloned_response_field"):
        return ("response_field", "secure_cloned_response_field")
    return ("response_field",)


def serializes_json(field: Any) -> bool:
    """Tell whether FastAPI serializes typed values straight to JSON (`serialize_json`)."""
    # FastAPI 0.130 serializes with pydantic's dump_json; before, to Python, then through
    # jsonable_encoder and the response class.
    return hasattr(field, "serialize_json")


def validated(field: Any, value: Any, wrapper: Callable[..., Any] | None = None) -> Any:
    """Return `value` validated by FastAPI's response `field`, as FastAPI's handler does.

    Raises:
        ResponseValidationError: FastAPI's, naming the endpoint behind `wrapper` (if given).
    """
    result, errors = field.validate(value, {}, loc=("response",))
    if errors:
        raise response_validation_error(errors, value, wrapper)
    return result


def ping_interval() -> float:
    """Return the seconds of silence after which FastAPI's Server-Sent Events send a ping."""
    # FastAPI 0.135 pings after `_PING_INTERVAL` seconds (15), a constant of fastapi.sse that
    # fastapi.routing imports and reads when a stream is silent.
    return float(getattr(routing, "_PING_INTERVAL", 15.0))


def return_annotation(endpoint: Callable[..., Any]) -> Any:
    """Return the endpoint's return type as FastAPI reads it (string annotations evaluated)."""
    return signature(endpoint).return_annotation


def document_both(route: Any, item: Any, media_type: str) -> None:
    """Make FastAPI's OpenAPI document show a route's JSON body and its stream's items.

    FastAPI documents a route's response as one media type: a stream's items (`itemSchema`)
    when the route streams (`is_json_stream`, `is_sse_stream`), else the response model. The
    route (or FastAPI's effective route context of its inclusion) is marked as a stream of
    `item`, and its response model documented as an additional `application/json` response of
    its status code, both in FastAPI's own shapes and with its component names.
    """
    # FastAPI 0.134 documents JSON Lines and 0.135 Server-Sent Events; before, the stream is
    # not documented.
    if not hasattr(route, "is_json_stream"):
        return
    from fastapi.utils import create_model_field  # noqa: PLC0415 - FastAPI 0.134 has it

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


def signature(endpoint: Callable[..., Any]) -> inspect.Signature:
    """Return the signature FastAPI reads: string annotations evaluated where they resolve."""
    # FastAPI 0.123.7 evaluates annotations with inspect.signature(eval_str=True) (0.124.2 keeps
    # the strings where a name is missing, as TYPE_CHECKING imports are).
    read = getattr(dependency_utils, "_get_signature", None)
    if read is not None:
        return read(endpoint)  # type: ignore[no-any-return]
    try:
        return inspect.signature(endpoint, eval_str=True)
    except NameError:
        return inspect.signature(endpoint)


def route_being_built(route: Any) -> Any:
    """Return what FastAPI builds `route`'s handler for inside `APIRoute.get_route_handler`."""
    # FastAPI 0.137 serves an included route through an effective route context, one per
    # inclusion (prefix, default_response_class, dependencies...), and builds its handler with
    # that context set in a context variable; before, include_router copied the route.
    variable = getattr(routing, "_effective_route_context_var", None)
    context = variable.get() if variable is not None else None
    if context is not None and context.original_route is route:
        return context
    return route


def copied_dependant(route: Any) -> Any:
    """Return a copy of the route's `Dependant`, whose `call` may be replaced in the copy only."""
    # Every FastAPI release solves a route's dependencies from route.dependant, a dataclass
    # whose `call` is the endpoint; the handler FastAPI builds reads it once.
    return copy.copy(route.dependant)


def response_class_in_force(route: Any) -> tuple[type[Any], bool]:
    """Return the route's response class and whether it is FastAPI's default placeholder."""
    # Every FastAPI release marks a response class nobody set (the router's, the app's
    # default_response_class) as a DefaultPlaceholder.
    response_class = route.response_class
    if DefaultPlaceholder is not None and isinstance(response_class, DefaultPlaceholder):
        return response_class.value, True
    return response_class, False


def original_route(route: Any) -> Any:
    """Return the route itself for FastAPI's effective route context of one of its inclusions."""
    # FastAPI 0.137: an effective route context names the route it was made from.
    return getattr(route, "original_route", route)


def effective_route(scope: MutableMapping[str, Any]) -> Any:
    """Return the route (or FastAPI's effective route context) serving a request, or None."""
    # FastAPI 0.137: the settings in force for an included route are in its effective route
    # context, scope["fastapi"]["effective_route_context"]; scope["route"] is the original.
    context = scope.get("fastapi", {}).get("effective_route_context")
    route = scope.get("route")
    if context is not None and getattr(context, "original_route", None) is route:
        return context
    return route


def included_routers(router: Any) -> list[Any]:
    """Return the routers `router` includes (not their own inclusions), without building them."""
    # FastAPI 0.137 keeps an included router as one `_IncludedRouter` entry (its
    # `original_router`); before, include_router copied each route into the including router.
    return [
        route.original_router
        for route in router.routes
        if hasattr(route, "original_router") and not hasattr(route, "endpoint")
    ]


def rebuild(route: Any, route_class: type[Any]) -> None:
    """Make `route` an instance of `route_class` (a subclass of its class) and rebuild its app.

    Everything FastAPI made of the route's settings (its dependant, fields, OpenAPI) is kept;
    the handler is built again, as `APIRoute.__init__` builds it.
    """
    route.__class__ = route_class
    app = routing.request_response(route.get_route_handler())
    # FastAPI 0.165 limits the body size of each route's app.
    limited = getattr(routing, "wrap_app_with_body_limit", None)
    route.app = app if limited is None else limited(app, route.max_body_size)


def routes_changed(router: Any) -> None:
    """Make FastAPI build again what it made of the routes of `router` (not of its inclusions)."""
    # FastAPI 0.165 caches the effective route contexts of an included router (their handlers
    # built from its routes) until the router's routes change.
    mark = getattr(router, "_mark_routes_changed", None)
    if mark is not None:
        mark()


_LIBRARIES = ("orjson_dispatch", "fastapi", "starlette")


def user_frame() -> Any:
    """Return the innermost frame of code outside orjson_dispatch, FastAPI and Starlette."""
    frame: Any = sys._getframe(1)
    while frame.f_back is not None and str(frame.f_globals.get("__name__")).startswith(_LIBRARIES):
        frame = frame.f_back
    return frame


def route_in_scope(endpoint: Any) -> Any:
    """Return a route of a router in the user's scope (`user_frame`) serving `endpoint`, or None.

    A function that a name in the scope holds already (registered plain at one path, wrapped
    for another) is not being decorated: None.
    """
    frame = user_frame()
    scope = {**frame.f_globals, **frame.f_locals}
    if any(value is endpoint for value in scope.values()):
        return None
    from starlette.applications import Starlette  # noqa: PLC0415 - only for misuse warnings
    from starlette.routing import Router  # noqa: PLC0415

    owners = {id(v): v for v in scope.values() if isinstance(v, (Router, Starlette))}
    for owner in owners.values():
        for route in served_routes(owner.routes):
            if getattr(route, "endpoint", None) is endpoint:
                return route
    return None


def served_routes(routes: Any) -> Iterator[Any]:
    """Yield the routes of a router as it serves them, each included router's expanded."""
    # FastAPI 0.165 keeps an included router as one `_IncludedRouter` entry whose effective
    # candidates are its routes as included (prefix, response class...); before, include_router
    # copied each route into the including router.
    for route in routes:
        candidates = getattr(route, "effective_candidates", None)
        if candidates is not None:
            yield from served_routes(candidates())
        else:
            yield route


def seed_endpoint_context(wrapper: Callable[..., Any], endpoint: Callable[..., Any]) -> None:
    """Make FastAPI's error context for `wrapper` name `endpoint`'s file, line and function."""
    # FastAPI 0.124 adds the endpoint's file, line and function to validation errors, read once
    # per callable with inspect and cached by id(). The wrapper's code lives in this package;
    # the user's endpoint is what the errors must name.
    extract = getattr(routing, "_extract_endpoint_context", None)
    cache = getattr(routing, "_endpoint_context_cache", None)
    if extract is not None and isinstance(cache, dict):
        cache[id(wrapper)] = dict(extract(endpoint))


def response_validation_error(
    errors: Any, body: Any, wrapper: Callable[..., Any] | None
) -> Exception:
    """Return FastAPI's ResponseValidationError, with its endpoint context where it has one."""
    extract = getattr(routing, "_extract_endpoint_context", None)
    if extract is None or wrapper is None:  # FastAPI before 0.124, or no endpoint to name
        return ResponseValidationError(errors=errors, body=body)
    # The cached context of the wrapper (seeded with the endpoint's) holds the request's path:
    # FastAPI writes it there when the request starts.
    context: Any = dict(extract(wrapper))
    return ResponseValidationError(errors=errors, body=body, endpoint_ctx=context)


@contextlib.contextmanager
def building_with(route: Any, substitutes: dict[str, Any]) -> Iterator[None]:
    """Set attributes of `route` while FastAPI builds its handler, then put them back.

    FastAPI (every release) reads the settings of the route, or of its effective route context
    (0.137), in `APIRoute.get_route_handler`; the OpenAPI document and everything else keep
    reading the originals.
    """
    originals = {name: getattr(route, name) for name in substitutes}
    try:
        for name, value in substitutes.items():
            setattr(route, name, value)
        yield
    finally:
        for name, value in originals.items():
            setattr(route, name, value)


class ResponseField:
    """Stands in for FastAPI's response field (a `ModelField`) in the handler FastAPI builds.

    FastAPI validates returned values with `validate` (the original field's, always: it runs
    the model validators of a returned instance too) and serializes them with `serialize_json`
    (FastAPI 0.130 and later, default response class) or `serialize` (a response class of the
    route's own, or FastAPI before 0.130), whose result the route's response class renders:
    here an `Encoded` body that `rendering(cls)` passes through. Without a declared type
    (FastAPI's untyped path), values are taken as they are.

    Args:
        field: FastAPI's field, or None.
        encode: Returns the JSON of a validated value.
    """

    __slots__ = ("_encode", "_field")

    def __init__(self, field: Any, encode: Callable[[Any], bytes]) -> None:
        self._field = field
        self._encode = encode

    def validate(self, value: Any, values: Any, *, loc: tuple[str, ...]) -> tuple[Any, Any]:
        if self._field is None:
            return value, None
        return self._field.validate(value, values, loc=loc)  # type: ignore[no-any-return]

    def serialize_json(self, value: Any, **_settings: Any) -> bytes:
        return self._encode(value)

    def serialize(self, value: Any, **_settings: Any) -> Encoded:
        return Encoded(self._encode(value))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._field, name)


@contextlib.contextmanager
def serialization_operation(function: Callable[..., Any]) -> Iterator[None]:
    """Open FastAPI's `fastapi.serialization` span around serialization, where FastAPI does."""
    # FastAPI 0.142 traces each request with OpenTelemetry: `fastapi.dependencies`,
    # `fastapi.endpoint` and `fastapi.serialization` spans, children of the request's span.
    # `dispatch` serializes inside the endpoint call, so its span is opened under the request's.
    try:
        from fastapi.telemetry import _api as telemetry  # noqa: PLC0415
    except ImportError:
        yield
        return
    request_telemetry = telemetry._get_request_telemetry()
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
        else _nothing(),
        telemetry._operation(name="serialization", function=function),
    ):
        yield


@contextlib.contextmanager
def _nothing() -> Iterator[None]:
    yield
