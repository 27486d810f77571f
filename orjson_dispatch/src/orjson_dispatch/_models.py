"""Pydantic models serialized by orjson, exactly as pydantic's own JSON serializer would.

pydantic serializes a model by walking its core schema in Rust; orjson is faster still when the
model's fields hold plain JSON data, because it can read the instance's `__dict__` directly. This
module decides, once per model class, whether that shortcut is exact, and keeps a `ModelPlan` for
the classes where it is. A class qualifies only when its serialized form is provably the same as
the dict of its field values (renamed to their aliases, without excluded fields, plus computed
and extra fields): no field or model serializers, no non-default `ser_json_*` configuration, and
field types whose declared serializer matches pydantic's type inference for the value held.

Where a field may hold a nested model, pydantic serializes it with the declared class's schema
(a subclass instance loses its extra fields). The plan therefore checks at run time that each
such value is exactly of a declared class; any other instance takes pydantic's own path
(`__pydantic_serializer__.to_json`), so the shortcut can only ever be taken when it is exact.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import json
import threading
import types
import typing
from collections.abc import Callable, Mapping
from decimal import Decimal
from enum import Enum
from typing import Any, Literal, Union
from uuid import UUID

import annotated_types
import orjson
import pydantic
import pydantic.functional_validators as validators
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticSerializationError, PydanticUndefined, to_jsonable_python

from orjson_dispatch._options import ENCODE_OPTION

__all__ = [
    "Check",
    "ModelPlan",
    "analyse",
    "known_default",
    "model_default",
    "model_json",
    "model_plan",
    "numpy_as_orjson",
]

Check = Callable[[Any], bool]
"""Tells whether a value at a declared position is serialized exactly by the fast path."""


class NotPlainError(Exception):
    """Internal: the annotation's serialization is not provably what orjson produces."""


# Leaf types whose declared pydantic serializer gives what pydantic's inference gives for the
# same value, so that `to_jsonable_python` (our callback for non-native values) is exact.
_LEAVES: frozenset[Any] = frozenset(
    {
        str,
        int,
        float,
        bool,
        type(None),
        None,
        Any,
        datetime.datetime,
        datetime.date,
        datetime.time,
        datetime.timedelta,
        UUID,
        Decimal,
    }
)
# Annotated metadata that only constrains validation, never serialization.
_VALIDATION_ONLY_METADATA: tuple[type[Any], ...] = (
    annotated_types.BaseMetadata,
    annotated_types.GroupedMetadata,
    pydantic.Strict,
    pydantic.StringConstraints,
    pydantic.Discriminator,
    pydantic.Tag,
    validators.AfterValidator,
    validators.BeforeValidator,
    validators.PlainValidator,
    validators.WrapValidator,
)
# Config entries that change the JSON of a model, with the value that does not.
_NEUTRAL_CONFIG: Mapping[str, Any] = {
    "ser_json_timedelta": "iso8601",
    "ser_json_temporal": "iso8601",
    "ser_json_bytes": "utf8",
    "ser_json_inf_nan": "null",
    "json_encoders": None,
}
_SEQUENCES = (list, tuple, set, frozenset)


Fields = Callable[[BaseModel], "dict[str, Any] | None"]
"""Returns the dict orjson must encode for an instance, or None if the fast path does not apply."""


@dataclasses.dataclass(frozen=True, slots=True)
class ModelPlan:
    """How to hand exact instances of a plain model class, and the models in them, to orjson.

    Attributes:
        fields: The `Fields` function of the class.
        classes: The class and every model class its fields may hold on the fast path.
        default: The orjson `default` callback for encoding an instance of the class: the
            `fields` of each class in `classes` are found with one dict lookup.
    """

    fields: Fields
    classes: frozenset[type[BaseModel]]
    default: Callable[[Any], Any]


def _fields_function(
    *,
    names: tuple[str, ...],
    output: tuple[tuple[str, str], ...],
    scalars: tuple[tuple[str, frozenset[type[Any]]], ...],
    checks: tuple[tuple[str, Check], ...],
    computed: tuple[tuple[str, str, Check | None], ...],
    extra: bool,
) -> Fields:
    """Return the `Fields` function of a plain model class.

    Args:
        names: The field names in declaration order: the keys, in order, of the `__dict__` of
            an instance pydantic built.
        output: (field name, JSON key) of every field that is serialized.
        scalars: (field name, classes) of the fields declared as scalars (`int`, `float | None`,
            ...): pydantic converts a value of another class assigned without validation (an int
            in a float field is written 0.0, a bool in an int field 1), so only these pass.
        checks: (field name, check) of the fields that may hold nested models.
        computed: (property name, JSON key, check) of the computed fields.
        extra: The model allows extra fields, serialized after the declared ones.
    """
    # The instance's __dict__ itself is what orjson must encode.
    identity = not computed and output == tuple((name, name) for name in names)

    def fields(model: BaseModel) -> dict[str, Any] | None:
        values = model.__dict__
        # A missing field (model_construct), a foreign key (functools.cached_property stores
        # its value in __dict__) or another order: pydantic would not write __dict__ as it is.
        if tuple(values) != names:
            return None
        for name, classes in scalars:
            if type(values[name]) not in classes:
                return None
        for name, check in checks:
            if not check(values[name]):
                return None
        extras = model.__pydantic_extra__ if extra else None
        if identity and not extras:
            return values
        # pydantic's order: fields, extra fields, computed fields.
        out = {key: values[name] for name, key in output}
        if extras:
            out.update(extras)
        for name, key, value_check in computed:
            value = getattr(model, name)
            if value_check is not None and not value_check(value):
                return None
            out[key] = value
        return out

    return fields


