"""What orjson may write of a model class as it stands, read once from pydantic's core schema.

pydantic writes a model by walking its core schema: the instance's `__dict__` in its own order
(keys that are not fields skipped, missing fields left out), each value by its field's schema,
under the field's serialization alias, then the extra fields. For the values validation or an
SDK's `construct` produces, a field whose schema is *plain* (scalars, enums, JSON-valued
literals, containers and unions of plain schemas, models, `Any`) is written by orjson exactly as
pydantic writes it: orjson's own types natively, datetimes, decimals, bytes, URLs and the like
through pydantic's type inference (the `default` callback), models by their own class's plan.

A `Plan` says, for one class, `by_alias` and what is left out (`LeftOut`), which key each field
is written under and which fields pydantic converts (an annotated serializer, an iterable, a
dataclass: anything not plain), or that pydantic converts the class whole (model and field
serializers reading the model, computed fields, root models, typed extras). The plans of the
classes reachable from a declared type make its class table (`_classes`).

Setting `ORJSON_DISPATCH_PYDANTIC_MODELS=1` makes pydantic convert every model whole, for
bisecting a difference.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from pydantic import BaseModel
from pydantic_core import SchemaSerializer

from orjson_dispatch._options import NOTHING_LEFT_OUT, LeftOut
from orjson_dispatch._results import ContextualError, numpy_as_orjson

__all__ = [
    "PYDANTIC_MODELS",
    "Declared",
    "IncompleteError",
    "NotPlainError",
    "Plan",
    "declared",
    "plan",
    "whole",
    "writes_nan",
]


def _pydantic_models() -> bool:
    value = os.environ.get("ORJSON_DISPATCH_PYDANTIC_MODELS", "")
    if value not in ("", "0", "1"):
        msg = f"ORJSON_DISPATCH_PYDANTIC_MODELS must be 1 or 0 (or unset), not {value!r}"
        raise ValueError(msg)
    return value == "1"


PYDANTIC_MODELS = _pydantic_models()
"""`ORJSON_DISPATCH_PYDANTIC_MODELS=1`, read once at import: pydantic converts every model whole."""


class IncompleteError(Exception):
    """The class's schema cannot be built yet (unresolved forward references)."""


# Schemas written as orjson writes a value of the type their validator produces: natively, or
# through pydantic's type inference in `default` (datetimes, decimals, bytes as UTF-8, URLs).
_LEAVES = frozenset(
    {
        "any",
        "str",
        "int",
        "float",
        "bool",
        "none",
        "datetime",
        "date",
        "time",
        "timedelta",
        "uuid",
        "decimal",
        "bytes",
        "url",
        "multi-host-url",
        "enum",
        "function-plain",  # a plain validator: its value is written by inference
    }
)
# Schemas written as their inner schema ("schema"): defaults and validators.
_WRAPPERS = frozenset(
    {"default", "nullable", "function-after", "function-before", "function-wrap", "custom-error"}
)
_ITEMS = frozenset({"list", "set", "frozenset"})
_JSON_VALUES = (str, int, float, bool, type(None))
# Config entries that change the JSON of a model, with the value that does not.
_NEUTRAL_CONFIG: Mapping[str, Any] = {
    "ser_json_timedelta": "iso8601",
    "ser_json_temporal": "iso8601",
    "ser_json_bytes": "utf8",
    "ser_json_inf_nan": "null",
}


class NotPlainError(Exception):
    """pydantic's JSON of the schema is not provably what orjson writes."""


class Declared(NamedTuple):
    """What a plain schema declares.

    Attributes:
        models: The model classes it declares (not those of their fields).
        free: Its values may hold values the schema does not declare (`dict`, `Any`): a
            model there may be of any class (`_classes`).
    """

    models: frozenset[type[BaseModel]]
    free: bool


