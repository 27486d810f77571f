"""FastAPI's `jsonable_encoder` rules, for values returned without a declared type.

FastAPI's untyped path is `jsonable_encoder(value)` followed by `json.dumps`. The fast path hands
the value to orjson and lets orjson call `jsonable_leaf` only for what it does not encode
natively; the exact path, `to_jsonable`, walks the value in Python like `jsonable_encoder` does and
is used for the rare cases orjson refuses (integers beyond 64 bits) and for the `exclude_*`,
`include` and `exclude` options. Both apply the same per-type rules, written once below.
Reference: https://github.com/fastapi/fastapi/blob/master/fastapi/encoders.py
"""

from __future__ import annotations

import copy
import dataclasses
import datetime
import functools
import importlib
import math
import re
from collections import deque
from collections.abc import Callable, Set
from decimal import Decimal
from enum import Enum
from ipaddress import (
    IPv4Address,
    IPv4Interface,
    IPv4Network,
    IPv6Address,
    IPv6Interface,
    IPv6Network,
)
from pathlib import PurePath
from re import Pattern
from types import GeneratorType
from typing import Any
from uuid import UUID

import orjson
from pydantic import AnyUrl, BaseModel, NameEmail, SecretBytes, SecretStr
from pydantic_core import PydanticUndefinedType, Url

from orjson_dispatch._models import model_json

__all__ = [
    "ExcludeOptions",
    "is_sqlalchemy_key",
    "jsonable_leaf",
    "may_hold_sqlalchemy_key",
    "to_jsonable",
    "untyped_default",
]

# orjson encodes int64 and uint64; a larger integer is sent exactly, as its digits.
_INT_MIN = -(2**63)
_INT_MAX = 2**64 - 1


def _decimal(value: Decimal) -> int | float:
    # FastAPI: an integral Decimal becomes an int, any other a float.
    exponent = value.as_tuple().exponent
    if isinstance(exponent, int) and exponent >= 0:
        return int(value)
    return float(value)


def _isoformat(value: datetime.date | datetime.time) -> str:
    return value.isoformat()


# Leaf types by exact class, then by isinstance in this order; mirrors FastAPI's ENCODERS_BY_TYPE.
_LEAF_ENCODERS: dict[type[Any], Callable[[Any], Any]] = {
    bytes: bytes.decode,
    datetime.datetime: _isoformat,
    datetime.date: _isoformat,
    datetime.time: _isoformat,
    datetime.timedelta: datetime.timedelta.total_seconds,
    Decimal: _decimal,
    IPv4Address: str,
    IPv4Interface: str,
    IPv4Network: str,
    IPv6Address: str,
    IPv6Interface: str,
    IPv6Network: str,
    NameEmail: str,
    Pattern: lambda pattern: pattern.pattern,
    SecretBytes: str,
    SecretStr: str,
    UUID: str,
    Url: str,
    AnyUrl: str,
}
_LEAF_CLASSES = tuple(_LEAF_ENCODERS)


def _color_classes() -> tuple[type[Any], ...]:
    # FastAPI encodes both colour types with str(); neither is a dependency of ours.
    try:
        module = importlib.import_module("pydantic_extra_types.color")
    except ImportError:
        return ()
    return (module.Color,)


_STR_CLASSES = _color_classes()


@functools.cache
def untyped_default(by_alias: bool) -> Callable[[Any], Any]:
    """Return the orjson `default` callback for values returned without a declared type.

    orjson calls it only for what it does not encode natively. A model becomes a fragment of its
    own JSON (`model.model_dump_json(by_alias=...)`, as `jsonable_encoder` calls `model_dump`);
    anything else follows `jsonable_leaf`.
    """

    def default(value: Any) -> Any:
        if isinstance(value, BaseModel):
            return orjson.Fragment(model_json(value, by_alias=by_alias))
        return jsonable_leaf(value)

    return default


