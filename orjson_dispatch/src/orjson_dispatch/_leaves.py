"""What FastAPI's `jsonable_encoder` makes of one value that is not a model: its per-type rules.

`jsonable_leaf` converts one value one level deep, as `jsonable_encoder` does: dataclasses,
enums, paths, builtin subclasses, FastAPI's table of encoders by type (FastAPI's own where it is
installed, read by `_fastapi.jsonable_encoders`), and its last resort, `dict()` then `vars()`.
Both untyped paths (`_untyped`) apply these rules, orjson's for what it does not write itself,
the exact one as it walks the value.
Reference: https://github.com/fastapi/fastapi/blob/master/fastapi/encoders.py
"""

from __future__ import annotations

import copy
import dataclasses
import datetime
import importlib
from collections import deque
from collections.abc import Callable
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

from pydantic import AnyUrl, NameEmail, SecretBytes, SecretStr
from pydantic_core import PydanticUndefinedType, Url

from orjson_dispatch import _fastapi

__all__ = ["ENCODERS_BY_TYPE", "SEQUENCES", "UUID_ENCODER", "jsonable_leaf"]


def _decimal(value: Decimal) -> int | float:
    # FastAPI: an integral Decimal becomes an int, any other a float.
    exponent = value.as_tuple().exponent
    if isinstance(exponent, int) and exponent >= 0:
        return int(value)
    return float(value)


def _isoformat(value: datetime.date | datetime.time) -> str:
    return value.isoformat()


def _starlette_encoders() -> dict[type[Any], Callable[[Any], Any]]:
    """Return FastAPI's table of encoders by type (`fastapi.encoders.ENCODERS_BY_TYPE`).

    A copy, for Starlette apps: with FastAPI installed, FastAPI's own table is read
    (`_fastapi.jsonable_encoders`). Enums, paths and what `jsonable_encoder` walks as a list,
    which FastAPI's table also holds, are converted before it is read (`jsonable_leaf`).
    """
    from pydantic.color import Color  # noqa: PLC0415  # deprecated, and FastAPI writes it as str

    by_type: dict[type[Any], Callable[[Any], Any]] = {
        bytes: bytes.decode,
        Color: str,
        datetime.date: _isoformat,
        datetime.datetime: _isoformat,
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
    try:  # an optional package: FastAPI writes its Color as str too, where it is installed
        extra_color = importlib.import_module("pydantic_extra_types.color").Color
    except ImportError:
        return by_type
    return by_type | {extra_color: str}


ENCODERS_BY_TYPE, _ENCODERS_BY_CLASSES = _fastapi.jsonable_encoders(_starlette_encoders)
#: FastAPI's own entry for UUID: an app may replace it (the untyped path then walks the value).
UUID_ENCODER = ENCODERS_BY_TYPE.get(UUID)
# What jsonable_encoder walks as a list (only these: a dict view or another Set is not one).
SEQUENCES = (list, set, frozenset, GeneratorType, tuple, deque)


def jsonable_leaf(value: Any) -> Any:
    """Convert one value that is not a model, as `jsonable_encoder` would, one level deep.

    Containers are returned as containers (a set becomes a list, a dataclass a dict) whose items
    are left for the caller to encode.

    Raises:
        ValueError: FastAPI cannot encode `value` either (as jsonable_encoder raises it).
    """
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            field.name: _as_copied(getattr(value, field.name))
            for field in dataclasses.fields(value)
        }
    if isinstance(value, Enum):
        # jsonable_encoder hands the value to `json.dumps` as it stands; it is encoded by its own
        # rules here, where `json.dumps` fails (500) on a Decimal, a date, a set: a deliberate
        # difference, as for the enums orjson reads itself.
        return value.value
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, PydanticUndefinedType):
        return None
    # Subclasses of builtins: jsonable_encoder keeps str, int and float subclasses (json.dumps
    # writes what the builtin holds), and walks dicts with items() and lists with iter(), so
    # whatever a subclass's own methods hide stays hidden.
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, dict):
        keys = set(value.keys())
        return {key: item for key, item in value.items() if key in keys}
    if isinstance(value, SEQUENCES):
        return list(value)
    encoder = ENCODERS_BY_TYPE.get(type(value))
    if encoder is not None:
        return encoder(value)
    for encoder, classes in _ENCODERS_BY_CLASSES.items():
        if isinstance(value, classes):
            return encoder(value)
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
    """Return `dict(value)`, else `vars(value)`: the last resort of jsonable_encoder.

    Raises:
        ValueError: Neither works; it holds both errors, as FastAPI's does.
        fastapi.exceptions.PydanticV1NotSupportedError: A `pydantic.v1` model (FastAPI 0.128+).
    """
    _fastapi.refuse_pydantic_v1(value)
    try:
        return dict(value)
    except Exception as error:
        mapping_error = error
    try:
        return dict(vars(value))
    except Exception as error:
        raise ValueError([mapping_error, error]) from error