def declared(schema: Any, definitions: Mapping[str, Any]) -> Declared:
    """Return what a plain schema declares.

    Raises:
        NotPlainError: The schema is not plain (see the module docstring).
    """
    found: set[type[BaseModel]] = set()
    free = False
    seen: set[str] = set()
    stack = [schema]
    while stack:
        item = stack.pop()
        if item.get("serialization") is not None:
            raise NotPlainError
        kind = item["type"]
        free = free or kind in ("any", "dict", "function-plain")
        if kind == "definition-ref":
            ref = item["schema_ref"]
            if ref not in seen:  # a recursive type alias (pydantic's JsonValue) ends here
                seen.add(ref)
                stack.append(definitions[ref])
        elif kind == "definitions":
            definitions = {**definitions, **_definitions(item)}
            stack.append(item["schema"])
        elif kind in _WRAPPERS:
            stack.append(item["schema"])
        elif kind == "model":
            if item["cls"] is BaseModel:  # pydantic writes `{}` for any instance there
                raise NotPlainError
            found.add(item["cls"])
        elif kind in _ITEMS:
            stack.append(item.get("items_schema", {"type": "any"}))
        elif kind == "tuple":
            stack.extend(item.get("items_schema", []))
        elif kind == "dict":
            keys = item.get("keys_schema", {"type": "any"})
            if keys["type"] not in ("str", "any") or keys.get("serialization") is not None:
                raise NotPlainError  # pydantic writes other keys by its own rules
            stack.append(item.get("values_schema", {"type": "any"}))
        elif kind == "union":
            stack.extend(c[0] if isinstance(c, tuple) else c for c in item["choices"])
        elif kind == "tagged-union":
            stack.extend(item["choices"].values())
        elif kind == "literal":
            if not all(type(value) in _JSON_VALUES for value in item["expected"]):
                raise NotPlainError  # enum members, bytes...
        elif kind not in _LEAVES:
            raise NotPlainError  # dataclasses, typed dicts, iterables, custom types...
    return Declared(frozenset(found), free)


def _definitions(schema: Any) -> dict[str, Any]:
    if schema.get("type") != "definitions":
        return {}
    return {definition["ref"]: definition for definition in schema["definitions"]}


Convert = Callable[[Any], Any]
"""pydantic's conversion of one field's value in JSON mode (as `model_dump(mode="json")`)."""


@dataclasses.dataclass(frozen=True)
class Plan:
    """How orjson writes the instances of one class, under one `by_alias` and `left_out`.

    Attributes:
        cls: The class.
        by_alias: Fields are written under their serialization alias.
        left_out: The fields left out of each instance (`exclude_unset`, `exclude_none`).
        fields: Every field's name, in definition order (as `__dict__` holds them).
        keys: The key each written field is written under, by field name (fields with
            `exclude=True` are not written).
        converted: The fields whose values pydantic converts, with their conversion.
        extras: Extra fields are allowed, and written after the fields.
        declared: The model classes each plain written field declares, by field name.
        free: The fields whose values may hold values the schema does not declare.
        whole: pydantic converts the class whole (why, else empty).
        cached: The class has a `functools.cached_property`, whose value is kept in the
            instance's `__dict__` beside the fields.
    """

    cls: type[BaseModel]
    by_alias: bool
    left_out: LeftOut = NOTHING_LEFT_OUT
    fields: tuple[str, ...] = ()
    keys: Mapping[str, str] = dataclasses.field(default_factory=dict)
    converted: Mapping[str, Convert] = dataclasses.field(default_factory=dict)
    extras: bool = False
    declared: Mapping[str, frozenset[type[BaseModel]]] = dataclasses.field(default_factory=dict)
    free: tuple[str, ...] = ()
    whole: str = ""
    cached: bool = False
    _serializer: Callable[[str], Convert] | None = dataclasses.field(default=None, repr=False)

    @property
    def own_names(self) -> bool:
        """Every field is written, under its own name."""
        return self.keys == {name: name for name in self.fields}

    @property
    def as_held(self) -> bool:
        """An instance whose `__dict__` holds exactly the fields is written as that dict."""
        return not self.whole and not self.converted and self.own_names

    @property
    def models(self) -> frozenset[type[BaseModel]]:
        """The model classes the written fields declare."""
        return frozenset().union(*self.declared.values())

    def converting(self, names: frozenset[str]) -> Plan:
        """Return this plan with the plain fields `names` converted by pydantic too.

        For the models they hold: a value of one of JSON's own types is written as held.
        """
        assert self._serializer is not None
        converting = {name: _models_only(self._serializer(name)) for name in names}
        converted = {**self.converted, **converting}
        declared = {name: models for name, models in self.declared.items() if name not in names}
        return dataclasses.replace(self, converted=converted, declared=declared)


def _models_only(convert: Convert) -> Convert:
    def scalars_as_held(value: Any) -> Any:
        return value if type(value) in _JSON_TYPES else convert(value)

    return scalars_as_held


# What orjson writes as pydantic writes it, in a plain field (the exact classes: a subclass of
# str, an enum member, may be written otherwise).
_JSON_TYPES = frozenset({str, int, float, bool, type(None)})


