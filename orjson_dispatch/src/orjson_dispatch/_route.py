"""`DispatchRoute`: every route of a router answered as `dispatch` answers, by FastAPI's handler.

FastAPI builds each route's request handler once (and once per inclusion of its router) from
the route's settings, in `APIRoute.get_route_handler`. `DispatchRoute` lets FastAPI build that
handler itself, with one change: the response field it validates and serializes through (and
the response class it renders with) encode with orjson. Everything else, from the request body
to dependencies, status codes, headers, cookies, background tasks, telemetry spans and the
context of validation errors, stays FastAPI's own.
"""

from __future__ import annotations

import contextlib
import functools
import weakref
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi.routing import APIRoute, APIRouter
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from orjson_dispatch import _fastapi
from orjson_dispatch._diagnostics import logger, methods
from orjson_dispatch._encoders import route_serializer
from orjson_dispatch._rendering import Encoded, rendering
from orjson_dispatch._request_body import parsing_json
from orjson_dispatch._serving import (
    REQUEST_PARAMETER,
    RESPONSE_PARAMETER,
    EndpointFacts,
    Serving,
    endpoint_facts,
    serialization_in_force,
    serving,
    wrapped_endpoint,
)
from orjson_dispatch._stream_settings import StreamSettings
from orjson_dispatch._streamed import ServerSentEvents, Streamed
from orjson_dispatch._streams import build_stream
from orjson_dispatch._validation import validator

__all__ = ["DispatchRoute", "use_dispatch_routes"]


class DispatchRoute(APIRoute):
    """An `APIRoute` whose returned values are serialized by orjson, as `dispatch` does.

    Use it for every route of a router, or of a whole app::

        router = APIRouter(route_class=DispatchRoute)
        app.router.route_class = DispatchRoute  # before the routes are added

    or put a finished app on it with `use_dispatch_routes(app)`. Setting it on a router that
    has routes already, or including a router whose routes keep their own `APIRoute` into one
    that has it, leaves those routes on `APIRoute`: the app's first request served by a
    `DispatchRoute` logs a warning naming them.

    The responses, their headers and the OpenAPI document are FastAPI's own; only the
    serialization of returned values (and of the items of JSON Lines and Server-Sent Events
    streams) is orjson's, with FastAPI's JSON, and so is the parse of JSON request bodies, with
    `json.loads`'s values and errors (`request_json`). A returned `Response` is sent as it is,
    whatever the endpoint declares (`-> Response` included). Routes whose response class renders
    something other than JSON (`PlainTextResponse`, `HTMLResponse`, a class with its own
    `render`) and endpoints already wrapped in `dispatch` are left as they are.

    Attributes:
        stream_settings: The ping interval and send timeout of the route's streams; set it in
            a subclass (`StreamSettings()`, the default, is FastAPI's behaviour).
        dispatched: Whether orjson serializes what the route's endpoint returns (in the last
            handler built): through this class, or through `dispatch` on the endpoint, as
            `dispatched_routes` reports. A debug line on the "orjson_dispatch" logger says
            which, or why FastAPI does, for every handler built.
    """

    dispatched: bool = False
    stream_settings: StreamSettings = StreamSettings()
    endpoint_facts: EndpointFacts

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        settings: object = cls.stream_settings
        if not isinstance(settings, StreamSettings):
            msg = f"{cls.__qualname__}.stream_settings must be a StreamSettings"
            raise TypeError(msg)

    def __init__(self, path: str, endpoint: Callable[..., Any], **settings: Any) -> None:
        """Build the route as `APIRoute` does.

        An endpoint whose return type declares a stream (`Body | ServerSentEvents[Item]`) has
        the rest of it (`Body`) as its response model, unless `response_model` is given.
        """
        # Read once: FastAPI 0.137 to 0.141 build the handler of an included route per request.
        self.endpoint_facts = endpoint_facts(endpoint)
        returned = self.endpoint_facts.returned_stream
        model = settings.get("response_model")
        if returned is not None and (
            "response_model" not in settings or _fastapi.is_placeholder(model)
        ):
            settings["response_model"] = returned.body
        super().__init__(path, endpoint, **settings)

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        """Return FastAPI's handler for this route, serializing returned values with orjson.

        Every handler, that of a route left to FastAPI's serialization included, parses JSON
        request bodies with orjson (`request_json`): FastAPI's handler, dependencies and the
        endpoint awaiting `request.json()` get `json.loads`'s value, parsed once.
        """
        route = _fastapi.route_being_built(self)
        served = serving(route)
        self.dispatched = served.by is not None
        logger.debug("%s %s %s", methods(route), route.path, served)
        with _building(route, served, self.stream_settings):
            return parsing_json(super().get_route_handler(), _check_routes_left)