def jsonable_leaf(value: Any) -> Any:
    """Convert one value that is not a model, as `jsonable_encoder` would, one level deep.

    Containers are returned as containers (a set becomes a list, a dataclass a dict) whose items
    are left for the caller to encode.

    Raises:
        TypeError: FastAPI cannot encode `value` either.
    """
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            field.name: _as_copied(getattr(value, field.name))
            for field in dataclasses.fields(value)
        }
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, PydanticUndefinedType):
        return None
    for native in (str, int, float):  # subclasses orjson does not take natively
        if isinstance(value, native):
            return native(value)
    if isinstance(value, (tuple, Set, GeneratorType, deque)):
        return list(value)
    encoder = _LEAF_ENCODERS.get(type(value))
    if encoder is not None:
        return encoder(value)
    for cls in _LEAF_CLASSES:
        if isinstance(value, cls):
            return _LEAF_ENCODERS[cls](value)
    if _STR_CLASSES and isinstance(value, _STR_CLASSES):
        return str(value)
    return _mapping_or_attributes(value)


def _as_copied(value: Any) -> Any:
    """Return what JSON can tell of `value` after `dataclasses.asdict` deep-copied it.

    FastAPI encodes a dataclass as `asdict(value)`, which deep-copies every field. The copy of a
    set is rebuilt from its items in iteration order, and where hashes collide the copy can
    iterate in another order than the original: the array FastAPI writes follows the copy.
    Sets are rebuilt the same way here and other objects (a model, an object encoded through
    `vars()`) deep-copied; lists, tuples and dicts keep their order and are walked, not copied.
    A value that cannot be copied (FastAPI answers 500) is encoded as it stands.
    """
    if value is None or isinstance(value, (str, int, float)):
        return value
    if isinstance(value, (set, frozenset)):
        return type(value)([_as_copied(item) for item in value])
    if isinstance(value, (list, tuple)):
        return [_as_copied(item) for item in value]
    if isinstance(value, dict):
        return {key: _as_copied(item) for key, item in value.items()}
    if dataclasses.is_dataclass(value):
        return value  # encoded field by field when orjson reaches it
    try:
        return copy.deepcopy(value)
    except Exception:  # any failure of deepcopy
        return value


def _mapping_or_attributes(value: Any) -> dict[Any, Any]:
    # Last resort of jsonable_encoder: dict(value), then vars(value).
    try:
        return dict(value)
    except Exception:
        pass
    try:
        attributes = vars(value)
    except TypeError:
        msg = f"Type is not JSON serializable: {type(value).__module__}.{type(value).__qualname__}"
        raise TypeError(msg) from None
    return dict(attributes)


@dataclasses.dataclass(frozen=True)
class ExcludeOptions:
    """The `jsonable_encoder` keyword options that select what is encoded."""

    by_alias: bool = True
    exclude_unset: bool = False
    exclude_defaults: bool = False
    exclude_none: bool = False
    include: Any = None
    exclude: Any = None

    def serializer_options(self) -> dict[str, Any]:
        """The options as keyword arguments of pydantic's `dump_json` and FastAPI's fields."""
        return {
            "by_alias": self.by_alias,
            "include": self.include,
            "exclude": self.exclude,
            "exclude_unset": self.exclude_unset,
            "exclude_defaults": self.exclude_defaults,
            "exclude_none": self.exclude_none,
        }

    @property
    def selective(self) -> bool:
        """Some option leaves fields out: only the exact path applies it."""
        return bool(
            self.exclude_unset
            or self.exclude_defaults
            or self.exclude_none
            or self.include is not None
            or self.exclude is not None
        )


