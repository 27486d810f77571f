"""How the `dispatch` decorator answers the values its endpoint returns.

FastAPI (`fastapi.routing.get_request_handler`) validates a returned value against the route's
response field, serializes it with the route's `response_model_*` settings, builds the route's
response class with the route's `status_code` (or the status set on an injected `Response`),
empties the body for statuses that forbid one and appends the injected `Response`'s headers and
cookies. The decorator's `Responder` redoes these steps inside the endpoint call, worked out
once per route (an `_Answer`), with the encoders of `_encoders`.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
import weakref
from collections.abc import Callable, Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from orjson_dispatch import _fastapi
from orjson_dispatch._diagnostics import logger
from orjson_dispatch._encoders import declared_encoder, route_serializer
from orjson_dispatch._options import Options
from orjson_dispatch._rendering import Encoded, body_allowed, rendering
from orjson_dispatch._serving import serving
from orjson_dispatch._validation import validator

__all__ = ["Responder"]


@dataclasses.dataclass(frozen=True)
class _Answer:
    """How one route answers, for the decorator."""

    encode: Callable[[Any], bytes] | None  # None: FastAPI serializes (a non-JSON class)
    response_class: type[Response]
    status_code: int | None
    media_type: str | None
    headers: Mapping[str, str] | None

    def respond(self, content: Any, sub_response: Response | None) -> Any:
        if self.encode is None:
            return content
        kwargs: dict[str, Any] = {}
        # FastAPI: the status set on the injected Response wins over the route's.
        status_code = (sub_response.status_code if sub_response is not None else None) or (
            self.status_code
        )
        if status_code is not None:
            kwargs["status_code"] = status_code
        if self.media_type is not None:
            kwargs["media_type"] = self.media_type
        response = self.response_class(Encoded(self.encode(content)), **kwargs)
        if not body_allowed(response.status_code):
            response.body = b""
            if "content-length" in response.headers:  # a 205 (RFC 9110 section 15.3.6)
                response.headers["content-length"] = "0"
        if self.headers:
            response.headers.raw.extend(
                (key.lower().encode("latin-1"), value.encode("latin-1"))
                for key, value in self.headers.items()
            )
        if sub_response is not None:
            response.headers.raw.extend(sub_response.headers.raw)
        return response


class Responder:
    """Answers one decorated endpoint's returned values: one `_Answer` per route serving it.

    Args:
        wrapper: The function FastAPI calls (its errors name the endpoint).
        options: The options given to `dispatch`.
        name: The endpoint's name, for messages.
        declared: The endpoint's return annotation (or `UNTYPED`), for Starlette routes.
    """

    def __init__(
        self,
        wrapper: Callable[..., Any],
        options: Options,
        name: str,
        declared: Any,
    ) -> None:
        self._wrapper = wrapper
        self._options = options
        self._name = name
        self._declared = declared
        self._lock = threading.Lock()
        # One per route (or FastAPI's effective route context, one per inclusion), by id():
        # routes are unhashable. The entry goes with the route.
        self._answers: dict[int, tuple[weakref.ref[Any], _Answer]] = {}
        self._standalone: _Answer | None = None

    def respond(self, content: Any, request: Request | None, sub_response: Any) -> Any:
        """Return the finished Response for `content` (content itself when FastAPI must)."""
        if isinstance(content, Response):
            return content
        answer = self._answer(request)
        try:
            with _fastapi.serialization_operation(self._wrapper):
                return answer.respond(content, sub_response)
        except (TypeError, ValueError) as error:
            if isinstance(error, _fastapi.VALIDATION_ERRORS):
                raise  # the value does not fit the declared type: FastAPI's 500, no log here
            # orjson's JSONEncodeError is a TypeError, pydantic's serialization error a
            # ValueError: the value holds something neither can encode.
            logger.error(
                "%s returned a value of type %s that cannot be serialized: %s",
                self._name,
                type(content).__qualname__,
                error,
            )
            raise

    def _answer(self, request: Request | None) -> _Answer:
        route = _fastapi.effective_route(request.scope) if request is not None else None
        if route is None or not _fastapi.is_fastapi_route(route):
            if self._standalone is None:
                self._standalone = self._standalone_answer()
            return self._standalone
        key = id(route)
        entry = self._answers.get(key)
        if entry is None or entry[0]() is not route:
            with self._lock:
                forget = functools.partial(self._answers.pop, key, None)
                entry = self._answers[key] = (
                    weakref.ref(route, lambda _: forget()),
                    self._route_answer(route),
                )
        return entry[1]

    def _standalone_answer(self) -> _Answer:
        return _Answer(
            encode=declared_encoder(self._declared, self._options.serialization()),
            response_class=rendering(Response),
            status_code=self._options.status_code or 200,
            media_type=self._options.media_type or "application/json",
            headers=self._options.headers,
        )

    def _route_answer(self, route: Any) -> _Answer:
        response_class, is_default = _fastapi.response_class_in_force(route)
        field = route.response_field
        options = self._options
        served = serving(route)
        if served.by is None:
            logger.warning(
                "%s is served by route %s, whose responses FastAPI serializes itself: %s",
                self._name,
                route.path,
                served.reason,
            )
            return _Answer(None, response_class, None, None, None)
        if options.status_code and route.status_code and options.status_code != route.status_code:
            logger.warning(
                "%s has status_code=%s in dispatch() and %s on its route; the "
                "route's status code, which its OpenAPI document shows, is used",
                self._name,
                options.status_code,
                route.status_code,
            )
        assert served.serialization is not None  # orjson serializes: it has one
        serialize = route_serializer(field, served.serialization)
        encode: Callable[[Any], bytes]
        if field is None:
            encode = serialize
        else:
            wrapper, validate = self._wrapper, validator(field)

            def encode(value: Any) -> bytes:
                return serialize(validate(value, wrapper))

        return _Answer(
            encode=encode,
            response_class=rendering(JSONResponse if is_default else response_class),
            status_code=route.status_code or options.status_code,
            media_type=options.media_type,
            headers=options.headers,
        )
