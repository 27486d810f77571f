"""What FastAPI itself answers, and the rules for where ``dispatch`` differs on purpose.

The parity tests never compute an expected body with logic of their own: they ask FastAPI. Where
FastAPI fails (500) and ``dispatch`` answers on purpose, the expected body is still FastAPI's
answer, for an equivalent value FastAPI can encode:

* numpy scalars and arrays: FastAPI's answer for their ``tolist()`` equivalent (``denumpy``);
* dataclasses: encoded field by field, without the deep copy of ``dataclasses.asdict``
  (``dataclasses_as_dicts``);
* non-finite floats in the untyped path: ``null``, pydantic's and FastAPI's own rule elsewhere
  (``nonfinite_to_null``); as dict keys, ``NaN``/``Infinity``/``-Infinity``, as FastAPI's own
  streams write them (``json.dumps``); inside a model, what the model's ``ser_json_inf_nan`` writes
  (``"NaN"`` under ``"strings"``; ``models_with_nonfinite_as_their_json``);
* an enum whose value ``json.dumps`` cannot write (a Decimal, a date, a frozenset): its value,
  encoded by that value's own rules (``unwritable_enums_as_values``);
* a model field assigned without validation a value a type checker accepts (ints and bools in
  ``float``/``int`` fields and their lists, str subclasses in ``str`` fields): written as held,
  where pydantic converts it (``held_as_written``, the contract's second tier);
* strings holding lone surrogates (not UTF-8): escaped, as FastAPI's streams write them.

``assert_matches`` compares an HTTP answer with FastAPI's under these rules.

Values nest up to 900 levels deep, beyond what a recursive walk can take under the test's own
stack: every rewriting function here passes along the chain of one-item lists and one-key dicts
such a value is made of without recursing (``_along_spine``).
"""

from __future__ import annotations

import copy
import functools
import json
import math
import types
from collections import deque
from collections.abc import Callable
from typing import Any

import httpx
import numpy as np
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse
from hypothesis import event
from pydantic import BaseModel, TypeAdapter
from pydantic_core import PydanticSerializationError

from tests.orjson_dispatch.compare import (
    comparable_headers,
    deep_enough,
    outcome,
    same_json,
    typed_json,
)
from tests.orjson_dispatch.strategies.hostile import (
    HOSTILE_CONTAINERS,
    is_unwritable_enum,
    stored_items,
)
from tests.orjson_dispatch.strategies.leaves import Attrs, Point, contains_numpy, walk_any
from tests.orjson_dispatch.strategies.unvalidated import HELD_STRINGS, holds_unvalidated


def fastapi_untyped(value: Any, **options: Any) -> bytes:
    """FastAPI's untyped body for ``value``: ``jsonable_encoder`` then ``JSONResponse``."""
    return bytes(JSONResponse(jsonable_encoder(value, **options)).body)


def fastapi_typed(annotation: Any, value: Any, **options: Any) -> bytes:
    """FastAPI's typed body: validate (``from_attributes``), then pydantic's ``dump_json``.

    One adapter serves every value of a class or a generic alias of classes (``list[Model]``),
    as FastAPI builds one field per route (building one per value took most of the SDK
    types' run on pydantic 2.7); any other annotation gets its own: equal unions can be other
    types (``First | Second == Second | First``, whose smart-mode tie pydantic breaks by order).
    """
    adapter = _adapters(annotation) if _of_classes(annotation) else TypeAdapter(annotation)
    validated = adapter.validate_python(value, from_attributes=True)
    return adapter.dump_json(validated, **{"by_alias": True, **options})


def _of_classes(annotation: Any) -> bool:
    """Whether ``annotation`` is a class or a generic alias of classes: equal only if the same."""
    if isinstance(annotation, types.GenericAlias):  # before isinstance(type): True on 3.10
        return all(map(_of_classes, annotation.__args__))
    return isinstance(annotation, type)


@functools.lru_cache(maxsize=256)
def _adapters(annotation: Any) -> TypeAdapter[Any]:
    return TypeAdapter(annotation)