# Plans live on each class itself (in its own __dict__, never inherited), so that a class created
# per request is collected with its plan: a registry keyed by class would keep every class alive.
_PLAN_ATTRIBUTE = {True: "__orjson_dispatch_plan_by_alias__", False: "__orjson_dispatch_plan__"}
_in_progress: set[tuple[type[BaseModel], bool]] = set()
# Sync endpoints run in threads: one analysis at a time, so that a class another thread is
# analysing is never mistaken for a recursive one. Reentrant for nested models.
_analysis_lock = threading.RLock()


def model_plan(cls: type[BaseModel], by_alias: bool) -> ModelPlan | None:
    """Return the plan of `cls`, or None when pydantic must serialize its instances itself."""
    attribute = _PLAN_ATTRIBUTE[by_alias]
    try:
        return cls.__dict__[attribute]  # type: ignore[no-any-return]
    except KeyError:
        pass
    with _analysis_lock:
        if attribute in cls.__dict__:
            return cls.__dict__[attribute]  # type: ignore[no-any-return]
        key = (cls, by_alias)
        if key in _in_progress:
            # A recursive model: its plan cannot rely on itself being plain.
            raise NotPlainError
        _in_progress.add(key)
        try:
            plan: ModelPlan | None = _build_plan(cls, by_alias)
        except NotPlainError:
            plan = None
        finally:
            _in_progress.discard(key)
        type.__setattr__(cls, attribute, plan)
        return plan


def _build_plan(cls: type[BaseModel], by_alias: bool) -> ModelPlan:
    if not cls.__pydantic_complete__ or getattr(cls, "__pydantic_root_model__", False):
        raise NotPlainError
    decorators = cls.__pydantic_decorators__
    if decorators.field_serializers or decorators.model_serializers:
        raise NotPlainError
    config = cls.model_config
    for name, neutral in _NEUTRAL_CONFIG.items():
        if config.get(name, neutral) not in (neutral, {}):
            raise NotPlainError
    found: set[type[BaseModel]] = set()
    output: list[tuple[str, str]] = []
    scalars: list[tuple[str, frozenset[type[Any]]]] = []
    checks: list[tuple[str, Check]] = []
    for name, field in cls.model_fields.items():
        if getattr(field, "exclude_if", None) is not None:
            raise NotPlainError
        check = _analyse_field(field, by_alias, found)
        if check is not None:
            checks.append((name, check))
        classes = _scalar_classes(field.annotation)
        if classes:
            scalars.append((name, classes))
        if not field.exclude:
            output.append((name, _key(name, field.serialization_alias or field.alias, by_alias)))
    computed: list[tuple[str, str, Check | None]] = []
    for name, info in cls.model_computed_fields.items():
        return_type = info.return_type
        check = None if return_type is PydanticUndefined else analyse(return_type, by_alias, found)
        computed.append((name, _key(name, info.alias, by_alias), check))
    fields = _fields_function(
        names=tuple(cls.model_fields),
        output=tuple(output),
        scalars=tuple(scalars),
        checks=tuple(checks),
        computed=tuple(computed),
        extra=config.get("extra") == "allow",
    )
    fields_of = {nested: _plan(nested, by_alias).fields for nested in found}
    fields_of[cls] = fields
    return ModelPlan(fields, frozenset(fields_of), _known_default(fields_of, by_alias))


def _scalar_classes(annotation: Any) -> frozenset[type[Any]]:
    """Return the classes pydantic writes unchanged where `annotation` is declared.

    Empty unless `annotation` is a scalar type or a union of them (`float`, `int | None`).
    """
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    if annotation in (int, float, str, bool):
        return frozenset({annotation})
    if annotation is None or annotation is type(None):
        return frozenset({type(None)})
    if typing.get_origin(annotation) in (Union, types.UnionType):
        members = [_scalar_classes(member) for member in typing.get_args(annotation)]
        if all(members):
            return frozenset().union(*members)
    return frozenset()


