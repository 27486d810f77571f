"""Values with a declared type, encoded as FastAPI's typed path encodes them.

FastAPI validates the returned value against the declared type (`response_model` or the return
annotation), then serializes the validated value with pydantic's `dump_json`. `TypedEncoder`
does the same validation, always (it runs the model validators of a returned instance too), then
writes the validated value with orjson where every model in it has a generated encoder
(`_models`) and the value passes the declared type's check, and with `dump_json` otherwise.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from types import GenericAlias
from typing import Any

from pydantic import PydanticUserError, TypeAdapter

from orjson_dispatch._diagnostics import logger
from orjson_dispatch._models import (
    KeepResultsError,
    NotPlainError,
    declared,
    default_for,
    keeping_results,
    orjson_models,
    without_nan,
    writes_nan,
)
from orjson_dispatch._options import Serialization, encode_option

__all__ = ["TypedEncoder", "typed_encoder"]


class TypedEncoder:
    """Encode values declared as one type.

    The orjson path is built when the first value is serialized. Where it cannot be built for
    the type, every value is written by `dump_json` (pydantic's, or FastAPI's field's own),
    said once in the debug log: never an error where FastAPI serves.

    Args:
        annotation: The declared type.
        validate: Returns the validated value or raises the validation error to report.
        dump_json: pydantic's exact serializer for the declared type, with every setting bound.
        serialization: The settings; with a selective one (include, exclude, exclude_*),
            pydantic serializes every value itself.
    """

    __slots__ = (
        "_annotation",
        "_by_alias",
        "_check",
        "_default",
        "_dump_json",
        "_fast",
        "_option",
        "_root",
        "_selective",
        "left_to_pydantic",
        "validate",
    )

    def __init__(
        self,
        annotation: Any,
        *,
        validate: Callable[[Any], Any],
        dump_json: Callable[[Any], bytes],
        serialization: Serialization,
    ) -> None:
        self.validate = validate
        self._annotation = annotation
        self._by_alias = serialization.by_alias
        self._dump_json = dump_json
        self._option = serialization.option
        self._check: Callable[[Any], bool] | None = None
        self._root: type[Any] | None = None
        self._default: Callable[[Any], Any] | None = None
        self._selective = serialization.selective
        # None until built; then True where orjson writes the values (see `left_to_pydantic`).
        self._fast: bool | None = None
        self.left_to_pydantic: str | None = None

    def build(self) -> str | None:
        """Build the orjson path if not yet; return why pydantic writes every value, or None."""
        if self._fast is None:
            self._fast = False
            try:
                schema = TypeAdapter(self._annotation).core_schema
                if writes_nan(schema):
                    dump_json = self._dump_json
                    self._dump_json = lambda value: without_nan(dump_json(value))
                if self._selective:
                    self.left_to_pydantic = (
                        "a setting leaves fields out (include, exclude, exclude_*)"
                    )
                else:
                    self._check, self._root, models = declared(schema)
                    self._default = default_for(models, self._by_alias)
            except NotPlainError:
                self.left_to_pydantic = "pydantic's JSON of the type is not provably orjson's"
            except PydanticUserError as error:
                # Not fully defined (a forward reference to a class local to a function): FastAPI
                # serves the app and answers 500 for each value; `dump_json` raises the same.
                self.left_to_pydantic = f"the type is not fully defined: {error}"
            except Exception as error:  # never fail where FastAPI serves
                self.left_to_pydantic = f"no encoder could be built: {error!r}"
            self._fast = self.left_to_pydantic is None
            if self.left_to_pydantic is not None:
                logger.debug(
                    "%r is written by pydantic's serializer: %s",
                    self._annotation,
                    self.left_to_pydantic,
                )
        return self.left_to_pydantic

    def encode(self, value: Any) -> bytes:
        """Validate `value` and return its JSON.

        Raises:
            Exception: What `validate` raises for a value that does not fit the declared type,
                or pydantic's serialization error for a value it cannot serialize.
        """
        return self.serialize(self.validate(value))

    def serialize(self, value: Any) -> bytes:
        """Return the JSON of an already validated `value`."""
        fast = self._fast
        if fast is None:
            self.build()
            fast = self._fast
        if (
            fast
            and (self._root is None or type(value) is self._root)
            and (self._check is None or self._check(value))
        ):
            default: Callable[[Any], Any] = self._default  # type: ignore[assignment]
            option = encode_option(self._option)
            try:
                try:
                    return orjson_models(value, default, option)
                except KeepResultsError:  # a model met at an `Any` position runs user code
                    return keeping_results(lambda: orjson_models(value, default, option))
            except TypeError:
                pass  # a lone surrogate, a model with `ser_json_*` settings...: pydantic decides
        return self._dump_json(value)


def typed_encoder(annotation: Any, serialization: Serialization) -> TypedEncoder:
    """Return a `TypedEncoder` validating with a `TypeAdapter` of `annotation`.

    Cached for hashable annotations and settings (at most 256, so that classes created on the
    fly are not kept alive without bound).
    """
    try:
        # `Union[A, B] == Union[B, A]`, but pydantic breaks ties between members by their order:
        # the repr tells them apart. A class is equal to itself only: no repr to build.
        plain = isinstance(annotation, type) and not isinstance(annotation, GenericAlias)
        order = "" if plain else repr(annotation)  # (`list[int]` is a type before Python 3.11)
        return _cached_typed_encoder(annotation, order, serialization)
    except TypeError:  # an unhashable annotation: build it each time
        return _typed_encoder(annotation, "", serialization)


def _typed_encoder(annotation: Any, order: str, serialization: Serialization) -> TypedEncoder:
    del order  # a part of the cache key only
    adapter: TypeAdapter[Any] = TypeAdapter(annotation)
    return TypedEncoder(
        annotation,
        # The adapter's own validator: TypeAdapter.validate_python only passes its arguments on.
        validate=functools.partial(adapter.validator.validate_python, from_attributes=True),
        dump_json=functools.partial(adapter.dump_json, **serialization.pydantic_options()),
        serialization=serialization,
    )


_cached_typed_encoder = functools.lru_cache(maxsize=256)(_typed_encoder)