def use_dispatch_routes(app: Any, route_class: Any = DispatchRoute) -> None:
    """Serve every `APIRoute` of a FastAPI app or router, included routers' too, by `route_class`.

    For an app whose routers are made before it (`APIRouter()` at import, in many modules):
    call it once the app is complete, before it serves. Each route is made a `route_class` in
    place, keeping everything FastAPI made of its settings (dependencies, response model,
    OpenAPI document, inclusions' prefixes and dependencies); its handler is built again,
    and the routes `route_class` leaves to FastAPI are served as before. Routes of another
    class (a subclass of `APIRoute` of their own) are kept as they are. The app's router takes
    `route_class` for the routes added later.

    Raises:
        TypeError: `app` is not a FastAPI app or `APIRouter`, or `route_class` is not
            `DispatchRoute` or a subclass of it.
    """
    router = getattr(app, "router", app)
    if not isinstance(router, APIRouter):
        msg = f"use_dispatch_routes() takes a FastAPI app or an APIRouter, not {app!r}"
        raise TypeError(msg)
    if not _is_dispatch_route(route_class):
        msg = (
            "use_dispatch_routes(route_class=...) takes DispatchRoute or a subclass of it, "
            f"not {route_class!r}"
        )
        raise TypeError(msg)
    _adopt(router, route_class)
    if router.route_class is APIRoute:
        router.route_class = route_class


def _adopt(router: Any, route_class: type[DispatchRoute]) -> None:
    for route in _plain(router.routes):
        route.endpoint_facts = endpoint_facts(route.endpoint)
        _fastapi.rebuild(route, route_class)
    _fastapi.routes_changed(router)
    for included in _fastapi.included_routers(router):
        _adopt(included, route_class)


def _plain(routes: Any) -> list[Any]:
    return [route for route in routes if type(route) is APIRoute]


def _routes_left(router: Any, adopted: bool = False) -> list[Any]:
    """The plain `APIRoute`s of `router`'s tree under a router whose class is a `DispatchRoute`.

    `adopted`: a router above `router` has that route class.
    """
    adopted = adopted or _is_dispatch_route(router.route_class)
    left = _plain(router.routes) if adopted else []
    for included in _fastapi.included_routers(router):
        left += _routes_left(included, adopted)
    return left


def _is_dispatch_route(route_class: Any) -> bool:
    return isinstance(route_class, type) and issubclass(route_class, DispatchRoute)


# The apps whose routes have been checked, each once, at the first request a DispatchRoute serves.
_checked_apps: weakref.WeakSet[Any] = weakref.WeakSet()


def _check_routes_left(request: Request) -> None:
    """Warn, once per app, of its plain `APIRoute`s left under a `DispatchRoute` router.

    Two mistakes leave routes on FastAPI's path silently: a route class set on a router after
    routes were added to it, and a plain `APIRouter()` included into a router that has the route
    class (an included router's routes keep their own). FastAPI has no hook at either moment; the
    app's first request served by a `DispatchRoute` is the first moment this package runs.
    """
    app = request.scope.get("app")
    router = getattr(app, "router", None)
    if not isinstance(router, APIRouter) or app in _checked_apps:
        return
    _checked_apps.add(app)
    left = _routes_left(router)
    if left:
        named = ", ".join(f"{methods(route)} {route.path}" for route in left[:5])
        logger.warning(
            "%d route(s) %s%s are served by FastAPI's APIRoute under a router whose route class "
            "is a DispatchRoute (the route class was set after they were added, or their "
            "router was included with its own route class): set APIRouter(route_class=...) or "
            "app.router.route_class = ... before the routes are added, or call "
            "orjson_dispatch.use_dispatch_routes(app) once the app is complete",
            len(left),
            named,
            ", ..." if len(left) > 5 else "",
        )


