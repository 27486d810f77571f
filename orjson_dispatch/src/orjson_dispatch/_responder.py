"""Turning an endpoint's return value into the Response FastAPI would have built.

FastAPI (`fastapi.routing.get_request_handler`) serializes a returned value with the route's
`response_model` and `response_model_*` settings, builds the route's response class with the
route's `status_code` (or the status set on an injected `Response` parameter), empties the body
for statuses that forbid one, and appends the injected `Response`'s headers and cookies. When an
endpoint returns a Response instead, FastAPI skips all of that except attaching background tasks.
A `ResponsePlan` redoes those steps with the fast encoders, once compiled per route.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from collections.abc import Callable, Mapping
from typing import Any

from starlette.responses import JSONResponse, Response

from orjson_dispatch._dumps import encode_untyped, typed_encoder
from orjson_dispatch._jsonable import ExcludeOptions
from orjson_dispatch._typed import TypedEncoder

__all__ = ["DispatchOptions", "ResponsePlan", "plan_for_route", "standalone_plan"]

logger = logging.getLogger("orjson_dispatch")


@dataclasses.dataclass(frozen=True)
class DispatchOptions:
    """The options given to `dispatch`; None means "not given"."""

    status_code: int | None = None
    headers: Mapping[str, str] | None = None
    media_type: str | None = None
    layout: int = 0
    by_alias: bool | None = None
    exclude_unset: bool | None = None
    exclude_defaults: bool | None = None
    exclude_none: bool | None = None


@dataclasses.dataclass(frozen=True)
class ResponsePlan:
    """How one route answers the values its endpoint returns.

    Attributes:
        encode: Returns the JSON body for a returned value (validating it if a type is declared).
        status_code: The status when no injected `Response` sets one.
        media_type: The content type.
        headers: Headers every response of the route carries.
        delegate: The route's response class renders content in a way of its own; the value is
            handed back to FastAPI unchanged.
    """

    encode: Callable[[Any], bytes]
    status_code: int
    media_type: str
    headers: Mapping[str, str] | None
    delegate: bool = False

    def respond(self, content: Any, sub_response: Response | None) -> Any:
        """Return the finished Response for `content` (or `content` itself when delegating)."""
        if self.delegate:
            return content
        body = self.encode(content)
        status_code = self.status_code
        # FastAPI: a status set on the injected Response wins over the route's.
        if sub_response is not None and sub_response.status_code:
            status_code = sub_response.status_code
        if not _body_allowed(status_code):
            body = b""
        response = Response(
            body, status_code=status_code, headers=self.headers, media_type=self.media_type
        )
        if sub_response is not None:
            response.headers.raw.extend(sub_response.headers.raw)
        return response


def _body_allowed(status_code: int) -> bool:
    # RFC 9110 sections 15.2, 15.3.5, 15.3.6 and 15.4.5: 1xx, 204, 205 and 304 carry no content.
    return not (status_code < 200 or status_code in (204, 205, 304))


def _selection(options: DispatchOptions, route: Any | None) -> ExcludeOptions:
    """Merge the options given to `dispatch` over the route's `response_model_*` settings."""

    def pick(given: bool | None, setting: str, default: bool) -> bool:
        if given is not None:
            return given
        return bool(getattr(route, setting, default)) if route is not None else default

    return ExcludeOptions(
        by_alias=pick(options.by_alias, "response_model_by_alias", True),
        exclude_unset=pick(options.exclude_unset, "response_model_exclude_unset", False),
        exclude_defaults=pick(options.exclude_defaults, "response_model_exclude_defaults", False),
        exclude_none=pick(options.exclude_none, "response_model_exclude_none", False),
        include=getattr(route, "response_model_include", None),
        exclude=getattr(route, "response_model_exclude", None),
    )


