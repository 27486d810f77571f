"""Which encoder serializes a value: the one question every entry point asks.

`declared_encoder` for a declared type (or none) as the streams and the decorator in a Starlette
app have it (`dumps` makes the same choice inline); `route_serializer` for FastAPI's response
field of a route, as `DispatchRoute` and the decorator under FastAPI have it.
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

__all__ = ["UNTYPED", "declared_encoder", "route_serializer"]


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
    encoders = _field_encoders.setdefault(field, {})
    encoder = encoders.get(serialization)
    if encoder is None:
        encoder = encoders[serialization] = _field_encoder(field, serialization)
    return encoder.serialize


_field_encoders: weakref.WeakKeyDictionary[Any, dict[Serialization, TypedEncoder]] = (
    weakref.WeakKeyDictionary()
)


def _field_encoder(field: Any, serialization: Serialization) -> TypedEncoder:
    annotation = field.field_info.annotation
    if not _fastapi.serializes_json(field):
        # FastAPI before 0.130 serializes typed values to Python and then through
        # jsonable_encoder; pydantic's dump_json of the same type writes the same JSON.
        return typed_encoder(annotation, serialization)
    return TypedEncoder(
        annotation,
        validate=functools.partial(_fastapi.validated, field),
        dump_json=functools.partial(field.serialize_json, **serialization.pydantic_options()),
        serialization=serialization,
    )
