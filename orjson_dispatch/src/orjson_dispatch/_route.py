"""`DispatchRoute`: every route of a router answered as `dispatch` answers, by FastAPI's handler.

FastAPI builds each route's request handler once (and once per inclusion of its router) from
the route's settings, in `APIRoute.get_route_handler`. `DispatchRoute` lets FastAPI build that
handler itself, with one change: the response field it validates and serializes through (and
the response class it renders with) encode with orjson. Everything else, from the request body
to dependencies, status codes, headers, cookies, background tasks, telemetry spans and the
context of validation errors, stays FastAPI's own.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi.datastructures import DefaultPlaceholder
from fastapi.routing import APIRoute, APIRouter
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from orjson_dispatch import _fastapi
from orjson_dispatch._diagnostics import logger, methods
from orjson_dispatch._dispatch import REQUEST_PARAMETER, RESPONSE_PARAMETER, check_stream_options
from orjson_dispatch._encoders import route_serializer
from orjson_dispatch._options import Options, check_options
from orjson_dispatch._rendering import rendering
from orjson_dispatch._request_body import parsing_json
from orjson_dispatch._serving import returns_response, serving, wrapped_endpoint
from orjson_dispatch._stream_settings import StreamSettings
from orjson_dispatch._streamed import ReturnedStream, ServerSentEvents, Streamed, returned_stream
from orjson_dispatch._streams import build_stream

__all__ = ["DispatchRoute", "use_dispatch_routes"]

_DEFAULTS = Options()


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
    `json.loads`'s values and errors (`request_json`). Routes whose response class renders something
    other than JSON (`PlainTextResponse`, `HTMLResponse`, a class with its own `render`) and
    endpoints already wrapped in `dispatch` are left as they are.

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
        self._read_endpoint(endpoint)
        if self._returned_stream is not None and isinstance(
            settings.get("response_model", DefaultPlaceholder(None)), DefaultPlaceholder
        ):
            settings["response_model"] = self._returned_stream.body
        super().__init__(path, endpoint, **settings)

    def _read_endpoint(self, endpoint: Callable[..., Any]) -> None:
        # Read once: FastAPI 0.137 to 0.141 build the handler of an included route per request.
        annotation = _fastapi.return_annotation(endpoint)
        self._returned_stream = returned_stream(annotation)
        self._returns_response = returns_response(annotation)

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
        if served.by != "DispatchRoute":
            return parsing_json(super().get_route_handler(), _check_routes_left)
        if self._streams(route):
            substitutes = _stream_substitutes(route, self.stream_settings)
        else:
            substitutes = _body_substitutes(route)
        with _fastapi.building_with(route, substitutes):
            return parsing_json(super().get_route_handler(), _check_routes_left)

    def _streams(self, route: Any) -> bool:
        """Tell whether the route (or an effective route context of it) answers a stream."""
        return _fastapi.streams(route) or self._returned_stream is not None


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
    if not (isinstance(route_class, type) and issubclass(route_class, DispatchRoute)):
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
        DispatchRoute._read_endpoint(route, route.endpoint)
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


def _stream_substitutes(route: Any, settings: StreamSettings) -> dict[str, Any]:
    """Serve a stream with `_streams`, FastAPI doing everything else.

    FastAPI's handler is given an endpoint that calls the endpoint (or creates the generator)
    and returns the finished streaming response (FastAPI attaches background tasks to a
    returned response), and no stream settings, so that it solves the dependencies and calls
    the endpoint as for any route. An endpoint that may answer JSON (`returned_stream`) returns
    any other value to FastAPI's handler, which validates and serializes it as the route's.
    """
    dependant = _fastapi.copied_dependant(route)
    endpoint = dependant.call
    options = _DEFAULTS
    marked = wrapped_endpoint(endpoint)
    if marked is not None:  # @dispatch on the endpoint: its options, the endpoint itself
        endpoint = marked.endpoint
        options = check_options(marked.options, route.name)
        check_stream_options(options, route.name)
    returned = _returned(route)
    if returned is not None:
        _fastapi.document_both(route, returned.item, returned.kind.media_type)
    item_field = route.stream_item_field
    serialization = options.serialization(route if item_field is not None else None)
    response_name = dependant.response_param_name
    if response_name is None:  # inject the Response whose status and headers FastAPI applies
        response_name = dependant.response_param_name = RESPONSE_PARAMETER
    keep_response = response_name != RESPONSE_PARAMETER
    serialize_item = route_serializer(item_field, serialization)
    status_code = route.status_code
    sse = _fastapi.streams_events(route)
    is_async = _fastapi.is_async(endpoint)

    def encode_item(value: Any) -> bytes:
        if item_field is not None:
            value = _fastapi.validated(item_field, value, call)
        return serialize_item(value)

    async def call(**values: Any) -> Any:
        sub_response = values[response_name] if keep_response else values.pop(response_name)
        values.pop(REQUEST_PARAMETER, None)  # what @dispatch asks FastAPI for, for itself
        if returned is None:
            items, events = endpoint(**values), sse
        else:
            result = await (
                endpoint(**values) if is_async else run_in_threadpool(endpoint, **values)
            )
            if not isinstance(result, Streamed):
                return result  # the JSON body, answered by FastAPI's handler
            items, events = result.items, isinstance(result, ServerSentEvents)
        status = sub_response.status_code or status_code
        response = build_stream(
            items,
            encode_item,
            events=events,
            settings=settings,
            **({"status_code": status} if status else {}),
        )
        response.headers.raw.extend(sub_response.headers.raw)
        return response

    call.__name__ = getattr(endpoint, "__name__", call.__name__)
    call.__qualname__ = getattr(endpoint, "__qualname__", call.__qualname__)
    call.__module__ = getattr(endpoint, "__module__", call.__module__)
    dependant.call = call
    _fastapi.seed_endpoint_context(call, endpoint)
    substitutes = {
        "dependant": dependant,
        "response_class": DefaultPlaceholder(JSONResponse),
        "response_field": None,
        "stream_item_field": None,
        "is_json_stream": False,
    }
    if returned is not None:  # the JSON body: as the route answers any value
        substitutes.update(_body_substitutes(route, options))
    return substitutes


def _body_substitutes(route: Any, options: Options = _DEFAULTS) -> dict[str, Any]:
    """Serialize returned values with orjson: the response field and the response class.

    Args:
        route: The route, or FastAPI's effective route context of one of its inclusions.
        options: The options of `@dispatch` on the endpoint, over the route's settings.
    """
    response_class, is_default = _fastapi.response_class_in_force(route)
    rendered = rendering(response_class)
    field = route.response_field
    # FastAPI's untyped path is jsonable_encoder(value) with no response_model_* setting.
    serialization = options.serialization(route if field is not None else None)
    response_field = _fastapi.ResponseField(field, route_serializer(field, serialization))
    return {
        **dict.fromkeys(_fastapi.response_field_attributes(route), response_field),
        "response_class": DefaultPlaceholder(rendered) if is_default else rendered,
    }


def _returned(route: Any) -> ReturnedStream | None:
    """The stream an endpoint may return instead of a JSON body (`JSONLines`, ...), or None."""
    stream: ReturnedStream | None = _fastapi.original_route(route)._returned_stream
    return stream
