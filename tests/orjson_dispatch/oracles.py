"""What FastAPI itself answers, and the rules for where ``dispatch`` differs on purpose.

The parity tests never compute an expected body with logic of their own: they ask FastAPI. Where
FastAPI fails (500) and ``dispatch`` answers on purpose, the expected body is still FastAPI's
answer, for an equivalent value FastAPI can encode:

* numpy scalars and arrays: FastAPI's answer for their ``tolist()`` equivalent (``denumpy``);
* dataclasses: encoded field by field, without the deep copy of ``dataclasses.asdict``
  (``dataclasses_as_dicts``);
* non-finite floats in the untyped path: ``null``, pydantic's and FastAPI's own rule elsewhere
  (``nonfinite_to_null``); as dict keys, ``NaN``/``Infinity``/``-Infinity``, as FastAPI's own
  streams write them (``json.dumps``);
* strings holding lone surrogates (not UTF-8): escaped, as FastAPI's streams write them.
"""

from __future__ import annotations

import copy
import json
import math
import types
from collections import deque
from typing import Any

import numpy as np
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse
from pydantic import TypeAdapter

from tests.orjson_dispatch.strategies.leaves import Attrs, Point, contains_numpy, walk_any


def fastapi_untyped(value: Any, **options: Any) -> bytes:
    """FastAPI's untyped body for ``value``: ``jsonable_encoder`` then ``JSONResponse``."""
    return bytes(JSONResponse(jsonable_encoder(value, **options)).body)


def fastapi_typed(annotation: Any, value: Any, **options: Any) -> bytes:
    """FastAPI's typed body: validate (``from_attributes``), then pydantic's ``dump_json``."""
    adapter: TypeAdapter[Any] = TypeAdapter(annotation)
    validated = adapter.validate_python(value, from_attributes=True)
    return adapter.dump_json(validated, **{"by_alias": True, **options})


def denumpy(value: Any) -> Any:
    """``value`` with every numpy scalar and array replaced by its Python equivalent (``tolist``).

    Used to ask FastAPI what it answers for the numpy-free equivalent of a value, which is what
    ``dispatch`` answers on purpose where FastAPI fails on numpy.
    """
    if isinstance(value, np.float32):
        # float32 is written with its own shortest representation (as numpy prints it), not
        # as the float64 that .item() widens it to: 43328352.0 is written 43328350.0.
        return float(str(value))
    if isinstance(value, (np.generic, np.ndarray)):
        return value.tolist()
    if not contains_numpy(value):
        return value  # untouched: rebuilding a set could change its iteration order
    if isinstance(value, types.MappingProxyType):
        return types.MappingProxyType({denumpy(k): denumpy(v) for k, v in value.items()})
    if isinstance(value, dict):
        return type(value)({denumpy(k): denumpy(v) for k, v in value.items()})
    if isinstance(value, (list, tuple, set, frozenset, deque)):
        return type(value)(denumpy(v) for v in value)
    if isinstance(value, Point):
        return Point(denumpy(value.x), denumpy(value.y), value.label)
    if isinstance(value, Attrs):
        return Attrs(denumpy(value.a), denumpy(value.b))
    return value


def dataclasses_as_dicts(value: Any) -> Any:
    """``value`` with every ``Point`` dataclass replaced by a dict of its fields, not copied.

    FastAPI encodes a dataclass through ``dataclasses.asdict``, which deep-copies every field and
    so fails on what cannot be copied; ``dispatch`` encodes the fields as they are, on purpose.
    """
    if isinstance(value, Point):
        # Each field as asdict would copy it where it can be copied: sets then iterate in the
        # copy's order, which dispatch reproduces.
        return {
            "x": dataclasses_as_dicts(value.x),
            # A nested Point is converted (and its fields copied) once, as asdict recurses.
            "y": dataclasses_as_dicts(value.y)
            if isinstance(value.y, Point)
            else _copy_if_possible(dataclasses_as_dicts(value.y)),
            "label": value.label,
        }
    if not walk_any(value, lambda v: isinstance(v, Point)):
        return value
    if isinstance(value, types.MappingProxyType):
        return types.MappingProxyType({k: dataclasses_as_dicts(v) for k, v in value.items()})
    if isinstance(value, dict):
        return type(value)({k: dataclasses_as_dicts(v) for k, v in value.items()})
    if isinstance(value, (list, tuple, deque)):
        return type(value)(dataclasses_as_dicts(v) for v in value)
    if isinstance(value, Attrs):
        return Attrs(dataclasses_as_dicts(value.a), dataclasses_as_dicts(value.b))
    return value


def _copy_if_possible(value: Any) -> Any:
    try:
        return copy.deepcopy(value)
    except Exception:  # not copyable: dispatch encodes the value itself
        return value


def nonfinite_to_null(data: Any) -> Any:
    """Replace NaN and infinities in JSON-compatible data by ``None`` (keys untouched).

    The rule of pydantic's default ``ser_json_inf_nan='null'`` and of FastAPI's own
    ``_normalize_non_finite_floats`` (fastapi/routing.py, used for JSON Lines streams).
    """
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {key: nonfinite_to_null(value) for key, value in data.items()}
    if isinstance(data, list):
        return [nonfinite_to_null(value) for value in data]
    return data


def deliberate_untyped_body(value: Any, **options: Any) -> bytes | None:
    """The body ``dispatch`` sends on purpose where FastAPI's untyped path answers 500.

    FastAPI's own encoding of the numpy-free value, dataclasses encoded without a copy, with
    non-finite floats turned into ``null``; ``None`` when even that cannot be encoded (then
    ``dispatch`` must fail too).
    """
    try:
        plain = dataclasses_as_dicts(denumpy(value))
        # Non-finite keys, and strings with lone surrogates (escaped), are written as FastAPI's
        # streams write them (json.dumps).
        converted = nonfinite_to_null(jsonable_encoder(plain, **options))
        try:
            return json.dumps(converted, ensure_ascii=False, separators=(",", ":")).encode()
        except UnicodeEncodeError:
            return json.dumps(converted, separators=(",", ":")).encode()
    except Exception:  # any failure: FastAPI has no answer either
        return None
