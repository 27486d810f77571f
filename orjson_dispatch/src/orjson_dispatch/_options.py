"""What `dispatch`, `DispatchRoute` and `dumps` are told, checked once and passed through.

`Options` is what a user gives `dispatch`; `Serialization` is what every encoder needs, the
keyword arguments of FastAPI's `serialize_response` plus orjson's layout `option`.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping
from typing import Any, NamedTuple

import orjson

__all__ = [
    "FORMAT_OPTIONS",
    "NOTHING_LEFT_OUT",
    "LeftOut",
    "Options",
    "Serialization",
    "check_format_option",
    "check_options",
    "encode_option",
]

# Options every orjson call uses; none of them is the caller's choice:
# - OPT_PASSTHROUGH_DATETIME, OPT_PASSTHROUGH_DATACLASS: orjson's own RFC 3339 and dataclass
#   output differs from FastAPI's `isoformat()`/`asdict()` and from pydantic's formats.
# - OPT_PASSTHROUGH_SUBCLASS: a str, int, dict or list subclass (a str enum whose value is not
#   its text, a dict hiding keys from `items()`) is encoded by the rules of its path, not as the
#   builtin it extends.
# These values are handed to the `default` callback of each path, which applies its exact rule.
# Non-str dict keys are refused by orjson here: the exact path writes them as each path does.
_ENCODE_OPTION = (
    orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)
# OPT_SERIALIZE_NUMPY: numpy arrays and scalars become JSON arrays and numbers (FastAPI answers
# 500 for them; one of the documented differences). Only once numpy is imported (a numpy value
# cannot exist before): with the option, orjson imports numpy at the first value it does not
# know, some 130 ms and numpy's memory in every process that never sends a numpy value.
_WITH_NUMPY = _ENCODE_OPTION | orjson.OPT_SERIALIZE_NUMPY


def encode_option(option: int = 0) -> int:
    """Return the orjson options of every call with the layout `option` (`FORMAT_OPTIONS`)."""
    return (_WITH_NUMPY if "numpy" in sys.modules else _ENCODE_OPTION) | option


# Options that change only the layout of the JSON text, never its value. Every other orjson
# option (OPT_UTC_Z, OPT_STRICT_INTEGER, OPT_NAIVE_UTC, ...) would make the body differ from what
# FastAPI sends, so it is refused.
FORMAT_OPTIONS = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE

_OPTION_NAMES = {
    value: name
    for name, value in vars(orjson).items()
    if name.startswith("OPT_") and isinstance(value, int)
}
_FLAGS = ("by_alias", "exclude_unset", "exclude_defaults", "exclude_none")
_DISPATCH_OPTIONS = frozenset({"status_code", "headers", "media_type", "option", *_FLAGS})


class LeftOut(NamedTuple):
    """The model fields left out as pydantic's `exclude_unset` and `exclude_none` leave them.

    Attributes:
        unset: Fields not in the instance's `model_fields_set` (extra fields are written).
        none: Fields and extra fields that hold None (not dict items, nor list items).
    """

    unset: bool = False
    none: bool = False


NOTHING_LEFT_OUT = LeftOut()


@dataclasses.dataclass(frozen=True)
class Serialization:
    """How a value is serialized: FastAPI's `response_model_*` settings and orjson's layout.

    Attributes:
        by_alias: Write model fields under their serialization alias.
        exclude_unset: Leave out model fields that were not set explicitly.
        exclude_defaults: Leave out model fields equal to their default.
        exclude_none: Leave out model fields that are None.
        include: Fields to include, as in pydantic's `model_dump` (hashable: see `freeze`).
        exclude: Fields to exclude, as in pydantic's `model_dump` (hashable: see `freeze`).
        option: orjson layout options (`FORMAT_OPTIONS` only).
        selective: Some setting leaves fields out (`exclude_*`, `include`, `exclude`).
        left_out: What `exclude_unset` and `exclude_none` leave out.
        by_pydantic: Some setting only pydantic applies (`exclude_defaults`, `include`,
            `exclude`): the typed path's values are then serialized by pydantic itself.
        whole_models: Neither selective nor laid out: a model is written as its class's own
            JSON.
    """

    by_alias: bool = True
    exclude_unset: bool = False
    exclude_defaults: bool = False
    exclude_none: bool = False
    include: Any = None
    exclude: Any = None
    option: int = 0
    # Worked out once, not per value: encoders are cached by their settings, and every value of
    # the untyped path asks whether they are selective.
    selective: bool = dataclasses.field(init=False, repr=False, compare=False)
    left_out: LeftOut = dataclasses.field(init=False, repr=False, compare=False)
    by_pydantic: bool = dataclasses.field(init=False, repr=False, compare=False)
    whole_models: bool = dataclasses.field(init=False, repr=False, compare=False)
    _hash: int = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        flags = (self.exclude_unset, self.exclude_defaults, self.exclude_none)
        leaves_out = any(flags) or self.include is not None or self.exclude is not None
        object.__setattr__(self, "selective", leaves_out)
        object.__setattr__(self, "left_out", LeftOut(self.exclude_unset, self.exclude_none))
        by_pydantic = self.exclude_defaults or self.include is not None or self.exclude is not None
        object.__setattr__(self, "by_pydantic", by_pydantic)
        object.__setattr__(self, "whole_models", not leaves_out and not self.option)
        key = (self.by_alias, *flags, self.include, self.exclude, self.option)
        object.__setattr__(self, "_hash", hash(key))

    def __hash__(self) -> int:
        return self._hash

    def pydantic_options(self) -> dict[str, Any]:
        """The settings as keyword arguments of pydantic's `dump_json` and FastAPI's fields."""
        return {
            "by_alias": self.by_alias,
            "include": thaw(self.include),
            "exclude": thaw(self.exclude),
            "exclude_unset": self.exclude_unset,
            "exclude_defaults": self.exclude_defaults,
            "exclude_none": self.exclude_none,
        }


DEFAULTS = Serialization()
"""FastAPI's defaults: `jsonable_encoder(value)`, and `response_model` with no setting."""


