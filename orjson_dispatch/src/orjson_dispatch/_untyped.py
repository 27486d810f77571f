"""Values without a declared type, encoded as FastAPI's `jsonable_encoder` path encodes them.

FastAPI's untyped path is `jsonable_encoder(value)` followed by `json.dumps`. `encode_untyped`
hands the value to orjson, which calls `jsonable_leaf` only for what it does not encode natively;
the exact path, `to_jsonable`, walks the value in Python like `jsonable_encoder` does and is used
for the rare cases orjson refuses (integers beyond 64 bits, non-str keys, nesting deeper than
orjson's limit) and for the `exclude_*`, `include` and `exclude` settings. Both apply the same
per-type rules, written once (`_leaves`).
Reference: https://github.com/fastapi/fastapi/blob/master/fastapi/encoders.py
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
from collections.abc import Callable
from enum import Enum
from types import GeneratorType
from typing import Any
from uuid import UUID

import orjson
from pydantic import BaseModel

from orjson_dispatch._classes import class_table, json_writer, model_python
from orjson_dispatch._kept import kept_for, kept_on
from orjson_dispatch._leaves import ENCODERS_BY_TYPE, SEQUENCES, UUID_ENCODER, jsonable_leaf
from orjson_dispatch._options import Serialization, encode_option, thaw
from orjson_dispatch._results import (
    KeepResultsError,
    keeping_results,
    kept,
    numpy_as_orjson,
    once,
    restart,
)
from orjson_dispatch._sqlalchemy import is_sqlalchemy_key, may_hold_sqlalchemy_key

__all__ = ["encode_untyped", "to_jsonable"]

# orjson encodes int64 and uint64; a larger integer is sent exactly, as its digits.
_INT_MIN = -(2**63)
_INT_MAX = 2**64 - 1


def encode_untyped(value: Any, serialization: Serialization) -> bytes:
    """Return the JSON FastAPI's untyped path writes for `value` (`jsonable_encoder`).

    Raises:
        ValueError: `value` holds something FastAPI cannot encode either (as jsonable_encoder
            raises it).
        TypeError: `value` is circular.
    """
    try:
        # A model under the default settings, the common case, first: at a few microseconds a
        # small model, working out the settings' callback and options costs a tenth of it, and
        # so does an `isinstance` of pydantic's metaclass (Python code). No fragment to copy:
        # the class's own JSON is the body, searched as any other (a dict held where a model is
        # declared, given to `model_construct`, is written as it is).
        fast = serialization.whole_models and type(type(value)) is _MODEL_CLASS
        writer = _model_writer(value, serialization.by_alias) if fast else None
        if writer is None:
            return _encode_untyped(value, serialization)
        write_json, user_code = writer
        if not user_code or kept():
            body = _written(write_json, value)
            return _exactly(value, serialization) if body is None else body
    except KeepResultsError:
        pass
    # User code is about to run: what it returns is kept, for the exact path not to run it
    # again (where orjson refuses a big integer, a non-str key...).
    return keeping_results(functools.partial(encode_untyped, value, serialization))


def _encode_untyped(value: Any, serialization: Serialization) -> bytes:
    if (
        serialization.selective
        and isinstance(value, BaseModel)
        and type(value).model_dump is _MODEL_DUMP
    ):
        # `jsonable_encoder` dumps the model with the settings, then leaves out of that dict
        # only its None items (`exclude_none`) and its `_sa` keys: a dict holding neither is
        # written as it is. (Its items are pydantic's JSON values: no UUID left to encode.)
        value, serialization = _dumped(value, serialization)
        try:
            body = orjson.dumps(value, option=encode_option(serialization.option))
        except TypeError:
            pass  # a big integer, a lone surrogate, deep nesting: the exact path decides
        else:
            nones = serialization.exclude_none and body.find(b"null") != -1
            if not nones and not may_hold_sqlalchemy_key(body):
                return body
    # orjson writes a UUID itself: an app's own entry for UUID in FastAPI's table is applied by
    # the exact path.
    elif not serialization.selective and ENCODERS_BY_TYPE.get(UUID) is UUID_ENCODER:
        default = _default(serialization.by_alias, bool(serialization.option & _LAYOUT))
        option = encode_option(serialization.option)
        found = _written(lambda value: orjson.dumps(value, default=default, option=option), value)
        if found is not None:
            return found
    return _exactly(value, serialization)


def _exactly(value: Any, serialization: Serialization) -> bytes:
    """Return `encode_untyped(value, ...)` by the exact path (`to_jsonable`)."""
    try:
        converted = to_jsonable(value, serialization)
    except RecursionError:
        msg = f"{type(value).__qualname__} value is circular or nests too deep to encode"
        raise TypeError(msg) from None
    default = _default(serialization.by_alias, bool(serialization.option & _LAYOUT))
    option = encode_option(serialization.option)
    try:
        return orjson.dumps(converted, default=default, option=option)
    except orjson.JSONEncodeError as error:
        # orjson refuses nesting deeper than 254 levels and strings with lone surrogates, which
        # the standard library writes (FastAPI's streams write such strings, escaped).
        try:
            return _json_dumps(converted, serialization.option)
        except (TypeError, ValueError, RecursionError):
            raise error from None


def _written(write: Callable[[Any], bytes], value: Any) -> bytes | None:
    """Return `write(value)`, or None where the exact path decides.

    It decides where orjson refused a part of the value (a big integer, a non-str key, deep
    nesting, a lone surrogate, which pydantic's writer refuses with a ValueError) and where the
    body may hold a `_sa` key.

    Raises:
        KeepResultsError: User code is about to run: its results are to be kept.
    """
    try:
        body = write(value)
    except (TypeError, ValueError) as error:
        signal = restart(error)
        if isinstance(signal, KeepResultsError):
            raise signal from None
        return None
    return None if may_hold_sqlalchemy_key(body) else body


def _model_writer(model: BaseModel, by_alias: bool) -> _Writer | None:
    """Return the `json_writer` of the model's class, decided once per class.

    With it, whether the class runs user code (what it returns is then to be kept for the whole
    call: the writer raises `KeepResultsError` where it is not). None where the class
    overrides `model_dump`: what the override returns is encoded (`own_dump`).
    """
    key = "untyped" if by_alias else "untyped by name"
    found: _Writer | None = kept_for(model, key, _UNKNOWN)
    if found is not _UNKNOWN:
        return found
    cls = type(model)
    if cls.model_dump is _MODEL_DUMP:
        own = class_table(cls, by_alias, untyped=True)
        found = (json_writer(cls, by_alias), own is not None and own.user_code)
    else:
        found = None
    kept_on(cls)[key] = found
    return found


_Writer = tuple[Callable[[BaseModel], bytes], bool]  # a class's `json_writer`, its user code
_UNKNOWN: Any = object()
_MODEL_CLASS = type(BaseModel)  # pydantic's model metaclass


def _json_dumps(converted: Any, option: int) -> bytes:
    """Encode what `to_jsonable` returned with the standard library (ASCII, escaped)."""
    text = json.dumps(
        _for_json(converted),
        allow_nan=False,
        separators=(",", ":"),
        indent=2 if option & orjson.OPT_INDENT_2 else None,
        sort_keys=bool(option & orjson.OPT_SORT_KEYS),
    )
    return (text + "\n" if option & orjson.OPT_APPEND_NEWLINE else text).encode()


def _for_json(value: Any) -> Any:
    """Write in place what orjson would: fragments as their JSON, NaN and infinities as null."""

    def plain(item: Any) -> Any:
        if isinstance(item, orjson.Fragment):  # a big integer or a numpy value, encoded
            return json.loads(orjson.dumps(item))
        if isinstance(item, float) and not math.isfinite(item):
            return None
        return item

    stack = [value]
    while stack:
        container = stack.pop()
        if isinstance(container, dict):
            for key, item in container.items():
                container[key] = plain(item)
                stack.append(item)
        elif isinstance(container, list):
            for index, item in enumerate(container):
                container[index] = plain(item)
                stack.append(item)
    return plain(value)


# Layout options: a fragment is inserted as it is, neither indented nor sorted with the rest.
_LAYOUT = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS


@functools.cache
def _default(by_alias: bool, layout: bool) -> Callable[[Any], Any]:
    """Return the orjson `default` callback for values returned without a declared type.

    orjson calls it only for what it does not encode natively. A model becomes a fragment of its
    own JSON (`model.model_dump_json(by_alias=...)`, as `jsonable_encoder` calls `model_dump`),
    under a `layout` option `model_dump(mode="json")` itself (laid out with the rest), or, where
    its class overrides `model_dump`, what that method returns; anything else follows
    `jsonable_leaf`.
    """
    serialization = Serialization(by_alias=by_alias)

    def default(value: Any) -> Any:
        # pydantic's metaclass first: its `isinstance` is Python code.
        if type(type(value)) is _MODEL_CLASS or isinstance(value, BaseModel):
            writer = _model_writer(value, by_alias)
            if writer is None:
                if not kept():
                    raise KeepResultsError(type(value).__qualname__)
                return own_dump(value, serialization)
            if layout:
                return model_python(value, by_alias=by_alias)
            return orjson.Fragment(writer[0](value))
        if type(value) is GeneratorType:
            # Read once, what it gave kept for the call: the exact path, where orjson refuses a
            # later part of the value, reads that (`to_jsonable`).
            if not kept():
                raise KeepResultsError(type(value).__qualname__)
            return once(value, "items", list, value)
        return jsonable_leaf(value)

    return default


_MODEL_DUMP = BaseModel.model_dump


def own_dump(model: BaseModel, serialization: Serialization) -> Any:
    """Return `model.model_dump(mode="json", ...)` called as `jsonable_encoder` calls it.

    For a class that overrides `model_dump` (to leave out a secret, say): FastAPI's untyped path
    sends what the override returns, so that is what is encoded, by the untyped rules. Called
    once per response (`once`): the override is user code.
    """
    dump = functools.partial(
        type(model).model_dump,
        mode="json",
        include=thaw(serialization.include),
        exclude=thaw(serialization.exclude),
        by_alias=serialization.by_alias,
        exclude_unset=serialization.exclude_unset,
        exclude_none=serialization.exclude_none,
        exclude_defaults=serialization.exclude_defaults,
    )
    return once(model, "model_dump", dump, model)


def to_jsonable(value: Any, serialization: Serialization) -> Any:
    """Convert `value` the way `jsonable_encoder(value, **settings)` does, for orjson to encode.

    Integers beyond the 64-bit range become `orjson.Fragment` objects holding their digits, so
    the result encodes exactly.

    Raises:
        ValueError: FastAPI cannot encode `value` either (as jsonable_encoder raises it).
        TypeError: A dict key `json.dumps` cannot write.
        RecursionError: `value` is circular.
    """
    include, exclude = thaw(serialization.include), thaw(serialization.exclude)
    inner = _inner(serialization)
    if isinstance(value, BaseModel) and type(value).model_dump is not _MODEL_DUMP:
        return to_jsonable(own_dump(value, serialization), inner)
    if isinstance(value, BaseModel) and not serialization.selective:
        return to_jsonable(model_python(value, by_alias=serialization.by_alias), inner)
    if isinstance(value, BaseModel):
        return to_jsonable(*_dumped(value, serialization))
    if isinstance(value, Enum):
        return to_jsonable(value.value, inner)
    if type(value) in (str, float, bool) or value is None:
        return value
    if type(value) is int:
        return value if _INT_MIN <= value <= _INT_MAX else orjson.Fragment(str(value).encode())
    if type(value) is orjson.Fragment:  # pydantic's JSON of a value in a model, or a big int
        return to_jsonable(json.loads(orjson.dumps(value)), inner)
    if isinstance(value, dict):
        keys = set(value.keys())  # jsonable_encoder writes the items whose key keys() shows
        if include is not None:
            keys &= set(include)
        if exclude is not None:
            keys -= set(exclude)
        # Loops, not comprehensions: before Python 3.12 a comprehension is a frame of its own,
        # and nesting as deep as FastAPI's jsonable_encoder reaches must fit the same stack.
        converted: dict[str, Any] = {}
        for key, item in value.items():
            if (
                key in keys
                and not (serialization.exclude_none and item is None)
                and not is_sqlalchemy_key(key)
            ):
                converted[_key(key, inner)] = to_jsonable(item, inner)
        return converted
    if isinstance(value, SEQUENCES):
        if type(value) is GeneratorType:  # what the fast path read, if it did (`_default`)
            value = once(value, "items", list, value)
        items = []
        for item in value:
            items.append(to_jsonable(item, serialization))
        return items
    if type(value).__module__ == "numpy":
        # What orjson encodes natively and FastAPI cannot is encoded as the fast path does
        # (dict() of an empty array would otherwise "succeed" as {}).
        try:
            return orjson.Fragment(orjson.dumps(value, option=orjson.OPT_SERIALIZE_NUMPY))
        except TypeError:
            pass  # a dtype orjson refuses: jsonable_encoder's rules decide
    return to_jsonable(jsonable_leaf(value), serialization)


def _dumped(model: BaseModel, serialization: Serialization) -> tuple[Any, Serialization]:
    """Return `model.model_dump(mode="json", ...)` as `jsonable_encoder` calls it, and more.

    Also the settings `jsonable_encoder` then encodes that dict with (`include` and `exclude`
    apply to the model only). numpy values are written as on orjson's path.
    """
    dumped = model.__pydantic_serializer__.to_python(
        model,
        mode="json",
        fallback=numpy_as_orjson,
        by_alias=serialization.by_alias,
        include=thaw(serialization.include),
        exclude=thaw(serialization.exclude),
        exclude_unset=serialization.exclude_unset,
        exclude_defaults=serialization.exclude_defaults,
        exclude_none=serialization.exclude_none,
    )
    return dumped, _inner(serialization)


def _inner(serialization: Serialization) -> Serialization:
    """Return the settings of what a value holds: `include` and `exclude` apply at its top."""
    if serialization.include is None and serialization.exclude is None:
        return serialization
    return dataclasses.replace(serialization, include=None, exclude=None)


def _key(key: Any, serialization: Serialization) -> str:
    """Return the object key `json.dumps` writes for `jsonable_encoder(key)`.

    Raises:
        TypeError: A key `json.dumps` cannot write.
    """
    plain = isinstance(key, str) and not isinstance(key, Enum)
    converted = key if plain else to_jsonable(key, serialization)
    if isinstance(converted, str):
        return str.__str__(converted)  # a str subclass is written as its characters
    if converted is True:
        return "true"
    if converted is False:
        return "false"
    if converted is None:
        return "null"
    if isinstance(converted, orjson.Fragment):  # an integer beyond 64 bits
        return str(int(key))
    if isinstance(converted, float):
        # json.dumps writes a float key with repr(), NaN and infinities as FastAPI's streams
        # write them (its responses refuse them: dispatch writes them, as it writes null for
        # such values).
        if math.isfinite(converted):
            return float.__repr__(converted)
        return "NaN" if math.isnan(converted) else "Infinity" if converted > 0 else "-Infinity"
    if isinstance(converted, int):
        return int.__repr__(converted)
    msg = f"keys must be str, int, float, bool or None, not {type(key).__qualname__}"
    raise TypeError(msg)
