"""Values with a declared type, encoded as FastAPI's typed path encodes them.

FastAPI validates the returned value against the declared type (`response_model` or the return
annotation), then serializes the validated value with pydantic's `dump_json`. `TypedEncoder` gives
the same JSON: it validates unless the value is already an instance of exactly the declared model
class (validation would return that very instance), then encodes the value with orjson when every
model in it has an exact plan (`_models`), and with the declared type's `dump_json` otherwise.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import orjson
from pydantic import BaseModel, TypeAdapter

from orjson_dispatch._models import (
    Check,
    NotPlainError,
    analyse,
    known_default,
    model_default,
    without_nan,
    writes_nan,
)
from orjson_dispatch._options import ENCODE_OPTION, Serialization

__all__ = ["TypedEncoder", "typed_encoder"]


class TypedEncoder:
    """Encode values declared as one type.

    Args:
        annotation: The declared type.
        validate: Returns the validated value or raises the validation error to report.
        dump_json: pydantic's exact serializer for the declared type, with every setting bound.
        serialization: The settings; with a selective one (include, exclude, exclude_*),
            pydantic serializes every value itself.
    """

    __slots__ = ("_check", "_default", "_dump_json", "_fast", "_option", "exact_class", "validate")

    def __init__(
        self,
        annotation: Any,
        *,
        validate: Callable[[Any], Any],
        dump_json: Callable[[Any], bytes],
        serialization: Serialization,
    ) -> None:
        self.validate = validate
        self._dump_json = dump_json
        if writes_nan(TypeAdapter(annotation).core_schema):
            self._dump_json = lambda value: without_nan(dump_json(value))
        self._default = model_default(serialization.by_alias)
        self._option = ENCODE_OPTION | serialization.option
        self._check: Check | None = None
        self._fast = not serialization.selective
        if self._fast:
            found: set[type[BaseModel]] = set()
            try:
                self._check = analyse(annotation, serialization.by_alias, found)
            except NotPlainError:
                self._fast = False
            else:
                self._default = known_default(found, serialization.by_alias)
        # Validating an exact instance returns it unchanged unless the class revalidates.
        self.exact_class: type[BaseModel] | None = None
        if (
            isinstance(annotation, type)
            and issubclass(annotation, BaseModel)
            and annotation.model_config.get("revalidate_instances", "never") != "always"
        ):
            self.exact_class = annotation

    def encode(self, value: Any) -> bytes:
        """Validate `value` if needed and return its JSON.

        Raises:
            Exception: What `validate` raises for a value that does not fit the declared type,
                or pydantic's serialization error for a value it cannot serialize.
        """
        return self.serialize(self.validated(value))

    def validated(self, value: Any) -> Any:
        """Return `value` validated against the declared type (unchanged for an exact instance)."""
        if type(value) is self.exact_class:
            return value
        return self.validate(value)

    def serialize(self, value: Any) -> bytes:
        """Return the JSON of an already validated `value`."""
        if self._fast and (self._check is None or self._check(value)):
            try:
                return orjson.dumps(value, default=self._default, option=self._option)
            except TypeError:
                pass  # an integer beyond 64 bits, a non-str key...: pydantic decides
        return self._dump_json(value)


def typed_encoder(annotation: Any, serialization: Serialization) -> TypedEncoder:
    """Return a `TypedEncoder` validating with a `TypeAdapter` of `annotation`.

    Cached for hashable annotations and settings (at most 256, so that classes created on the
    fly are not kept alive without bound).
    """
    try:
        return _cached_typed_encoder(annotation, serialization)
    except TypeError:  # an unhashable annotation: build it each time
        return _typed_encoder(annotation, serialization)


def _typed_encoder(annotation: Any, serialization: Serialization) -> TypedEncoder:
    adapter: TypeAdapter[Any] = TypeAdapter(annotation)
    return TypedEncoder(
        annotation,
        validate=functools.partial(adapter.validate_python, from_attributes=True),
        dump_json=functools.partial(adapter.dump_json, **serialization.pydantic_options()),
        serialization=serialization,
    )


_cached_typed_encoder = functools.lru_cache(maxsize=256)(_typed_encoder)