def _building(route: Any, served: Serving, settings: StreamSettings) -> Any:
    """FastAPI's handler build, with what it serializes through and renders with substituted."""
    if served.by != "DispatchRoute":
        return contextlib.nullcontext()
    if not served.stream:
        return _fastapi.building_handler(route, **_body_settings(route, served))
    dependant = _stream_dependant(route, served, settings)
    if served.returned_stream is None:  # always a stream: no JSON body to serialize
        body: dict[str, Any] = {
            "response_field": None,
            "response_class": JSONResponse,
            "default_class": True,
        }
    else:  # the JSON body: as the route answers any value
        _fastapi.document_both(
            route, served.returned_stream.item, served.returned_stream.kind.media_type
        )
        body = _body_settings(route, served)
    return _fastapi.building_handler(route, dependant=dependant, **body)


def _body_settings(route: Any, served: Serving) -> dict[str, Any]:
    """Serialize returned values with orjson: the response field and the response class."""
    response_class, is_default = _fastapi.response_class_in_force(route)
    field = route.response_field
    assert served.serialization is not None
    return {
        "response_field": ResponseField(field, route_serializer(field, served.serialization)),
        "response_class": rendering(response_class),
        "default_class": is_default,
    }


def _stream_dependant(route: Any, served: Serving, settings: StreamSettings) -> Any:
    """The route's `Dependant`, calling the endpoint and streaming its items with `_streams`.

    FastAPI's handler is given an endpoint that calls the endpoint (or creates the generator)
    and returns the finished streaming response (FastAPI attaches background tasks to a
    returned response), and no stream settings, so that it solves the dependencies and calls
    the endpoint as for any route. An endpoint that may answer JSON (`returned_stream`) returns
    any other value to FastAPI's handler, which validates and serializes it as the route's.
    """
    item_field = route.stream_item_field
    validate = None if item_field is None else validator(item_field)
    serialize = route_serializer(
        item_field, serialization_in_force(served.options, route, item_field)
    )
    stream = functools.partial(
        build_stream,
        events=_fastapi.streams_events(route),
        settings=settings,
        **({"status_code": route.status_code} if route.status_code else {}),
    )

    def streaming(endpoint: Callable[..., Any], response_name: str) -> Callable[..., Any]:
        marked = wrapped_endpoint(endpoint)
        if marked is not None:  # @dispatch on the endpoint: its options, the endpoint itself
            endpoint = marked.endpoint

        def encode(value: Any) -> bytes:
            if validate is not None:
                value = validate(value, call)
            return serialize(value)

        call = _streaming_call(endpoint, response_name, served, stream, encode)
        return call

    return _fastapi.handler_dependant(route, streaming, RESPONSE_PARAMETER)


def _streaming_call(
    endpoint: Callable[..., Any],
    response_name: str,
    served: Serving,
    stream: Callable[..., Response],
    encode: Callable[[Any], bytes],
) -> Callable[..., Any]:
    """Return what FastAPI calls for a streaming endpoint: the finished streaming response."""
    keep_response = response_name != RESPONSE_PARAMETER
    returned = served.returned_stream
    is_async = _fastapi.is_async(endpoint)

    async def call(**values: Any) -> Any:
        sub_response = values[response_name] if keep_response else values.pop(response_name)
        values.pop(REQUEST_PARAMETER, None)  # what @dispatch asks FastAPI for, for itself
        if returned is None:
            items, events = endpoint(**values), None
        else:
            result = await (
                endpoint(**values) if is_async else run_in_threadpool(endpoint, **values)
            )
            if not isinstance(result, Streamed):
                return result  # the JSON body, answered by FastAPI's handler
            items, events = result.items, isinstance(result, ServerSentEvents)
        kwargs: dict[str, Any] = {} if events is None else {"events": events}
        if sub_response.status_code:
            kwargs["status_code"] = sub_response.status_code
        response = stream(items, encode, **kwargs)
        response.headers.raw.extend(sub_response.headers.raw)
        return response

    for name in ("__name__", "__qualname__", "__module__"):  # FastAPI's names for the endpoint
        if hasattr(endpoint, name):
            setattr(call, name, getattr(endpoint, name))
    _fastapi.seed_endpoint_context(call, endpoint)
    return call


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