def _key(name: str, alias: str | None, by_alias: bool) -> str:
    return alias if by_alias and alias else name


def _analyse_field(field: FieldInfo, by_alias: bool, found: set[type[BaseModel]]) -> Check | None:
    _check_metadata(field.metadata)
    return analyse(field.annotation, by_alias, found)


def _check_metadata(metadata: typing.Iterable[Any]) -> None:
    for item in metadata:
        if isinstance(item, FieldInfo):
            # A Field() inside a type: only its constraints and discriminator can matter.
            if item.exclude or item.serialization_alias:
                raise NotPlainError
            _check_metadata(item.metadata)
        elif not isinstance(item, _VALIDATION_ONLY_METADATA):
            raise NotPlainError


def analyse(annotation: Any, by_alias: bool, found: set[type[BaseModel]]) -> Check | None:
    """Decide whether values declared as `annotation` serialize exactly through orjson.

    Adds to `found` every model class the returned check admits, with the classes it may hold.

    Returns:
        None when any value held there serializes exactly (no nested model can be there), or a
        check to run on the value held, which is True when it serializes exactly.

    Raises:
        NotPlainError: pydantic's serialization of `annotation` may differ from orjson's.
    """
    try:
        if annotation in _LEAVES:
            return None
    except TypeError:  # an unhashable annotation is no leaf
        pass
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        _check_metadata(annotation.__metadata__)
        return analyse(args[0], by_alias, found)
    if origin is Literal:
        return None
    if origin is Union or origin is types.UnionType:
        return _analyse_union(args, by_alias, found)
    if origin in _SEQUENCES:
        return _analyse_sequence(origin, args, by_alias, found)
    if origin is dict:
        key_type, value_type = args or (Any, Any)
        if key_type not in (str, Any) and not (
            isinstance(key_type, type) and issubclass(key_type, str)
        ):
            raise NotPlainError
        value_check = analyse(value_type, by_alias, found)
        return None if value_check is None else _all_values(value_check)
    if isinstance(annotation, type):
        if issubclass(annotation, Enum) and not issubclass(annotation, _NON_JSON_ENUMS):
            return None
        if issubclass(annotation, BaseModel):
            _add_plain(annotation, by_alias, found)
            return _ExactClasses(frozenset({annotation}))
        if annotation in _SEQUENCES or annotation is dict:
            return None  # bare list, dict...: items are inferred, as for Any
    raise NotPlainError


# Enums mixed with a type orjson and pydantic encode differently would need their own rules.
_NON_JSON_ENUMS = (datetime.date, datetime.time, datetime.timedelta, Decimal, bytes)


def _add_plain(cls: type[BaseModel], by_alias: bool, found: set[type[BaseModel]]) -> None:
    plan = model_plan(cls, by_alias)
    if plan is None:
        raise NotPlainError
    found |= plan.classes


def _plan(cls: type[BaseModel], by_alias: bool) -> ModelPlan:
    """Return the plan of a class `analyse` has found plain."""
    plan = model_plan(cls, by_alias)
    assert plan is not None, cls  # `found` holds only classes with a plan
    return plan


def _analyse_union(
    members: tuple[Any, ...], by_alias: bool, found: set[type[BaseModel]]
) -> Check | None:
    models: set[type[Any]] = set()
    for member in members:
        inner = member
        while typing.get_origin(inner) is typing.Annotated:
            _check_metadata(inner.__metadata__)
            inner = typing.get_args(inner)[0]
        if isinstance(inner, type) and issubclass(inner, BaseModel):
            _add_plain(inner, by_alias, found)
            models.add(inner)
        elif analyse(inner, by_alias, found) is not None:
            # A container of models inside a union: pydantic's choice of member is not
            # something a cheap check can predict.
            raise NotPlainError
    if not models:
        return None
    return _Members(frozenset(models))


def _analyse_sequence(
    origin: Any, args: tuple[Any, ...], by_alias: bool, found: set[type[BaseModel]]
) -> Check | None:
    if origin is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
        checks = [analyse(arg, by_alias, found) for arg in args if arg is not Ellipsis]
        if any(check is not None for check in checks):
            raise NotPlainError  # positional tuples of models are rare; pydantic handles them
        return None
    item_check = analyse(args[0], by_alias, found) if args else None
    return None if item_check is None else _all_items(item_check)


# Checks run once per value orjson is handed, so they are closures over their data, and lists of
# models are checked with one set of their item classes (C loops) rather than a call per item.


class _ExactClasses:
    """A check: the value is exactly of one of the classes (pydantic's declared class)."""

    __slots__ = ("classes",)

    def __init__(self, classes: frozenset[type[Any]]) -> None:
        self.classes = classes

    def __call__(self, value: Any) -> bool:
        return type(value) in self.classes