def to_jsonable(value: Any, options: ExcludeOptions) -> Any:
    """Convert `value` the way `jsonable_encoder(value, **options)` does, for orjson to encode.

    Integers beyond the 64-bit range become `orjson.Fragment` objects holding their digits, so
    the result encodes exactly.
    """
    include, exclude = options.include, options.exclude
    if include is not None and not isinstance(include, (set, dict)):
        include = set(include)
    if exclude is not None and not isinstance(exclude, (set, dict)):
        exclude = set(exclude)
    if isinstance(value, BaseModel):
        dumped = value.model_dump(
            mode="json",
            by_alias=options.by_alias,
            include=include,
            exclude=exclude,
            exclude_unset=options.exclude_unset,
            exclude_defaults=options.exclude_defaults,
            exclude_none=options.exclude_none,
        )
        return to_jsonable(dumped, dataclasses.replace(options, include=None, exclude=None))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        # Field by field, as the fast path does: dataclasses.asdict() would deep-copy every
        # value first (and fail on what cannot be copied).
        return to_jsonable(jsonable_leaf(value), options)
    if isinstance(value, (str, float, bool)) or value is None:
        return value
    if isinstance(value, int) and not isinstance(value, Enum):
        return value if _INT_MIN <= value <= _INT_MAX else orjson.Fragment(str(value).encode())
    if isinstance(value, dict):
        inner = dataclasses.replace(options, include=None, exclude=None)
        keys = set(value)
        if include is not None:
            keys &= set(include)
        if exclude is not None:
            keys -= set(exclude)
        return {
            _key(key, inner): to_jsonable(item, inner)
            for key, item in value.items()
            if key in keys
            and not (options.exclude_none and item is None)
            and not is_sqlalchemy_key(key)
        }
    if isinstance(value, (list, tuple, Set, GeneratorType, deque)):
        return [to_jsonable(item, options) for item in value]
    if type(value).__module__ == "numpy":
        # What orjson encodes natively and FastAPI cannot is encoded as the fast path does
        # (dict() of an empty array would otherwise "succeed" as {}).
        try:
            return orjson.Fragment(orjson.dumps(value, option=orjson.OPT_SERIALIZE_NUMPY))
        except TypeError:
            pass  # a dtype orjson refuses: jsonable_encoder's rules decide
    return to_jsonable(jsonable_leaf(value), options)


def _key(key: Any, options: ExcludeOptions) -> str:
    """Return the object key `json.dumps` writes for `jsonable_encoder(key)`.

    Raises:
        ValueError: A NaN or infinite float key, which `json.dumps(allow_nan=False)` refuses.
        TypeError: A key `json.dumps` cannot write.
    """
    converted = (
        key if isinstance(key, str) and not isinstance(key, Enum) else to_jsonable(key, options)
    )
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
        if not math.isfinite(converted):
            msg = "Out of range float values are not JSON compliant"
            raise ValueError(msg)
        return float.__repr__(converted)
    if isinstance(converted, int):
        return int.__repr__(converted)
    msg = f"keys must be str, int, float, bool or None, not {type(key).__qualname__}"
    raise TypeError(msg)


def is_sqlalchemy_key(key: Any) -> bool:
    """Tell whether `jsonable_encoder(sqlalchemy_safe=True)` drops this dict key."""
    return isinstance(key, str) and key.startswith("_sa")


def may_hold_sqlalchemy_key(body: bytes) -> bool:
    """Tell whether a JSON document may hold a key that `jsonable_encoder` would have dropped.

    FastAPI drops every dict key that begins with `_sa` (SQLAlchemy's instance state). Looking
    for `"_sa` in the encoded body costs far less than walking the value; a string value that
    begins with `_sa` is a false alarm that only sends the value down the exact path.
    """
    # A regular expression scans about 3.5 GB/s whatever the text. Jumping from one "_" to the
    # next is memchr, faster still, but costs a Python step (~0.2 us) per underscore: it is
    # worth it while underscores are sparse (keys around long arrays of numbers). Walk at most
    # as many underscores as the regular expression would cost, then let it scan the rest.
    find = body.find
    position = find(b"_")
    for _ in range(len(body) // _BYTES_PER_STEP):
        if position == -1:
            return False
        if body[position - 1 : position] == b'"' and body[position + 1 : position + 3] == b"sa":
            return True
        position = find(b"_", position + 1)
    return position != -1 and _SQLALCHEMY_KEY.search(body, max(position - 1, 0)) is not None


# How many bytes the regular expression scans in the time of one Python step of the walk.
_BYTES_PER_STEP = 700
_SQLALCHEMY_KEY = re.compile(rb'"_sa')
