"""`dumps`: the conversion on its own, for code that builds its responses itself."""

from __future__ import annotations

import functools
from typing import Any, Final

import orjson
from pydantic import TypeAdapter

from orjson_dispatch._jsonable import (
    ExcludeOptions,
    may_hold_sqlalchemy_key,
    to_jsonable,
    untyped_default,
)
from orjson_dispatch._options import UNTYPED_OPTION, check_format_option
from orjson_dispatch._typed import TypedEncoder

__all__ = ["UNTYPED", "dumps", "encode_untyped", "typed_encoder"]


class _Untyped:
    """The default of `response_model`: no declared type."""

    def __repr__(self) -> str:
        return "UNTYPED"


UNTYPED: Final[Any] = _Untyped()


def dumps(
    value: Any,
    *,
    response_model: Any = UNTYPED,
    by_alias: bool = True,
    exclude_unset: bool = False,
    exclude_defaults: bool = False,
    exclude_none: bool = False,
    include: Any = None,
    exclude: Any = None,
    option: int | None = None,
) -> bytes:
    """Serialize `value` to the JSON that FastAPI would send for it.

    Without `response_model`, the result parses to the same JSON as FastAPI's untyped path,
    `json.dumps(jsonable_encoder(value, ...))`: models as `model_dump(mode="json")`, dataclasses
    as dicts, enums as their values, datetimes, dates and times as `isoformat()`, timedelta as
    seconds, integral Decimals as ints and others as floats, sets, tuples and generators as
    lists, bytes decoded as UTF-8, UUID, paths, IP addresses, URLs and secrets (masked) as
    strings, non-str dict keys as strings, integers of any size exactly.

    With `response_model`, it parses to the same JSON as FastAPI's typed path: `value` is
    validated against the type (a ValidationError is raised if it does not fit; an instance of
    exactly that model class is not revalidated) and serialized as pydantic's
    `TypeAdapter(response_model).dump_json(...)` does, so a subclass instance or a dict with
    extra keys is filtered to the declared fields.

    Differences, where FastAPI raises: NaN and infinities become null, numpy arrays and scalars
    are encoded (as orjson's OPT_SERIALIZE_NUMPY does).

    Args:
        value: What to serialize.
        response_model: The declared type, as FastAPI's `response_model`.
        by_alias: Write model fields under their serialization alias.
        exclude_unset: Leave out model fields that were not set explicitly.
        exclude_defaults: Leave out model fields equal to their default.
        exclude_none: Leave out model fields (and, without `response_model`, dict items) that
            are None.
        include: Fields to include, as in pydantic's `model_dump`.
        exclude: Fields to exclude, as in pydantic's `model_dump`.
        option: orjson layout options: `OPT_INDENT_2`, `OPT_SORT_KEYS`, `OPT_APPEND_NEWLINE`.

    Returns:
        The JSON document as UTF-8 bytes.

    Raises:
        TypeError: `value` holds something FastAPI cannot encode either, or `option` holds an
            option that would change the JSON.
        pydantic.ValidationError: `value` does not fit `response_model`.
    """
    layout = check_format_option(option, "orjson_dispatch.dumps()")
    selection = ExcludeOptions(
        by_alias=by_alias,
        exclude_unset=exclude_unset,
        exclude_defaults=exclude_defaults,
        exclude_none=exclude_none,
        include=_freeze(include),
        exclude=_freeze(exclude),
    )
    if response_model is UNTYPED:
        return encode_untyped(value, selection, layout)
    return typed_encoder(response_model, selection, layout).encode(value)


def encode_untyped(value: Any, selection: ExcludeOptions, layout: int) -> bytes:
    """Encode a value without a declared type, as FastAPI's `jsonable_encoder` path does."""
    default = untyped_default(selection.by_alias)
    if not selection.selective:
        try:
            body = orjson.dumps(value, default=default, option=UNTYPED_OPTION | layout)
        except TypeError:
            pass  # an integer beyond 64 bits; to_jsonable also names what cannot be encoded
        else:
            if not may_hold_sqlalchemy_key(body):
                return body
    return orjson.dumps(
        to_jsonable(value, selection), default=default, option=UNTYPED_OPTION | layout
    )


def typed_encoder(annotation: Any, selection: ExcludeOptions, layout: int) -> TypedEncoder:
    """Return a cached `TypedEncoder` validating with a `TypeAdapter` of `annotation`."""
    try:
        return _typed_encoder(annotation, selection, layout)
    except TypeError:  # an unhashable annotation or selection: build it each time
        return _typed_encoder.__wrapped__(annotation, selection, layout)


@functools.lru_cache(maxsize=256)
def _typed_encoder(annotation: Any, selection: ExcludeOptions, layout: int) -> TypedEncoder:
    adapter: TypeAdapter[Any] = TypeAdapter(annotation)
    return TypedEncoder(
        annotation,
        validate=functools.partial(adapter.validate_python, from_attributes=True),
        dump_json=functools.partial(adapter.dump_json, **selection.serializer_options()),
        by_alias=selection.by_alias,
        selective=selection.selective,
        option=layout,
    )


def _freeze(selection: Any) -> Any:
    # include/exclude are sets or nested dicts; make them hashable for the encoder cache.
    if isinstance(selection, dict):
        return _FrozenDict((key, _freeze(item)) for key, item in selection.items())
    if isinstance(selection, (set, list, tuple)):
        return frozenset(selection)
    return selection


class _FrozenDict(dict[Any, Any]):
    """A dict usable as a cache key; include/exclude are never mutated."""

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(frozenset(self.items()))
