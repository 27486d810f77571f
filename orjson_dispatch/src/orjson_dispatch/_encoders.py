"""Which encoder serializes a value: the one question every entry point asks.

`declared_encoder` for a declared type (or none) as the streams and the decorator in a Starlette
app have it (`dumps` makes the same choice inline); `route_serializer` for FastAPI's response
field of a route, as `DispatchRoute` and the decorator under FastAPI have it, and
`left_to_fastapi`, why FastAPI's own serializer of that field writes its values.

Encoders for a declared type are built when the first value is serialized, not when the route
is created; where one cannot be built for the type, pydantic's serializer (FastAPI's field's own)
writes every value, said once in the debug log.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable
from typing import Any, Final

from orjson_dispatch import _fastapi
from orjson_dispatch._options import Serialization
from orjson_dispatch._typed import TypedEncoder, typed_encoder
from orjson_dispatch._untyped import encode_untyped

__all__ = ["UNTYPED", "declared_encoder", "left_to_fastapi", "route_serializer"]


class _Untyped:
    """No declared type: FastAPI's untyped path (`jsonable_encoder`)."""

    def __repr__(self) -> str:
        return "UNTYPED"


UNTYPED: Final[Any] = _Untyped()


def declared_encoder(annotation: Any, serialization: Serialization) -> Callable[[Any], bytes]:
    """Return the encoder of values declared as `annotation`, validating them first.

    Args:
        annotation: The declared type, or `UNTYPED` for FastAPI's untyped path.
        serialization: The settings.
    """
    if annotation is UNTYPED:
        return functools.partial(encode_untyped, serialization=serialization)
    return typed_encoder(annotation, serialization).encode


def route_serializer(field: Any, serialization: Serialization) -> Callable[[Any], bytes]:
    """Return the encoder of a route's values, already validated by FastAPI's response field.

    Kept with the field (FastAPI 0.137 to 0.141 build the handler of an included route on every
    request).

    Args:
        field: FastAPI's response field of the route (or of its stream items), or None for
            FastAPI's untyped path (`jsonable_encoder`).
        serialization: The route's settings.
    """
    if field is None:
        return functools.partial(encode_untyped, serialization=serialization)
    return _route_encoder(field, serialization).serialize


def left_to_fastapi(field: Any, serialization: Serialization) -> str | None:
    """Return why FastAPI's own serializer writes a route's values, or None where orjson does.

    Builds the field's encoder now (`route_serializer` builds it at the first value). FastAPI's
    serializer is then called by the route serializer itself: the route needs no other path.

    Args:
        field: As for `route_serializer`.
        serialization: As for `route_serializer`.
    """
    if field is None:
        return None
    return _route_encoder(field, serialization).build()


def _route_encoder(field: Any, serialization: Serialization) -> TypedEncoder:
    encoders = _field_encoders.setdefault(field, {})
    encoder = encoders.get(serialization)
    if encoder is None:
        encoder = encoders[serialization] = _field_encoder(field, serialization)
    return encoder


_field_encoders: weakref.WeakKeyDictionary[Any, dict[Serialization, TypedEncoder]] = (
    weakref.WeakKeyDictionary()
)


def _field_encoder(field: Any, serialization: Serialization) -> TypedEncoder:
    dump_json: Callable[[Any], bytes]
    if _fastapi.serializes_json(field):
        dump_json = functools.partial(field.serialize_json, **serialization.pydantic_options())
    else:
        # FastAPI before 0.130 serializes typed values to Python with the field, then through
        # jsonable_encoder and the response class.
        to_python = functools.partial(
            field.serialize, mode="json", **serialization.pydantic_options()
        )
        layout = Serialization(option=serialization.option)

        def dump_json(value: Any) -> bytes:
            return encode_untyped(to_python(value), layout)

    return TypedEncoder(
        field.field_info.annotation,
        dump_json=dump_json,
        serialization=serialization,
    )
