"""`dumps`: the conversion on its own, for code that builds its responses itself."""

from __future__ import annotations

import functools
from typing import Any

from orjson_dispatch._encoders import UNTYPED
from orjson_dispatch._kept import kept_for
from orjson_dispatch._options import DEFAULTS, Serialization, check_format_option, freeze
from orjson_dispatch._typed import KEPT_KEY, TypedEncoder, typed_encoder
from orjson_dispatch._untyped import encode_untyped

__all__ = ["UNTYPED", "dumps"]


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
    validated against the type as FastAPI validates it (a ValidationError is raised if it does
    not fit; model validators run on an instance of the model class too) and serialized as
    pydantic's `TypeAdapter(response_model).dump_json(...)` does, so a subclass instance or a
    dict with extra keys is filtered to the declared fields.

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
        ValueError: `value` holds something FastAPI cannot encode either (the exception
            FastAPI's `jsonable_encoder` raises for it).
        TypeError: `option` holds an option that would change the JSON.
        pydantic.ValidationError: `value` does not fit `response_model`.
    """
    if (
        by_alias
        and include is None
        and exclude is None
        and option is None
        and not (exclude_unset or exclude_defaults or exclude_none)
    ):
        # FastAPI's defaults, the common call: no settings to build and hash. A model of exactly
        # its declared class finds its encoder through the instance (`kept_for`).
        if type(value) is response_model:
            found: TypedEncoder | None = kept_for(value, KEPT_KEY)
            if found is not None:
                return found.encode(value)
        serialization = DEFAULTS
    else:
        serialization = _serialization(
            by_alias,
            exclude_unset,
            exclude_defaults,
            exclude_none,
            freeze(include),
            freeze(exclude),
            check_format_option(option, "orjson_dispatch.dumps()"),
        )
    # `declared_encoder`'s choice, made here without the encoder object it builds: per call, that
    # is a tenth of a small model's time.
    if response_model is UNTYPED:
        return encode_untyped(value, serialization)
    return typed_encoder(response_model, serialization).encode(value)


# The settings of a call, made once per distinct settings (making them costs as much as a
# small model's JSON).
_serialization = functools.lru_cache(maxsize=64)(Serialization)
