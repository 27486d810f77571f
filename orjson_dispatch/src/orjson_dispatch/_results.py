"""One orjson call per value, user code run once, and what happens when orjson refuses a part.

orjson refuses integers beyond 64 bits, non-str keys, lone surrogates, cycles and nesting past
254 levels. Where it refuses, the value is written again from what the `default` callback
returned, integers beyond 64 bits as their digits and non-str keys as pydantic writes them
(`exact`). User code (serializers, a class's own `model_dump`, iterables held in fields) must not
run twice: while a value whose classes run user code is written, what each conversion returned is
kept (`keeping_results`, `once`), and the second writing reads it.

The errors here are TypeErrors so that they pass through orjson's `default` callback: raised
there, orjson raises a TypeError whose `__cause__` is the error (`restart`).
"""

from __future__ import annotations

import contextvars
import json
from collections.abc import Callable
from typing import Any

import orjson
from pydantic_core import PydanticSerializationError, to_json

__all__ = [
    "AmbiguousClassError",
    "ContextualError",
    "KeepResultsError",
    "RestartError",
    "exact",
    "keeping_results",
    "kept",
    "numpy_as_orjson",
    "once",
    "restart",
    "rewrite",
    "without_nan",
    "write",
]


class RestartError(TypeError):
    """The value is written again from its start, another way, before any user code ran twice.

    Every caller that catches TypeError passes it on (`restart`).
    """


class AmbiguousClassError(RestartError):
    """A model of a subclass of a class the table holds, where either class may be meant.

    pydantic writes it as the declared class at a position that declares it, as its own class
    where any value is allowed (`Any`, extra fields): the value is written by pydantic.
    """


class KeepResultsError(RestartError):
    """A model whose class runs user code was met where results were not kept.

    The value is written again with `keeping_results`, before any user code ran.
    """


class ContextualError(TypeError):
    """A model whose JSON depends on where it is written: pydantic's `ser_json_*` settings.

    pydantic applies the settings of the outermost type being serialized (a model with
    `ser_json_inf_nan="strings"` inside a list writes NaN as null), so no part of a value that
    holds such a model is written by orjson: the whole value is pydantic's.
    """


def restart(error: BaseException) -> RestartError | None:
    """Return the `RestartError` that `error` is or that orjson raised `error` for, else None."""
    if isinstance(error, RestartError):
        return error
    if isinstance(error.__cause__, RestartError):
        return error.__cause__
    return None


# What user code returned while one value is written, by (id of the owner, what was converted),
# the owner kept alive so that its id stays its own.
_RESULTS: contextvars.ContextVar[dict[tuple[int, str], tuple[Any, Any]] | None] = (
    contextvars.ContextVar("orjson_dispatch_results", default=None)
)


def once(owner: Any, name: str, convert: Callable[[Any], Any], value: Any) -> Any:
    """Return `convert(value)`, converted once per `owner` and `name` while results are kept."""
    results = _RESULTS.get()
    if results is None:
        return convert(value)
    key = (id(owner), name)
    found = results.get(key)
    if found is None:
        found = results[key] = (owner, convert(value))
    return found[1]


def kept() -> bool:
    """Tell whether what user code returns is kept (`keeping_results`)."""
    return _RESULTS.get() is not None


def keeping_results(write: Callable[[], bytes]) -> bytes:
    """Return `write()`, what user code returns kept for the whole call (see `_RESULTS`)."""
    if _RESULTS.get() is not None:  # already kept by an outer call
        return write()
    token = _RESULTS.set({})
    try:
        return write()
    finally:
        _RESULTS.reset(token)


def write(value: Any, default: Callable[[Any], Any], option: int, user_code: bool) -> bytes:
    """Return orjson's JSON of `value`, what orjson does not write itself handed to `default`.

    Args:
        value: What to write.
        default: orjson's callback.
        option: orjson's options.
        user_code: `default` may run user code: its results are kept for the call.

    Raises:
        RestartError: From `default`.
        ContextualError: From `default`, as the `__cause__` of a TypeError.
        TypeError: orjson refuses a part of the value even as `exact` writes it (a lone
            surrogate, a cycle, deep nesting).
    """
    if user_code and _RESULTS.get() is None:
        return keeping_results(lambda: write(value, default, option, True))
    try:
        return orjson.dumps(value, default=default, option=option)
    except TypeError as error:
        return rewrite(value, default, option, error)


def rewrite(value: Any, default: Callable[[Any], Any], option: int, error: TypeError) -> bytes:
    """Return `write`'s JSON of `value` after orjson refused it with `error`.

    For callers that make the first orjson call themselves (`write` and the writers bound to
    one class table): the value is written again from what `default` returned (`exact`).

    Raises:
        As `write`.
    """
    signal = restart(error)
    if signal is not None:
        raise signal from None
    if isinstance(error.__cause__, ContextualError):
        raise error
    try:
        return orjson.dumps(exact(value, default), default=default, option=option)
    except Exception as again:
        signal = restart(again)
        if signal is not None:
            raise signal from None
        raise error from again


def exact(value: Any, default: Callable[[Any], Any]) -> Any:
    """Return `value` as orjson reads it through `default`, with what orjson refuses made exact.

    Integers beyond 64 bits become Fragments of their digits, non-str keys pydantic's text.

    Raises:
        TypeError: Two keys of one dict are written alike (pydantic writes both).
        UnicodeEncodeError: A key holds a lone surrogate (pydantic refuses it).
    """
    kind = type(value)
    if kind is int:
        return value if -(2**63) <= value < 2**64 else orjson.Fragment(int.__repr__(value))
    if kind in (str, float, bool) or value is None or kind is orjson.Fragment:
        return value
    if kind is dict:
        converted = {_key(key): exact(item, default) for key, item in value.items()}
        if len(converted) != len(value):
            raise TypeError("two keys written alike")
        return converted
    if kind in (list, tuple):
        return [exact(item, default) for item in value]
    if kind.__module__ == "numpy":
        return value  # orjson writes it (OPT_SERIALIZE_NUMPY)
    return exact(default(value), default)


def _key(key: Any) -> str:
    """Return the object key pydantic writes for a dict key.

    Raises:
        UnicodeEncodeError: A str key holds a lone surrogate, which pydantic refuses.
    """
    if type(key) is not str:
        return _pydantic_key(key)
    key.encode()
    return key


def _pydantic_key(key: Any) -> str:
    """Return the object key pydantic's JSON writes for a dict key held at an `Any` position."""
    text: str = next(iter(json.loads(to_json({key: None}, inf_nan_mode="null"))))
    return text


def numpy_as_orjson(value: Any) -> Any:
    """Pydantic's fallback: numpy values as orjson writes them (a documented difference)."""
    if type(value).__module__ != "numpy":
        msg = f"Unable to serialize unknown type: {type(value)!r}"
        raise PydanticSerializationError(msg)
    return json.loads(orjson.dumps(value, option=orjson.OPT_SERIALIZE_NUMPY))


def without_nan(body: bytes) -> bytes:
    """Return `body` with NaN and infinities written as null, the rest unchanged in value."""
    if b"NaN" not in body and b"Infinity" not in body:
        return body
    value = json.loads(body, parse_constant=lambda _: None)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