@dataclasses.dataclass(frozen=True)
class Options:
    """The options given to `dispatch`; None means "not given", the route's setting applies."""

    status_code: int | None = None
    headers: Mapping[str, str] | None = None
    media_type: str | None = None
    option: int = 0
    by_alias: bool | None = None
    exclude_unset: bool | None = None
    exclude_defaults: bool | None = None
    exclude_none: bool | None = None

    def serialization(self, route: Any = None) -> Serialization:
        """Merge these options over the `response_model_*` settings of a FastAPI route.

        Args:
            route: The route (or FastAPI's effective route context) whose settings apply, or
                None outside FastAPI.
        """

        def pick(flag: str, default: bool) -> bool:
            given: bool | None = getattr(self, flag)
            if given is not None:
                return given
            return bool(getattr(route, f"response_model_{flag}", default))

        return Serialization(
            by_alias=pick("by_alias", True),
            exclude_unset=pick("exclude_unset", False),
            exclude_defaults=pick("exclude_defaults", False),
            exclude_none=pick("exclude_none", False),
            include=freeze(getattr(route, "response_model_include", None)),
            exclude=freeze(getattr(route, "response_model_exclude", None)),
            option=self.option,
        )


def check_options(given: Mapping[str, Any], name: str) -> Options:
    """Return the options given to `dispatch` for the endpoint `name`, checked.

    Raises:
        TypeError: An option is unknown or has a wrong type, naming the endpoint.
    """
    unknown = sorted(set(given) - _DISPATCH_OPTIONS)
    if unknown:
        msg = (
            f"dispatch() got unknown option(s) {', '.join(unknown)} for {name}; "
            f"the options are {', '.join(sorted(_DISPATCH_OPTIONS))}"
        )
        raise TypeError(msg)
    status_code = given.get("status_code")
    if status_code is not None and (
        not isinstance(status_code, int)
        or isinstance(status_code, bool)
        or not 100 <= status_code <= 599
    ):
        msg = (
            f"dispatch(status_code=...) for {name} must be an HTTP status (100-599), "
            f"not {status_code!r}"
        )
        raise TypeError(msg)
    headers = given.get("headers")
    if headers is not None and not (
        isinstance(headers, Mapping)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in headers.items())
    ):
        msg = f"dispatch(headers=...) for {name} must map str to str, not {headers!r}"
        raise TypeError(msg)
    media_type = given.get("media_type")
    if media_type is not None and not isinstance(media_type, str):
        msg = f"dispatch(media_type=...) for {name} must be a str, not {media_type!r}"
        raise TypeError(msg)
    for flag in _FLAGS:
        value = given.get(flag)
        if value is not None and not isinstance(value, bool):
            msg = f"dispatch({flag}=...) for {name} must be a bool, not {value!r}"
            raise TypeError(msg)
    return Options(
        status_code=status_code,
        headers=dict(headers) if headers is not None else None,
        media_type=media_type,
        option=check_format_option(given.get("option"), f"dispatch() for {name}"),
        **{flag: given.get(flag) for flag in _FLAGS},
    )


def check_format_option(option: int | None, where: str) -> int:
    """Return `option` as an int after checking that it only changes the JSON layout.

    Args:
        option: `None` or a bitwise OR of orjson options.
        where: What the option was given to, for the error message.

    Raises:
        TypeError: `option` is not an int, or it holds an option other than `OPT_INDENT_2`,
            `OPT_SORT_KEYS` and `OPT_APPEND_NEWLINE`.
    """
    if option is None:
        return 0
    if not isinstance(option, int) or isinstance(option, bool):
        msg = f"{where}: option must be an int made of orjson.OPT_* flags, not {option!r}"
        raise TypeError(msg)
    refused = option & ~FORMAT_OPTIONS
    if refused:
        bits = [1 << shift for shift in range(refused.bit_length()) if refused >> shift & 1]
        names = sorted(_OPTION_NAMES.get(bit, hex(bit)) for bit in bits)
        msg = (
            f"{where}: option {' | '.join(f'orjson.{n}' for n in names)} would change the JSON "
            "that FastAPI sends; only orjson.OPT_INDENT_2, orjson.OPT_SORT_KEYS and "
            "orjson.OPT_APPEND_NEWLINE are accepted"
        )
        raise TypeError(msg)
    return option


def freeze(selection: Any) -> Any:
    """Return `include`/`exclude` as a hashable value with the same meaning.

    Sets, lists and tuples become frozensets, dicts `FrozenDict`s, recursively; encoders are
    cached by their `Serialization`.
    """
    if isinstance(selection, dict):
        return FrozenDict((key, freeze(item)) for key, item in selection.items())
    if isinstance(selection, (set, list, tuple)):
        return frozenset(selection)
    return selection


def thaw(selection: Any) -> Any:
    """Return `include`/`exclude` made hashable by `freeze` as FastAPI passes it to pydantic.

    pydantic merges a `"__all__"` entry with the entries of list indexes only in dicts and sets.
    """
    if isinstance(selection, dict):
        return {key: thaw(item) for key, item in selection.items()}
    if isinstance(selection, frozenset):
        return set(selection)
    return selection


class FrozenDict(dict[Any, Any]):
    """A dict usable as a cache key; include/exclude are never mutated."""

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(frozenset(self.items()))