def whole(cls: type[BaseModel], by_alias: bool, left_out: LeftOut, why: str) -> Plan:
    """Return the plan of a class pydantic converts whole, and why."""
    return Plan(cls, by_alias, left_out, whole=why)


def plan(cls: type[BaseModel], by_alias: bool, left_out: LeftOut = NOTHING_LEFT_OUT) -> Plan:
    """Return the plan of `cls` (`Plan.whole` says why where pydantic converts it whole).

    Raises:
        ContextualError: The class's JSON depends on where it is written (`ser_json_*`).
        IncompleteError: The class's schema cannot be built yet.
    """
    if PYDANTIC_MODELS:
        return whole(cls, by_alias, left_out, "ORJSON_DISPATCH_PYDANTIC_MODELS=1")
    if cls is BaseModel:  # never complete: `BaseModel.model_rebuild()` raises
        return whole(cls, by_alias, left_out, "pydantic's BaseModel itself")
    if not cls.__pydantic_complete__:
        # SDK models defer building their schema (`defer_build=True`) to their first
        # validation, and a class only nested in another is never built itself: build it.
        cls.model_rebuild(raise_errors=False)
        if not cls.__pydantic_complete__:
            raise IncompleteError(cls.__qualname__)
    schema = cls.__pydantic_core_schema__
    definitions = _definitions(schema)
    while schema["type"] in ("definitions", "definition-ref", *_WRAPPERS):
        if schema.get("serialization") is not None:
            return whole(cls, by_alias, left_out, "a model serializer")
        ref = schema.get("schema_ref")
        schema = definitions[ref] if ref is not None else schema["schema"]
    if schema["type"] != "model" or schema["cls"] is not cls or schema.get("root_model"):
        return whole(cls, by_alias, left_out, "a root model")
    if schema.get("serialization") is not None:
        return whole(cls, by_alias, left_out, "a model serializer")
    config = schema.get("config", {})
    for name, neutral in _NEUTRAL_CONFIG.items():
        if config.get(name, neutral) != neutral:
            raise ContextualError(cls.__qualname__)
    fields = schema["schema"]
    if fields["type"] != "model-fields" or fields.get("extras_schema") is not None:
        return whole(cls, by_alias, left_out, "typed extra fields")
    if fields.get("computed_fields"):
        return whole(cls, by_alias, left_out, "computed fields")

    def serializer(name: str) -> Convert:
        field_schema = fields["fields"][name]["schema"]
        if definitions:
            field_schema = {**schema_definitions, "schema": field_schema}
        converter = SchemaSerializer(field_schema, config or None)
        return functools.partial(
            converter.to_python,
            mode="json",
            by_alias=by_alias,
            fallback=numpy_as_orjson,
            exclude_unset=left_out.unset,
            exclude_none=left_out.none,
        )

    schema_definitions = {"type": "definitions", "definitions": [*definitions.values()]}
    keys: dict[str, str] = {}
    converted: dict[str, Convert] = {}
    declared_models: dict[str, frozenset[type[BaseModel]]] = {}
    free: list[str] = []
    for name, field in fields["fields"].items():
        if field.get("serialization_exclude_if") is not None or _reads_the_model(field):
            return whole(cls, by_alias, left_out, f"field {name!r} is serialized with the model")
        if field.get("serialization_exclude"):
            continue
        keys[name] = (field.get("serialization_alias") if by_alias else None) or name
        try:
            declared_models[name], is_free = declared(field["schema"], definitions)
        except NotPlainError:
            converted[name] = serializer(name)
            continue
        if is_free:
            free.append(name)
    extras = (fields.get("extra_behavior") or config.get("extra_fields_behavior")) == "allow"
    cached = any(
        isinstance(attribute, functools.cached_property)
        for klass in cls.__mro__
        for attribute in vars(klass).values()
    )
    return Plan(
        cls,
        by_alias,
        left_out,
        fields=tuple(fields["fields"]),
        keys=keys,
        converted=converted,
        extras=extras,
        declared=declared_models,
        free=tuple(free),
        cached=cached,
        _serializer=serializer,
    )


def _reads_the_model(field: Any) -> bool:
    """Tell whether a field's serializer reads the model or its field's name (not one value).

    A `field_serializer` method is called with the instance, and a serializer taking `info`
    reads the field's name: only pydantic's serializer of the whole model gives them.
    """
    stack = [field]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if item.get("is_field_serializer") or item.get("info_arg"):
                return True
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return False


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