class _Members(_ExactClasses):
    """A check for a union with model members."""

    __slots__ = ()

    def __call__(self, value: Any) -> bool:
        # pydantic picks the union member whose class is exactly the value's; a value that is
        # no model at all is serialized by inference in both serializers.
        return type(value) in self.classes or not isinstance(value, BaseModel)


def _all_items(check: Check) -> Check:
    if type(check) is _ExactClasses:
        classes = check.classes

        def all_exact(value: Any) -> bool:
            return isinstance(value, (list, tuple)) and set(map(type, value)) <= classes

        return all_exact

    def all_items(value: Any) -> bool:
        return isinstance(value, (list, tuple)) and all(map(check, value))

    return all_items


def _all_values(check: Check) -> Check:
    def all_values(value: Any) -> bool:
        return isinstance(value, dict) and all(map(check, value.values()))

    return all_values


def model_json(model: BaseModel, *, by_alias: bool) -> bytes:
    """Serialize `model` as its own class: the JSON of `model.model_dump_json(by_alias=...)`.

    Uses the class's plan with orjson when it applies; otherwise, and whenever orjson refuses a
    value (an integer beyond 64 bits), pydantic's own serializer.
    """
    plan = model_plan(type(model), by_alias)
    if plan is not None and (fields := plan.fields(model)) is not None:
        try:
            return orjson.dumps(fields, default=plan.default, option=ENCODE_OPTION)
        except TypeError:
            pass
    return pydantic_json(model, by_alias=by_alias)


def pydantic_json(model: BaseModel, *, by_alias: bool) -> bytes:
    """Return pydantic's JSON of `model`, NaN and infinities written as null (strict JSON)."""
    body = model.__pydantic_serializer__.to_json(model, by_alias=by_alias, fallback=numpy_as_orjson)
    return without_nan(body) if writes_nan(type(model).__pydantic_core_schema__) else body


def numpy_as_orjson(value: Any) -> Any:
    """Pydantic's fallback: numpy values as orjson writes them (a documented difference)."""
    if type(value).__module__ != "numpy":
        msg = f"Unable to serialize unknown type: {type(value)!r}"
        raise PydanticSerializationError(msg)
    return json.loads(orjson.dumps(value, option=orjson.OPT_SERIALIZE_NUMPY))


def writes_nan(schema: Any) -> bool:
    """Tell whether pydantic may write NaN or Infinity for values of a core schema.

    True when some model or type in it has `ser_json_inf_nan="constants"`: NaN and Infinity are
    not JSON (RFC 8259 section 6).
    """
    stack = [schema]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if item.get("ser_json_inf_nan") == "constants":
                return True
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return False


def without_nan(body: bytes) -> bytes:
    """Return `body` with NaN and infinities written as null, the rest unchanged in value."""
    if b"NaN" not in body and b"Infinity" not in body:
        return body
    value = json.loads(body, parse_constant=lambda _: None)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


@functools.cache
def model_default(by_alias: bool) -> Callable[[Any], Any]:
    """Return the orjson `default` callback used inside models and typed responses.

    It applies pydantic's rules: a nested model through its plan (or pydantic's serializer when
    the plan does not apply), anything else through pydantic's type inference, which is what
    pydantic does for a value of that type at a position declared as such or as `Any`.
    """
    attribute = _PLAN_ATTRIBUTE[by_alias]

    def default(value: Any) -> Any:
        # orjson calls this once per nested model: one lookup in the class's own dict.
        cls = type(value)
        plan = cls.__dict__.get(attribute, _UNKNOWN)
        if plan is _UNKNOWN:
            if not isinstance(value, BaseModel):
                return to_jsonable_python(value, by_alias=by_alias)
            plan = model_plan(cls, by_alias)
        if plan is not None:
            fields = plan.fields(value)
            if fields is not None:
                return fields
        return orjson.Fragment(pydantic_json(value, by_alias=by_alias))

    return default


_UNKNOWN = object()


def known_default(
    classes: typing.Iterable[type[BaseModel]], by_alias: bool
) -> Callable[[Any], Any]:
    """Return `model_default` with a shortcut for `classes`, classes `analyse` has found plain.

    The fields of an instance of one of `classes` are found with one lookup in a dict held by the
    callback (a class's own `__dict__` sits behind pydantic's metaclass `__getattr__`, several
    times slower); any other value goes to `model_default`.
    """
    return _known_default({cls: _plan(cls, by_alias).fields for cls in classes}, by_alias)


def _known_default(
    fields_of: dict[type[BaseModel], Fields], by_alias: bool
) -> Callable[[Any], Any]:
    fallback = model_default(by_alias)

    def default(value: Any) -> Any:
        fields = fields_of.get(type(value))
        if fields is None:
            return fallback(value)
        out = fields(value)
        if out is not None:
            return out
        return orjson.Fragment(pydantic_json(value, by_alias=by_alias))

    return default
