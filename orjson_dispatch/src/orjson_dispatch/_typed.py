"""Values with a declared type, encoded as FastAPI's typed path encodes them.

FastAPI validates the returned value against the declared type (`response_model` or the return
annotation), then serializes the validated value with pydantic's `dump_json`. `TypedEncoder`
does the same validation (it runs the model validators of a returned instance too; an instance of
a declared class that has none is what validation returns, and is not validated), then writes the
validated value with orjson and the declared type's class table (`_classes`), which leaves
fields out under `exclude_unset` and `exclude_none` as pydantic does (`_leaving`), and with
`dump_json` where the type is not plain, a setting only pydantic applies is given
(`exclude_defaults`, `include`, `exclude`), or orjson refuses a part of the value.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from types import GenericAlias
from typing import Any

import orjson
from pydantic import BaseModel, PydanticUserError, TypeAdapter

from orjson_dispatch._classes import Table, table
from orjson_dispatch._diagnostics import logger
from orjson_dispatch._kept import Kept, kept_on
from orjson_dispatch._options import DEFAULTS, Serialization, encode_option
from orjson_dispatch._plans import NotPlainError, declared, writes_nan
from orjson_dispatch._results import (
    ContextualError,
    KeepResultsError,
    keeping_results,
    rewrite,
    without_nan,
    write,
)

__all__ = ["KEPT_KEY", "TypedEncoder", "typed_encoder"]


class TypedEncoder:
    """Encode values declared as one type.

    The class table is built when the first value is serialized. Where it cannot be built for
    the type, every value is written by `dump_json` (pydantic's, or FastAPI's field's own),
    said once in the debug log: never an error where FastAPI serves.

    Args:
        annotation: The declared type.
        validate_python: pydantic's `validate_python` of the type, called as FastAPI's
            response field calls it (`from_attributes=True`); None where the caller validates
            (the field itself): `encode` is then not used.
        dump_json: pydantic's exact serializer for the declared type, with every setting bound.
        serialization: The settings; with one only pydantic applies (include, exclude,
            exclude_defaults), pydantic serializes every value itself.

    Attributes:
        encode: Validates a value and returns its JSON; raises what `validate_python` raises
            for a value that does not fit the declared type, or pydantic's serialization error
            for a value it cannot serialize.
        serialize: Returns the JSON of an already validated value.
        left_to_pydantic: Why pydantic writes every value, once built (`build`); else None.
    """

    __slots__ = (
        "_annotation",
        "_built",
        "_dump_json",
        "_passed",
        "_pydantic_json",
        "_root",
        "_serialization",
        "_table",
        "_validate_python",
        "encode",
        "left_to_pydantic",
        "serialize",
    )

    def __init__(
        self,
        annotation: Any,
        *,
        validate_python: Callable[..., Any] | None = None,
        dump_json: Callable[[Any], bytes],
        serialization: Serialization,
    ) -> None:
        self._validate_python = validate_python
        self._annotation = annotation
        self._dump_json = self._pydantic_json = dump_json
        self._serialization = serialization
        self._built = False
        self._table: Table | None = None
        self._root: type[BaseModel] | None = None
        self._passed = False
        self.left_to_pydantic: str | None = None
        self.encode: Callable[[Any], bytes] = self._first_encode
        self.serialize: Callable[[Any], bytes] = self._first_serialize

    def build(self) -> str | None:
        """Build the class table if not yet; return why pydantic writes every value, or None."""
        if not self._built:
            try:
                self._table = self._build()
            except NotPlainError as error:
                why = f" ({error})" if error.args else ""
                self.left_to_pydantic = f"pydantic's JSON of the type is not provably orjson's{why}"
            except ContextualError as error:
                self.left_to_pydantic = f"{error} has ser_json_* settings"
            except PydanticUserError as error:
                # Not fully defined (a forward reference to a class local to a function): FastAPI
                # serves the app and answers 500 for each value; `dump_json` raises the same.
                self.left_to_pydantic = f"the type is not fully defined: {error}"
            except Exception as error:  # never fail where FastAPI serves
                self.left_to_pydantic = f"no encoder could be built: {error!r}"
            if self.left_to_pydantic is not None:
                logger.debug(
                    "%r is written by pydantic's serializer: %s",
                    self._annotation,
                    self.left_to_pydantic,
                )
            self.serialize = self._writer(None)
            if self._validate_python is not None:
                self.encode = self._writer(self._validate_python)
            # Last: a thread that finds it set finds the writers (one that comes earlier builds
            # them too, alike).
            self._built = True
        return self.left_to_pydantic

    def _build(self) -> Table | None:
        schema = TypeAdapter(self._annotation).core_schema
        if writes_nan(schema):
            self._dump_json = functools.partial(_without_nan, self._pydantic_json)
        if self._serialization.by_pydantic:
            applied = "include, exclude, exclude_defaults"
            self.left_to_pydantic = f"a setting pydantic applies ({applied})"
            return None
        roots = declared(schema, {}).models
        if isinstance(self._annotation, type) and issubclass(self._annotation, BaseModel):
            self._root = self._annotation
            self._passed = _passes_instances(schema)
        return table(roots, self._serialization.by_alias, left_out=self._serialization.left_out)

    # Callers may hold these bound methods, made before the build: after it, each call reads the
    # writer the build made.
    def _first_encode(self, value: Any) -> bytes:
        assert self._validate_python is not None, "its values are validated by its caller"
        if not self._built:
            self.build()
        return self.encode(value)

    def _first_serialize(self, value: Any) -> bytes:
        if not self._built:
            self.build()
        return self.serialize(value)

    def _writer(self, validate: Callable[..., Any] | None) -> Callable[[Any], bytes]:
        """Return `encode` (with `validate`) or `serialize`, with what they read bound once."""
        found, dump_json, root = self._table, self._dump_json, self._root
        if found is None:
            if validate is None:
                return dump_json
            return lambda value: dump_json(validate(value, from_attributes=True))
        default, user_code = found.default, found.user_code
        # Read once (a call of its own costs a tenth of a small model's time): a numpy value met
        # after numpy is first imported reaches `default`, whose fallback writes it as orjson's
        # numpy option would.
        option = encode_option(self._serialization.option)
        # A subclass instance at the root, which validation passes through: written as the
        # declared class, as pydantic writes it.
        as_root = found.entries[root] if root is not None else None
        # Where validation returns an instance of the declared class as it is
        # (`_passes_instances`), it is not called for one.
        passed = root if self._passed else None
        # The class whose instances are written as they are (None: no value's class is None).
        ready = root if validate is None else passed

        def prepared(value: Any) -> Any:
            if validate is not None and type(value) is not passed:
                value = validate(value, from_attributes=True)
            return value if type(value) is root or as_root is None else as_root(value)

        def refused(value: Any, error: TypeError) -> bytes:
            # What orjson refused: written exactly (`rewrite`), by pydantic where orjson refuses
            # it even so (a lone surrogate, a model with `ser_json_*` settings...).
            try:
                try:
                    return rewrite(value, default, option, error)
                except KeepResultsError:  # a model met at an `Any` position runs user code
                    return keeping_results(lambda: write(value, default, option, True))
            except TypeError:
                return dump_json(value)

        def write_value(value: Any) -> bytes:
            if type(value) is not ready:
                value = prepared(value)
            try:
                return orjson.dumps(value, default=default, option=option)
            except TypeError as error:
                return refused(value, error)

        def write_running_user_code(value: Any) -> bytes:
            if type(value) is not ready:
                value = prepared(value)
            try:
                return write(value, default, option, True)
            except TypeError:
                return dump_json(value)

        return write_running_user_code if user_code else write_value


def typed_encoder(annotation: Any, serialization: Serialization) -> TypedEncoder:
    """Return a `TypedEncoder` validating with a `TypeAdapter` of `annotation`.

    Kept on a model class itself (it lives and dies with the class); cached for other hashable
    annotations and settings (at most 256, so that types created on the fly are not kept alive
    without bound).
    """
    if type(annotation) is _MODEL_CLASS:
        return _kept_encoder(kept_on(annotation), serialization)
    try:
        # `Union[A, B] == Union[B, A]`, but pydantic breaks ties between members by their order:
        # the repr tells them apart. A class is equal to itself only: no repr to build.
        plain = isinstance(annotation, type) and not isinstance(annotation, GenericAlias)
        order = "" if plain else repr(annotation)  # (`list[int]` is a type before Python 3.11)
        return _cached_typed_encoder(annotation, order, serialization)
    except TypeError:  # an unhashable annotation: build it each time
        return _typed_encoder(annotation, "", serialization)


def _kept_encoder(held: Kept, serialization: Serialization) -> TypedEncoder:
    # FastAPI's defaults, the common call, by a key hashed in C.
    key = KEPT_KEY if serialization is DEFAULTS else (KEPT_KEY, serialization)
    encoder: TypedEncoder | None = held.get(key)
    if encoder is None:
        encoder = held[key] = _typed_encoder(held.cls, "", serialization)
    return encoder


KEPT_KEY = "typed"
"""What a model class keeps its encoder of FastAPI's defaults under (`kept_on`)."""
_MODEL_CLASS = type(BaseModel)  # pydantic's model metaclass


def _passes_instances(schema: Any) -> bool:
    """Tell whether validating by a model's `schema` returns an instance of the model as it is.

    So it is with no model validator (one would wrap the model's schema) and instances not
    revalidated (pydantic's default, `revalidate_instances="never"`).
    """
    if schema["type"] == "definitions":
        schema = schema["schema"]
    if schema["type"] != "model":
        return False
    never = schema.get("config", {}).get("revalidate_instances", "never")
    return bool(schema.get("revalidate_instances", never) == "never")


def _without_nan(dump_json: Callable[[Any], bytes], value: Any) -> bytes:
    return without_nan(dump_json(value))


def _typed_encoder(annotation: Any, order: str, serialization: Serialization) -> TypedEncoder:
    del order  # a part of the cache key only
    adapter: TypeAdapter[Any] = TypeAdapter(annotation)
    return TypedEncoder(
        annotation,
        # The adapter's own validator, read once: TypeAdapter.validate_python only passes its
        # arguments on, and the validator of a type whose build is deferred is a stand-in that
        # looks the real one up at each attribute read.
        validate_python=adapter.validator.validate_python,
        dump_json=functools.partial(adapter.dump_json, **serialization.pydantic_options()),
        serialization=serialization,
    )


_cached_typed_encoder = functools.lru_cache(maxsize=256)(_typed_encoder)
