"""Values with a declared type, encoded as FastAPI's typed path encodes them.

FastAPI validates the returned value against the declared type (`response_model` or the return
annotation), then serializes the validated value with pydantic's `dump_json`. `TypedEncoder` gives
the same JSON: it validates unless the value is already an instance of exactly the declared model
class (validation would return that very instance), then encodes the value with orjson when every
model in it has an exact plan (`_models`), and with the declared type's `dump_json` otherwise.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
from pydantic import BaseModel

from orjson_dispatch._models import Check, NotPlainError, analyse, model_default
from orjson_dispatch._options import MODEL_OPTION

__all__ = ["TypedEncoder"]


class TypedEncoder:
    """Encode values declared as one type.

    Args:
        annotation: The declared type.
        validate: Returns the validated value or raises the validation error to report.
        dump_json: pydantic's exact serializer for the declared type, with every option bound.
        by_alias: Whether fields are written under their serialization alias.
        selective: Some field selection (include, exclude, exclude_unset, exclude_defaults,
            exclude_none) is asked for; pydantic then serializes every value itself.
        option: orjson formatting options.
    """

    __slots__ = ("_check", "_default", "_dump_json", "_fast", "_option", "_skip", "_validate")

    def __init__(
        self,
        annotation: Any,
        *,
        validate: Callable[[Any], Any],
        dump_json: Callable[[Any], bytes],
        by_alias: bool,
        selective: bool,
        option: int,
    ) -> None:
        self._validate = validate
        self._dump_json = dump_json
        self._default = model_default(by_alias)
        self._option = MODEL_OPTION | option
        self._check: Check | None = None
        self._fast = not selective
        if self._fast:
            try:
                self._check = analyse(annotation, by_alias)
            except NotPlainError:
                self._fast = False
        # Validating an exact instance returns it unchanged unless the class revalidates.
        self._skip: type[BaseModel] | None = None
        if (
            isinstance(annotation, type)
            and issubclass(annotation, BaseModel)
            and annotation.model_config.get("revalidate_instances", "never") != "always"
        ):
            self._skip = annotation

    def encode(self, value: Any) -> bytes:
        """Validate `value` if needed and return its JSON.

        Raises:
            Exception: What `validate` raises for a value that does not fit the declared type,
                or pydantic's serialization error for a value it cannot serialize.
        """
        if self._skip is None or type(value) is not self._skip:
            value = self._validate(value)
        if self._fast and (self._check is None or self._check(value)):
            try:
                return orjson.dumps(value, default=self._default, option=self._option)
            except TypeError:
                pass  # an integer beyond 64 bits, a non-str key...: pydantic decides
        return self._dump_json(value)