def typed_since_0130(annotation: Any, value: Any, route_options: dict[str, Any]) -> Any:
    """FastAPI 0.130's typed answer (pydantic's ``dump_json``, NaN as null) or its exception.

    Before 0.130 FastAPI rendered typed values with ``JSONResponse``, whose ``allow_nan=False``
    answers 500 for NaN; dispatch answers as 0.130 does, a deliberate difference
    (``test_typed_encoding.py``). ``route_options`` are the route's ``response_model_*`` ones.
    """
    options = {
        name.removeprefix("response_model_"): flag
        for name, flag in route_options.items()
        if name.startswith("response_model_")
    }
    return outcome(fastapi_typed, annotation, denumpy(value), **options)


def _along_spine(rewrite: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``rewrite``, applied below the one-item lists and one-key str dicts around a value.

    Such a chain is rewritten item by item in a loop (the result is ``value`` itself when the
    innermost value comes back unchanged), so that ``rewrite`` recurses only into what it holds.
    """

    @functools.wraps(rewrite)
    def apply(value: Any) -> Any:
        spine: list[Any] = []
        inner = value
        while (type(inner) is list and len(inner) == 1) or (
            type(inner) is dict and len(inner) == 1 and type(next(iter(inner))) is str
        ):
            spine.append(inner)
            inner = inner[0] if isinstance(inner, list) else next(iter(inner.values()))
        result = rewrite(inner)
        if result is inner:
            return value
        for container in reversed(spine):
            result = [result] if type(container) is list else {next(iter(container)): result}
        return result

    return apply


def _rebuilt(value: Any, convert: Callable[[Any], Any], *, keys: bool = False) -> Any:
    """A hostile container (``hostile.HOSTILE_CONTAINERS``) of the same class, holding its
    stored items converted (dict keys too with ``keys``); ``None`` for any other value."""
    if not isinstance(value, HOSTILE_CONTAINERS):
        return None
    if isinstance(value, dict):
        return type(value)((convert(k) if keys else k, convert(v)) for k, v in stored_items(value))
    return type(value)(convert(item) for item in stored_items(value))


def _each_converted(value: Any, convert: Callable[[Any], Any]) -> Any:
    """``value``'s container (a hostile one, a mapping proxy, dict, list, tuple or deque) of
    the same class holding its values converted; ``value`` itself if it is none of these."""
    rebuilt = _rebuilt(value, convert)
    if rebuilt is not None:
        return rebuilt
    if isinstance(value, types.MappingProxyType):
        return types.MappingProxyType({k: convert(v) for k, v in value.items()})
    if isinstance(value, dict):
        return type(value)({k: convert(v) for k, v in value.items()})
    if isinstance(value, (list, tuple, deque)):
        return type(value)(convert(v) for v in value)
    return value


@_along_spine
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
    rebuilt = _rebuilt(value, denumpy, keys=True)
    if rebuilt is not None:
        return rebuilt
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
    if isinstance(value, BaseModel):
        # The same instance state (unvalidated values included), numpy-free.
        rebuilt = value.model_copy()
        rebuilt.__dict__.update({name: denumpy(item) for name, item in value.__dict__.items()})
        if value.__pydantic_extra__:
            extra = {name: denumpy(item) for name, item in value.__pydantic_extra__.items()}
            object.__setattr__(rebuilt, "__pydantic_extra__", extra)
        return rebuilt
    return value


@_along_spine
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
    if isinstance(value, Attrs):
        return Attrs(dataclasses_as_dicts(value.a), dataclasses_as_dicts(value.b))
    return _each_converted(value, dataclasses_as_dicts)


def _copy_if_possible(value: Any) -> Any:
    try:
        return copy.deepcopy(value)
    except Exception:  # not copyable: dispatch encodes the value itself
        return value


@_along_spine
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


def _enum_key(key: Any) -> Any:
    value = key.value if is_unwritable_enum(key) else key
    try:
        hash(value)
    except TypeError:  # a frozenset value made a list: no key either way
        return key
    return value


@_along_spine
def unwritable_enums_as_values(value: Any) -> Any:
    """``value`` with every enum member whose value ``json.dumps`` cannot write (a Decimal, a
    date, a frozenset) replaced by that value, dict keys included.

    FastAPI's ``jsonable_encoder`` hands ``member.value`` to ``json.dumps`` as it stands, which
    fails (500); ``dispatch`` encodes the value by its own rules (``Decimal("0.5")`` is 0.5), as
    orjson reads an enum's value, as a value and as a key.
    """
    if is_unwritable_enum(value):
        return value.value
    if not walk_any(value, is_unwritable_enum):
        return value
    rebuilt = _rebuilt(value, unwritable_enums_as_values)
    if rebuilt is not None:
        return rebuilt
    if isinstance(value, types.MappingProxyType):
        return types.MappingProxyType(
            {_enum_key(k): unwritable_enums_as_values(v) for k, v in value.items()}
        )
    if isinstance(value, dict):
        return type(value)({_enum_key(k): unwritable_enums_as_values(v) for k, v in value.items()})
    if isinstance(value, (list, tuple, deque)):
        return type(value)(unwritable_enums_as_values(v) for v in value)
    if isinstance(value, (set, frozenset)):
        # Members and values hash differently: the set is rebuilt in its iteration order,
        # which is the order FastAPI's encoder walks it in.
        return [unwritable_enums_as_values(v) for v in value]
    if isinstance(value, Point):
        return Point(value.x, unwritable_enums_as_values(value.y), value.label)
    if isinstance(value, Attrs):
        return Attrs(unwritable_enums_as_values(value.a), value.b)
    return value  # a model: pydantic writes enum values itself


def models_with_nonfinite_as_their_json(value: Any, **options: Any) -> Any:
    """``value`` with every model holding NaN or an infinity replaced by its own JSON, parsed.

    FastAPI's ``jsonable_encoder`` calls ``model_dump(mode="json")``, which leaves NaN a float
    whatever the model's ``ser_json_inf_nan`` says, and then fails (500). ``dispatch`` writes the
    model as pydantic's JSON serializer does (``model_dump_json``: ``"NaN"`` under "strings",
    ``null`` otherwise, the NaN token of "constants" being no JSON), with the same options. Only
    models with a "strings" model inside are replaced (elsewhere ``nonfinite_to_null`` gives the
    same), and only where pydantic can write them: a string with a lone surrogate is written as
    FastAPI's streams write it (``json.dumps``, NaN as null), see ``deliberate_untyped_body``.
    """

    def nonfinite(item: Any) -> bool:
        return isinstance(item, float) and not math.isfinite(item)

    def nan_as_string(item: Any) -> bool:
        return (
            isinstance(item, BaseModel) and item.model_config.get("ser_json_inf_nan") == "strings"
        )

    @_along_spine
    def replace(item: Any) -> Any:
        if isinstance(item, BaseModel):
            if not (walk_any(item, nonfinite) and walk_any(item, nan_as_string)):
                return item
            try:
                body = item.model_dump_json(**{"by_alias": True, **options})
            except PydanticSerializationError:  # a lone surrogate: pydantic writes no UTF-8
                return item
            data = json.loads(body, parse_constant=lambda name: None)
            # FastAPI encodes what model_dump gave once more, with the same options: a null
            # written for NaN must not be left out under exclude_none (NaN it stays, null later).
            return _nulls_as_nan(data) if options.get("exclude_none") else data
        if not walk_any(item, lambda v: isinstance(v, BaseModel) and walk_any(v, nonfinite)):
            return item
        if isinstance(item, Attrs):
            return Attrs(replace(item.a), item.b)
        return _each_converted(item, replace)

    return replace(value)


def _nulls_as_nan(data: Any) -> Any:
    if data is None:
        return math.nan
    if isinstance(data, dict):
        return {key: _nulls_as_nan(item) for key, item in data.items()}
    if isinstance(data, list):
        return [_nulls_as_nan(item) for item in data]
    return data


def deliberate_untyped_answer(ours: httpx.Response, value: Any) -> bytes | None:
    """Where FastAPI's untyped path answers 500: the body ``ours`` (a 200) holds on purpose.

    ``None`` where ``ours`` must fail too (``deliberate_untyped_body`` has nothing); either
    status is asserted.
    """
    expected = deliberate_untyped_body(value)
    if expected is None:
        assert ours.status_code == 500, "FastAPI cannot encode this value: neither may we"
        return None
    assert ours.status_code == 200, ours.content
    return expected


def deliberate_untyped_body(value: Any, **options: Any) -> bytes | None:
    """The body ``dispatch`` sends on purpose where FastAPI's untyped path answers 500.

    FastAPI's own encoding of the numpy-free value, dataclasses encoded without a copy, enums
    whose value ``json.dumps`` cannot write as that value, models holding non-finite floats as
    their own JSON, other non-finite floats turned into ``null``; ``None`` when even that cannot
    be encoded (then ``dispatch`` must fail too).
    """
    try:
        plain = models_with_nonfinite_as_their_json(
            unwritable_enums_as_values(dataclasses_as_dicts(denumpy(value))), **options
        )
        # Non-finite keys, and strings with lone surrogates (escaped), are written as FastAPI's
        # streams write them (json.dumps).
        # jsonable_encoder itself may fail (FastAPI 0.115 on Decimal("Infinity")): dispatch,
        # which reads FastAPI's own encoders, fails as well.
        converted = nonfinite_to_null(jsonable_encoder(plain, **options))
        try:
            return json.dumps(converted, ensure_ascii=False, separators=(",", ":")).encode()
        except UnicodeEncodeError:
            return json.dumps(converted, separators=(",", ":")).encode()
    except Exception:  # any failure: FastAPI has no answer either
        return None


def same_json_or_held(ours: bytes, expected: bytes, value: Any) -> bool:
    """``compare.same_json``, or, where a model in ``value`` holds a value assigned without
    validation (``unvalidated.holds_unvalidated``), ``held_as_written``."""
    if same_json(ours, expected):
        return True
    if not holds_unvalidated(value):
        return False
    event("deliberate difference (written as held)")
    return held_as_written(ours, expected)


def held_as_written(ours: bytes, expected: bytes) -> bool:
    """Whether ``ours`` is ``expected`` (FastAPI's body) with some values written as held.

    Deliberate (the contract's second tier): a value a type checker accepts but validation
    would not produce is written as it is held. A ``float`` field (or ``list[float]`` item)
    holding ``1`` or ``True`` is written ``1``/``true``, where pydantic converts it (``1.0``); an
    ``int`` field holding ``True``, ``true`` where pydantic writes ``1``; a str enum in a ``str``
    field its value where pydantic writes its characters (``HELD_STRINGS``). Every number must be
    equal, and where ``ours`` differs in JSON type, it is an int or ``true``/``false`` where
    FastAPI wrote a float, or ``true``/``false`` where it wrote an int.
    """
    with deep_enough():
        stack = [(typed_json(ours, strict=True), typed_json(expected))]
    while stack:
        mine, theirs = stack.pop()
        if isinstance(mine, dict) and isinstance(theirs, dict):
            if mine.keys() != theirs.keys():
                return False
            stack.extend((mine[key], theirs[key]) for key in mine)
        elif isinstance(mine, list) and isinstance(theirs, list):
            if len(mine) != len(theirs):
                return False
            stack.extend(zip(mine, theirs, strict=True))
        elif mine != theirs and not (
            (isinstance(mine, (bool, tuple)) and _held(mine, theirs))
            or (isinstance(mine, str) and (mine, theirs) in HELD_STRINGS)
        ):
            return False
    return True


def _held(mine: Any, theirs: Any) -> bool:
    """Whether ``mine`` is a number as held where pydantic wrote ``theirs`` converted.

    An int beyond a float's precision held by a ``float`` field is the float pydantic wrote.
    """
    if not isinstance(theirs, tuple):
        return False
    kind, number = ("bool", mine) if isinstance(mine, bool) else mine
    held_kinds = {"float": {"int", "bool"}, "int": {"bool"}}[theirs[0]]
    converted = float(number) if theirs[0] == "float" else number
    return kind in held_kinds and converted == theirs[1]


def headers_without_length(response: httpx.Response) -> list[tuple[str, str]]:
    """``comparable_headers`` but the content length, which follows the body."""
    return [h for h in comparable_headers(response) if h[0] != "content-length"]


def class_headers(options: dict[str, Any]) -> list[tuple[str, str]]:
    """The headers the route's response class sets itself (FastAPI's default: JSONResponse)."""
    response = options.get("response_class", JSONResponse)(None)
    return [(k, v) for k, v in response.headers.items() if k != "content-length"]


def assert_matches(ours: httpx.Response, fastapi: httpx.Response, value: Any) -> None:
    """Same status; below 500 the same headers in order (but the length) and the same JSON.

    The JSON may differ only by the deliberate rule ``held_as_written``.
    """
    assert ours.status_code == fastapi.status_code, ours.content
    if fastapi.status_code >= 500:
        return  # Starlette's plain-text "Internal Server Error" on both sides
    assert headers_without_length(ours) == headers_without_length(fastapi)
    assert same_json_or_held(ours.content, fastapi.content, value)