def standalone_plan(options: DispatchOptions, annotation: Any) -> ResponsePlan:
    """Plan for Starlette routes and direct calls: `annotation` is the declared type or None."""
    selection = _selection(options, None)
    encode: Callable[[Any], bytes]
    if annotation is None:
        encode = functools.partial(encode_untyped, selection=selection, layout=options.layout)
    else:
        encode = typed_encoder(annotation, selection, options.layout).encode
    return ResponsePlan(
        encode=encode,
        status_code=options.status_code or 200,
        media_type=options.media_type or "application/json",
        headers=options.headers,
    )


def plan_for_route(options: DispatchOptions, route: Any, endpoint_name: str) -> ResponsePlan:
    """Plan for a FastAPI `APIRoute`, honouring every setting of the route."""
    from fastapi.datastructures import DefaultPlaceholder  # noqa: PLC0415 - FastAPI is optional

    response_class = route.response_class
    is_default_class = isinstance(response_class, DefaultPlaceholder)
    actual_class = response_class.value if is_default_class else response_class
    field = route.response_field
    if not _renders_json(actual_class) and not (field is not None and is_default_class):
        logger.warning(
            "orjson_dispatch: %s is served with response_class=%s, whose rendering orjson_dispatch "
            "does not reproduce; FastAPI serializes the responses of route %s itself",
            endpoint_name,
            actual_class.__qualname__,
            route.path,
        )
        return ResponsePlan(
            encode=_unused, status_code=200, media_type="", headers=None, delegate=True
        )
    selection = _selection(options, route)
    encode: Callable[[Any], bytes]
    if field is None:
        # FastAPI's untyped path is jsonable_encoder(value) without any response_model_* option.
        untyped = _selection(options, None)
        encode = functools.partial(encode_untyped, selection=untyped, layout=options.layout)
    else:
        encode = _route_encoder(field, selection, options.layout).encode
    if options.status_code and route.status_code and options.status_code != route.status_code:
        logger.warning(
            "orjson_dispatch: %s has status_code=%s in dispatch() and %s on its route; the route's "
            "status code, which its OpenAPI document shows, is used",
            endpoint_name,
            options.status_code,
            route.status_code,
        )
    media_type = options.media_type or (
        "application/json" if field is not None and is_default_class else actual_class.media_type
    )
    return ResponsePlan(
        encode=encode,
        status_code=route.status_code or options.status_code or 200,
        media_type=media_type or "application/json",
        headers=options.headers,
    )


def _unused(value: Any) -> bytes:
    raise AssertionError("a delegating plan encodes nothing")  # pragma: no cover


def _renders_json(response_class: type[Response]) -> bool:
    """Tell whether `response_class(content)` renders `content` as the JSON value we produce."""
    if not issubclass(response_class, JSONResponse):
        return False
    renders = {JSONResponse.render}
    try:
        from fastapi import responses  # noqa: PLC0415 - FastAPI is optional
    except ImportError:  # pragma: no cover - FastAPI routes imply FastAPI
        pass
    else:
        renders.update(
            getattr(responses, name).render
            for name in ("ORJSONResponse", "UJSONResponse")
            if hasattr(responses, name)
        )
    return response_class.render in renders


def _route_encoder(field: Any, selection: ExcludeOptions, layout: int) -> TypedEncoder:
    """Encode with FastAPI's own response field: its validation, errors and serializer."""
    from fastapi.exceptions import ResponseValidationError  # noqa: PLC0415

    def validate(value: Any) -> Any:
        validated, errors = field.validate(value, {}, loc=("response",))
        if errors:
            raise ResponseValidationError(errors=errors, body=value)
        return validated

    dump_json: Callable[[Any], bytes]
    if hasattr(field, "serialize_json"):
        dump_json = functools.partial(field.serialize_json, **selection.serializer_options())
    else:  # FastAPI before 0.130 has no JSON serializer on its fields
        fallback = typed_encoder(field.field_info.annotation, selection, layout)
        dump_json = fallback.encode
    return TypedEncoder(
        field.field_info.annotation,
        validate=validate,
        dump_json=dump_json,
        by_alias=selection.by_alias,
        selective=selection.selective,
        option=layout,
    )
