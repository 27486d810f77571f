"""Pydantic models serialized by orjson, derived from the core schema pydantic serializes with.

pydantic writes a model by walking its core schema in Rust: the instance's `__dict__` in its own
order (keys that are not fields skipped, missing fields left out), each value by its field's
schema, under the field's serialization alias, then the extra fields, then the computed fields.
orjson writes a dict faster still, so this module reads, once per model class, the same core
schema and generates a small Python function (straight-line code, one line of checks) that hands
orjson what pydantic would write: the instance's `__dict__` itself when nothing is renamed, left
out or added, else a dict built from it.

Validation guarantees the types of the values it builds, but an instance returned as it is (of
the declared class, which validation passes through) may hold values assigned without
validation or given to `model_construct`. The generated function therefore checks what only
validation would have guaranteed: that each value has exactly the Python type its schema's
validator produces (pydantic converts an `int` held by a `float` field, a `bool` by an `int`
field), and that each nested model is exactly of a class its schema declares (pydantic writes a
subclass instance with the declared class's fields, never the subclass's). Where a check fails,
pydantic converts that model itself.

A field (or computed field) whose schema this module cannot prove orjson writes identically
(serializers, unions holding containers, bytes...) is converted by pydantic alone, value by
value, with a serializer of that field's schema; its siblings keep the generated code. A model
whose whole schema is out of reach (model serializers, root models, extra fields with a schema)
is converted by pydantic whole. pydantic converts in JSON mode (`to_python(mode="json")`, what
`model_dump(mode="json")` returns) and orjson writes the result: the same JSON as pydantic's own
writer for every configuration this module accepts (NaN and infinities, which pydantic leaves
floats in JSON mode, orjson writes as null, pydantic's default; `ser_json_*` settings that
differ from the defaults make the whole value pydantic's, see `ContextualError`).

The items of a list, tuple, set or dict field declared with a scalar type are not checked one by
one: an item appended without validation is written as held (docs/dispatch.md).

The generated code is registered in `linecache` under a file name naming the class, so that
tracebacks, pdb and `inspect.getsource` show it. Setting `ORJSON_DISPATCH_PYDANTIC_MODELS=1`
makes pydantic convert every model whole, for bisecting a difference.
"""

from __future__ import annotations

import contextvars
import dataclasses
import datetime
import functools
import itertools
import json
import linecache
import operator
import os
import re
import uuid
import weakref
from collections.abc import Callable, Iterable, Mapping
from decimal import Decimal
from typing import Any, NamedTuple, NoReturn

import orjson
from pydantic import BaseModel
from pydantic_core import (
    PydanticSerializationError,
    SchemaSerializer,
    to_json,
    to_jsonable_python,
)

from orjson_dispatch._options import encode_option

__all__ = [
    "PYDANTIC_MODELS",
    "Check",
    "ContextualError",
    "Declared",
    "Encode",
    "KeepResultsError",
    "NotPlainError",
    "RestartError",
    "SqlalchemyKeyError",
    "class_encoder",
    "declared",
    "default_for",
    "exact",
    "is_sqlalchemy_key",
    "keeping_results",
    "kept",
    "model_default",
    "model_json",
    "model_python",
    "numpy_as_orjson",
    "once",
    "orjson_models",
    "pydantic_json",
    "restart",
    "runs_user_code",
    "without_nan",
    "writes_nan",
]

Check = Callable[[Any], bool]
"""Tells whether a value at a declared position is written by orjson exactly as by pydantic."""
Encode = Callable[[Any], Any]
"""Returns what orjson writes for a model instance: a dict, or a Fragment of pydantic's JSON."""


class NotPlainError(Exception):
    """Internal: pydantic's JSON of the schema is not provably what orjson writes."""


class _IncompleteError(NotPlainError):
    """Internal: the class's schema cannot be built yet (unresolved forward references)."""


def _pydantic_models() -> bool:
    value = os.environ.get("ORJSON_DISPATCH_PYDANTIC_MODELS", "")
    if value not in ("", "0", "1"):
        msg = f"ORJSON_DISPATCH_PYDANTIC_MODELS must be 1 or 0 (or unset), not {value!r}"
        raise ValueError(msg)
    return value == "1"


PYDANTIC_MODELS = _pydantic_models()
"""`ORJSON_DISPATCH_PYDANTIC_MODELS=1`, read once at import: pydantic converts every model whole
(its generated code unused), to tell whether a difference comes from the generated code."""


class ContextualError(NotPlainError, TypeError):
    """A model whose JSON depends on where it is written: pydantic's `ser_json_*` settings.

    pydantic applies the settings of the outermost type being serialized (a model with
    `ser_json_inf_nan="strings"` inside a list writes NaN as null), so no part of a value that
    holds such a model is written by orjson, and the model is not written on its own by pydantic.
    Raised from orjson's `default` (a TypeError), it sends the whole value to pydantic.
    """


# Scalar schemas: the exact Python type their validator produces. A value of that type is
# written by pydantic's serializer as pydantic's type inference writes it, and so as orjson
# (with `to_jsonable_python` as its `default`) writes it.
_SCALARS: Mapping[str, type[Any]] = {
    "str": str,
    "int": int,
    "float": float,
    "bool": bool,
    "none": type(None),
    "datetime": datetime.datetime,
    "date": datetime.date,
    "time": datetime.time,
    "timedelta": datetime.timedelta,
    "uuid": uuid.UUID,
    "decimal": Decimal,
}
# Schemas whose serialization is their inner schema's ("schema"): defaults and validators.
_WRAPPERS = frozenset({"default", "function-after", "function-before", "function-wrap"})
# Config entries that change the JSON of a model, with the value that does not.
_NEUTRAL_CONFIG: Mapping[str, Any] = {
    "ser_json_timedelta": "iso8601",
    "ser_json_temporal": "iso8601",
    "ser_json_bytes": "utf8",
    "ser_json_inf_nan": "null",
}
_JSON_VALUES = (str, int, float, bool, type(None))
# Schemas whose serializer writes a value of their own type as type inference writes it, and a
# value of any other type (held without validation) by type inference too (with a warning).
# Not "str": pydantic writes a str subclass (a str enum) as its characters, inference as its value.
_INFERRED = frozenset({"any", "bool", "none"})
_CONTAINERS: Mapping[str, type[Any]] = {
    "list": list,
    "set": set,
    "frozenset": frozenset,
    "tuple": tuple,
    "dict": dict,
}


class _Checks:
    """Python expressions checking values against core schemas, with the names they use.

    Args:
        definitions: The schemas of the `definition-ref`s in the schema being read, by ref.
        namespace: Receives the objects the expressions name (classes, sets of classes).
        prefix: Starts the names given to those objects.
    """

    def __init__(
        self, definitions: Mapping[str, Any], namespace: dict[str, Any], prefix: str
    ) -> None:
        self.definitions = definitions
        self.namespace = namespace
        self.prefix = prefix
        self.models: set[type[BaseModel]] = set()

    def name(self, value: Any, what: str) -> str:
        """Return the name `value` has in the namespace, naming it after `what` it is."""
        for key, held in self.namespace.items():
            if held is value:
                return key
        key = f"{self.prefix}_{_identifier(what)}"
        if key in self.namespace:
            key = f"{key}_{len(self.namespace)}"
        self.namespace[key] = value
        return key

    def resolve(self, schema: Any) -> Any:
        while True:
            if schema.get("serialization") is not None:
                raise NotPlainError
            kind = schema["type"]
            if kind == "definition-ref":
                schema = self.definitions[schema["schema_ref"]]
            elif kind == "definitions" or kind in _WRAPPERS:
                schema = schema["schema"]
            else:
                return schema

    def types(self, schema: Any) -> frozenset[type[Any]]:
        """Return the classes a value must be exactly of to be written as pydantic writes it.

        Raises:
            NotPlainError: The schema needs more than a class check (a container, a serializer,
                a union member that takes any value).
        """
        schema = self.resolve(schema)
        kind = schema["type"]
        if kind in _SCALARS:
            return frozenset({_SCALARS[kind]})
        if kind == "model":
            self.models.add(schema["cls"])
            return frozenset({schema["cls"]})
        if kind == "literal":
            classes = frozenset(map(type, schema["expected"]))
            if not classes <= frozenset(_JSON_VALUES):
                raise NotPlainError  # enum members, bytes...
            return classes
        if kind == "enum" and all(
            isinstance(member.value, _JSON_VALUES) for member in schema["members"]
        ):
            return frozenset({schema["cls"]})
        if kind == "nullable":
            return self.types(schema["schema"]) | {type(None)}
        if kind in ("union", "tagged-union"):
            choices = schema["choices"]
            members = choices.values() if isinstance(choices, dict) else choices
            found: frozenset[type[Any]] = frozenset()
            for member in members:
                found |= self.types(member[0] if isinstance(member, tuple) else member)
            return found
        raise NotPlainError

    def expression(self, schema: Any, value: str) -> str | None:
        """Return an expression true when `value` is written exactly, None when it always is.

        The expression may raise KeyError, TypeError or AttributeError for a value that is not
        written exactly.
        """
        schema = self.resolve(schema)
        kind = schema["type"]
        if kind in _INFERRED:
            return None
        if kind == "nullable":
            inner = self.expression(schema["schema"], value)
            if inner is None:
                return None
            if self.resolve(schema["schema"])["type"] in (*_CONTAINERS, "union"):
                return f"({value} is None or {inner})"
        if kind in _CONTAINERS:
            return self._container(schema, value)
        try:
            classes = self.types(schema)
        except NotPlainError:
            if kind != "union":
                raise
            return self._union(schema, value)
        if len(classes) == 1:
            (cls,) = classes
            return f"type({value}) is {self.name(cls, cls.__name__)}"
        return f"type({value}) in {self.name(classes, f'one_of_{_names(classes)}')}"

    def _container(self, schema: Any, value: str, *, scalars: bool = False) -> str | None:
        """Return the check of a (resolved) container schema, None when it always holds.

        `scalars`: check scalar items too (a union's member, where pydantic converts them).
        """
        kind = schema["type"]
        items, values = self._items(schema, value, scalars=scalars)
        if items is None:
            return None
        # The container's own class first: a generator assigned without validation would be
        # consumed by the check. issuperset reads the iterator without building a set.
        container = self.name(_CONTAINERS[kind], kind)
        superset = self.name(items.issuperset, f"items_of_{_names(items)}")
        return f"(type({value}) is {container} and {superset}(map(type, {values})))"

    def _union(self, schema: Any, value: str) -> str:
        """Return the check of a union holding containers or `Any` (which `types` refuses).

        pydantic writes a value with the member its exact type matches: a list in
        `list[float] | str` as the list member, its scalar items unchecked (as for a list
        field) where pydantic writes them as held, checked where it converts them
        (`_converts_items`). With an `Any` member, pydantic tries the others first, then
        infers: a value of exactly a member's class is written by that member, a value that
        is an instance of no member's class (nor a model) by inference, as orjson does; only
        models and None may then be the other members (pydantic would convert an int by a
        `float` member).

        Raises:
            NotPlainError: Another union (two members of one container kind...).
        """
        classes: frozenset[type[Any]] = frozenset()
        containers: list[str] = []
        kinds: set[str] = set()
        inferred = False
        for member in schema["choices"]:
            resolved = self.resolve(member[0] if isinstance(member, tuple) else member)
            kind = resolved["type"]
            if kind == "any":
                inferred = True
            elif kind in _CONTAINERS:
                if kind in kinds:
                    raise NotPlainError
                kinds.add(kind)
                scalars = self._converts_items(schema, resolved)
                items = self._container(resolved, value, scalars=scalars)
                cls = self.name(_CONTAINERS[kind], kind)
                containers.append(items or f"type({value}) is {cls}")
            else:
                classes |= self.types(resolved)
        named = self.name(classes, f"one_of_{_names(classes)}")
        if inferred:
            if containers or not all(
                issubclass(cls, BaseModel) or cls is type(None) for cls in classes
            ):
                raise NotPlainError
            others = self.name((*classes, BaseModel), "models")
            return f"(type({value}) in {named} or not isinstance({value}, {others}))"
        return f"({' or '.join([f'type({value}) in {named}', *containers])})"

    def _converts_items(self, union: Any, member: Any) -> bool:
        """Tell whether pydantic converts a number held by `union`'s container `member`.

        An int or a bool held by a `float` item, a bool by an `int` item, is written as held
        where pydantic fails the union's strict pass and infers the container: `list[float] |
        str` since pydantic 2.9 (pydantic-core 2.22; before, the strict pass let a `float` take
        an int and wrote `[1, True]` as `[1.0,1.0]`). Where a lax pass follows (`list[float] |
        int`, `tuple[float, ...] | str`), or before pydantic 2.9, pydantic converts them as for
        a container field. Asked of pydantic itself, with a container of each such number.
        """
        try:
            samples = self._held_numbers(member)
        except NotPlainError:
            return False  # `_items` refuses the member
        if not samples:
            return False
        if self.definitions:
            union = {
                "type": "definitions",
                "schema": union,
                "definitions": [*self.definitions.values()],
            }
        serializer = SchemaSerializer(union)
        for held, as_held in samples:
            written = serializer.to_python(held, mode="json", warnings=False)
            if orjson.dumps(written) != orjson.dumps(as_held):
                return True
        return False

    def _held_numbers(self, schema: Any) -> list[tuple[Any, Any]]:
        """Return values of `schema` holding a number pydantic may convert, each as written held.

        The numbers: 1 and True where a `float` is declared, True where an `int` is.
        """
        schema = self.resolve(schema)
        kind = schema["type"]
        if kind not in _CONTAINERS:
            classes = self.types(schema)
            numbers = (
                *((1, True) if float in classes else ()),
                *((True,) if int in classes else ()),
            )
            return [(number, number) for number in numbers]
        if kind == "dict":
            items = schema.get("values_schema", {"type": "any"})
        else:
            items = schema.get("items_schema", {"type": "any"})
            if kind == "tuple":  # one variadic item schema, or `_items` refuses the tuple
                items = items[0] if isinstance(items, list) and len(items) == 1 else {"type": "any"}
        try:
            inner = self._held_numbers(items)
        except NotPlainError:
            return []
        if kind == "dict":
            return [({"k": held}, {"k": as_held}) for held, as_held in inner]
        if kind in ("set", "frozenset"):
            inner = [(held, as_held) for held, as_held in inner if type(held) in (int, bool)]
        return [(_CONTAINERS[kind]((held,)), [as_held]) for held, as_held in inner]

    def _items(
        self, schema: Any, value: str, *, scalars: bool = False
    ) -> tuple[frozenset[type[Any]] | None, str]:
        """Return the classes a container's items must be of, and its items' expression.

        The classes are None where the items are not checked: a container of scalars is
        written as held, as pydantic writes one that holds a value of another type; unless
        `scalars` (then a container of containers is refused).
        """
        kind = schema["type"]
        items = schema.get("items_schema", {"type": "any"})
        values = value
        if kind == "dict":
            keys = self.resolve(schema.get("keys_schema", {"type": "any"}))
            if keys["type"] not in ("str", "any"):
                raise NotPlainError
            items, values = schema.get("values_schema", {"type": "any"}), f"{value}.values()"
        elif kind == "tuple":
            if schema.get("variadic_item_index") != 0 or len(items) != 1:
                raise NotPlainError  # positional tuples: pydantic handles them
            items = items[0]
        items = self.resolve(items)
        if items["type"] in _CONTAINERS:
            if scalars or self._items(items, "_")[0] is not None:
                raise NotPlainError  # containers of containers of models
            return None, values
        if self.expression(items, "_") is None:
            return None, values
        classes = self.types(items)
        if not scalars and not any(issubclass(cls, BaseModel) for cls in classes):
            return None, values
        return classes, values


def _names(classes: Iterable[type[Any]]) -> str:
    """Name a set of classes in a generated name: the first three, and how many more."""
    names = sorted(cls.__name__ for cls in classes)
    more = f"_and_{len(names) - 3}_more" if len(names) > 3 else ""
    return "_".join(names[:3]) + more


def _definitions(schema: Any) -> dict[str, Any]:
    found: dict[str, Any] = {}
    if schema.get("type") == "definitions":
        for definition in schema["definitions"]:
            found[definition["ref"]] = definition
    return found


def _model_schema(cls: type[BaseModel]) -> tuple[Any, Any, Mapping[str, Any]]:
    """Return the model-fields schema, the config and the definitions `cls` serializes with.

    Raises:
        _IncompleteError: The class's schema cannot be built yet.
        NotPlainError: pydantic's JSON of the class is not provably what orjson writes.
    """
    if cls is BaseModel:
        # Declared as `BaseModel` itself: pydantic writes no field of it (`{}`); its schema is
        # never complete, and `BaseModel.model_rebuild()` raises.
        raise NotPlainError
    if not cls.__pydantic_complete__:
        # SDK models defer building their schema (`defer_build=True`) to their first
        # validation, and a class only nested in another is never built itself: build it.
        cls.model_rebuild(raise_errors=False)
        if not cls.__pydantic_complete__:
            raise _IncompleteError
    schema = cls.__pydantic_core_schema__
    definitions = _definitions(schema)
    schema = _Checks(definitions, {}, "").resolve(schema)
    if schema["type"] != "model" or schema["cls"] is not cls or schema.get("root_model"):
        raise NotPlainError
    config = schema.get("config", {})
    for name, neutral in _NEUTRAL_CONFIG.items():
        if config.get(name, neutral) != neutral:
            raise ContextualError(cls.__qualname__)
    fields = schema["schema"]
    if fields["type"] != "model-fields" or fields.get("extras_schema") is not None:
        raise NotPlainError
    return fields, config, definitions


@dataclasses.dataclass(frozen=True)
class _Source:
    """The generated code writing one model class.

    Attributes:
        tag: Starts every name the code uses: the class's name and a number unique to it.
        body: Statements on the instance `m` that return what orjson writes for it.
        namespace: The objects `body` names, by name; names start with `tag`.
        models: The model classes its fields declare.
        runs_user_code: It calls serializers, computed fields or iterables (through `_once`).
    """

    tag: str
    body: list[str]
    namespace: dict[str, Any]
    models: frozenset[type[BaseModel]]
    runs_user_code: bool


_numbers = itertools.count()


def _identifier(text: str) -> str:
    return re.sub(r"\W", "_", text)


def _source(cls: type[BaseModel], by_alias: bool, sqlalchemy: bool) -> _Source:
    """Return the code writing `cls`.

    With `sqlalchemy` (FastAPI's untyped path), the code raises `SqlalchemyKeyError` where a
    free-key position (extras, `dict` and `Any` values, pydantic's conversions) holds a key
    `jsonable_encoder` drops.
    """
    fields, config, definitions = _model_schema(cls)
    tag = f"{_identifier(cls.__name__)}_{next(_numbers)}"
    checks = _Checks(definitions, {}, tag)
    whole = checks.name((_SAFE_PYDANTIC if sqlalchemy else _BY_PYDANTIC)[by_alias], "by_pydantic")
    call_once = checks.name(once, "once")
    found = checks.name(_found_sqlalchemy_key, "found_sqlalchemy_key")
    tests, output, separate = _fields(fields, checks, config, by_alias)
    # The fields whose values may hold a key `jsonable_encoder` drops.
    free = [
        name
        for name in output
        if sqlalchemy
        and name not in separate
        and _free_keys(fields["fields"][name]["schema"], definitions)
    ]
    computed = _computed(fields, checks, config, by_alias)
    if sqlalchemy and any(
        is_sqlalchemy_key(key) for key in (*output.values(), *(item[1] for item in computed))
    ):
        raise NotPlainError  # pydantic's dict is looked at whole
    extra = (fields.get("extra_behavior") or config.get("extra_fields_behavior")) == "allow"
    identity = not computed and not separate and output == {name: name for name in fields["fields"]}
    body = [
        "d = m.__dict__",
        "try:",
        "    exact = (",
        f"        {tests[0]}",
        *(f"        and {test}" for test in tests[1:]),  # one field a line, for tracebacks
        "    )",
        "except (KeyError, TypeError, AttributeError):",
        "    exact = False",
        "if not exact:",
        f"    return {whole}(m)",
        *(f"{found}(d[{name!r}])" for name in free),
    ]
    runs_user_code = bool(computed or separate)
    if identity and not extra:
        body.append("return d")
        return _Source(tag, body, checks.namespace, frozenset(checks.models), runs_user_code)
    if extra:
        body.append("x = m.__pydantic_extra__")
    if identity:
        body += ["if not x:", "    return d"]
    # pydantic's order: the instance's dict, then extra fields, then computed fields.
    keys = checks.name(output, "keys")
    body.append(f"out = {{{keys}[k]: v for k, v in d.items() if k in {keys}}}")
    for name, converted in separate.items():
        body.append(f"out[{output[name]!r}] = {call_once}(m, {name!r}, {converted}, d[{name!r}])")
        if sqlalchemy:
            body.append(f"{found}(out[{output[name]!r}])")
    if extra:
        body += ["if x:", "    if not x.keys().isdisjoint(out):", f"        return {whole}(m)"]
        if sqlalchemy:
            body.append(f"    {found}(x)")
        body.append("    out.update(x)")
    for name, key, expression, converted in computed:
        # Read once per response: pydantic calls the property once too (`once`).
        getter = checks.name(operator.attrgetter(name), f"get_{name}")
        body.append(f"v = {call_once}(m, {name!r}, {getter}, m)")
        if expression is None:
            body.append(f"out[{key!r}] = v")
        else:
            as_json = f"{call_once}(m, {name + ' as JSON'!r}, {converted}, v)"
            body.append(f"out[{key!r}] = v if {expression} else {as_json}")
        if sqlalchemy:
            body.append(f"{found}(out[{key!r}])")
    body.append("return out")
    return _Source(tag, body, checks.namespace, frozenset(checks.models), runs_user_code)


def _fields(
    fields: Any, checks: _Checks, config: Any, by_alias: bool
) -> tuple[list[str], dict[str, str], dict[str, str]]:
    """Return what the code of a class needs to know of its fields.

    The checks of their values, the keys of the fields written, by name, and the names of the
    value serializers of the fields pydantic converts, by field name.
    """
    output: dict[str, str] = {}
    separate: dict[str, str] = {}
    tests = [f"len(d) == {len(fields['fields'])}"]
    for name, field in fields["fields"].items():
        if field.get("serialization_exclude_if") is not None:
            raise NotPlainError
        shown = not field.get("serialization_exclude")
        try:
            expression = checks.expression(field["schema"], f"d[{name!r}]")
        except NotPlainError:  # this field's values are pydantic's, one by one
            expression = None
            if _needs_the_model(field["schema"]):
                raise
            if shown:
                serializer = _value_serializer(
                    field["schema"], checks.definitions, config, by_alias
                )
                separate[name] = checks.name(serializer, f"{name}_by_pydantic")
        tests.append(expression or f"{name!r} in d")
        if shown:
            alias = field.get("serialization_alias") if by_alias else None
            output[name] = alias or name
    return tests, output, separate


def _computed(
    fields: Any, checks: _Checks, config: Any, by_alias: bool
) -> list[tuple[str, str, str | None, str]]:
    """Return each computed field's property, key, check of its value and value serializer."""
    computed = []
    for item in fields.get("computed_fields", []):
        key = (item.get("alias") if by_alias else None) or item["property_name"]
        schema = item["return_schema"]
        serializer = _value_serializer(schema, checks.definitions, config, by_alias)
        try:
            expression = checks.expression(schema, "v")
        except NotPlainError:
            expression = "False"
        converted = checks.name(serializer, f"{item['property_name']}_by_pydantic")
        computed.append((item["property_name"], key, expression, converted))
    return computed


class RestartError(TypeError):
    """Internal: the value is written again from its start, another way.

    Raised from orjson's `default` (a TypeError), before any user code ran or with its results
    kept (`keeping_results`); every caller that catches TypeError passes it on (`restart`).
    """


class SqlalchemyKeyError(RestartError):
    """A value holds a dict key that FastAPI's untyped path drops (SQLAlchemy's `_sa` state).

    The value is then written by the exact path.
    """


class KeepResultsError(RestartError):
    """A model whose class runs user code was met where results were not kept.

    The value is written again with `keeping_results`, before any user code ran.
    """


def restart(error: BaseException) -> RestartError | None:
    """Return the `RestartError` that `error` is or that orjson raised `error` for, else None."""
    if isinstance(error, RestartError):
        return error
    if isinstance(error.__cause__, RestartError):
        return error.__cause__
    return None


def runs_user_code(default: Callable[[Any], Any]) -> bool:
    """Tell whether a `default` from `default_for` may run user code where results are not kept.

    Such a `default` raises `KeepResultsError` first, where it meets such a model.
    """
    return getattr(default, _RUNS_USER_CODE, False) and _RESULTS.get() is None


def is_sqlalchemy_key(key: Any) -> bool:
    """Tell whether `jsonable_encoder(sqlalchemy_safe=True)` drops this dict key."""
    return isinstance(key, str) and key.startswith("_sa")


def _found_sqlalchemy_key(value: Any) -> None:
    """Raise `SqlalchemyKeyError` where `value` holds, at any depth, a key FastAPI drops.

    Models are not looked into: orjson hands each to the `default` callback, which checks it.
    """
    if value is None:
        return
    try:
        # orjson writes plain data at memory speed; a Python walk costs a step per item.
        if b'"_sa' not in orjson.dumps(value):
            return
    except TypeError:
        pass  # a model, a set, a big int, a non-str key...: walked
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key in item:
                if is_sqlalchemy_key(key):
                    raise SqlalchemyKeyError(key)
            stack.extend(item.values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            stack.extend(item)


def _free_keys(schema: Any, definitions: Mapping[str, Any]) -> bool:
    """Tell whether values of a field's schema may hold dict keys of any text.

    Nested models are not looked into (their own code checks them).
    """
    stack, seen = [schema], set()
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            kind = item.get("type")
            if kind == "definition-ref" and item.get("schema_ref") not in seen:
                seen.add(item["schema_ref"])
                stack.append(definitions.get(item["schema_ref"], {"type": "any"}))
                continue
            if kind == "model":
                continue
            if kind in ("any", "dict") or (
                isinstance(kind, str)
                and kind in _CONTAINERS
                and not ("items_schema" in item or "values_schema" in item)
            ):
                return True
            stack.extend(value for key, value in item.items() if key != "cls")
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return False


def _needs_the_model(schema: Any) -> bool:
    """Tell whether a field's serializer reads the model or its field's name (not one value).

    A `field_serializer` method is called with the instance, and a serializer taking `info`
    reads the field's name: only pydantic's serializer of the whole model gives them.
    """
    stack = [schema]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if item.get("is_field_serializer") or item.get("info_arg"):
                return True
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return False


def _value_serializer(
    schema: Any, definitions: Mapping[str, Any], config: Any, by_alias: bool
) -> Callable[[Any], Any]:
    """Return pydantic's conversion of values of one field's schema, in JSON mode."""
    if definitions:
        schema = {"type": "definitions", "schema": schema, "definitions": [*definitions.values()]}
    serializer = SchemaSerializer(schema, config or None)
    return functools.partial(
        serializer.to_python, mode="json", by_alias=by_alias, fallback=numpy_as_orjson
    )


def _compiled(name: str, lines: Iterable[str], namespace: Mapping[str, Any], title: str) -> Any:
    """Return the function `name` that `lines` define, with the names of `namespace`.

    The names are a closure's: cells are read faster than globals and, unlike defaults, cost
    nothing per call. The source is registered in `linecache` under a file name made of
    `title` (as attrs registers its generated methods), for tracebacks, pdb and
    `inspect.getsource`, for as long as the function lives.
    """
    body = "\n".join(f"    {line}" for line in lines)
    parameters = ", ".join(("type", *namespace))
    source = f"def closure({parameters}):\n{body}\n    return {name}\n"
    filename = f"<orjson_dispatch {title}>"
    count = 1
    while filename in linecache.cache:
        count += 1
        filename = f"<orjson_dispatch {title} #{count}>"
    scope: dict[str, Any] = {"__name__": __name__}
    exec(compile(source, filename, "exec"), scope)
    function = scope["closure"](type, *namespace.values())
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    weakref.finalize(function, linecache.cache.pop, filename, None)
    return function


def _title(cls: type[Any]) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


# Encoders live on each class itself (in its own __dict__, never inherited), so that a class
# created per request is collected with its encoder: a registry keyed by class would keep every
# class alive. Each entry: (the class's source or None, its encoder).
# Per setting: by alias, and whether FastAPI's untyped path (which drops `_sa` keys) is written.
_ATTRIBUTE = {
    (by_alias, sqlalchemy): "__orjson_dispatch_encode{}{}__".format(
        "_by_alias" if by_alias else "", "_untyped" if sqlalchemy else ""
    )
    for by_alias in (True, False)
    for sqlalchemy in (True, False)
}
_DEFAULT_ATTRIBUTE = {key: name.replace("_encode", "_default") for key, name in _ATTRIBUTE.items()}


def _settings(by_alias: bool, sqlalchemy: bool) -> str:
    return f"{' by alias' if by_alias else ''}{' untyped' if sqlalchemy else ''}"


def class_encoder(
    cls: type[BaseModel], by_alias: bool, *, sqlalchemy: bool = False
) -> tuple[_Source | None, Encode]:
    """Return the generated source of `cls` (None where pydantic writes it) and its encoder.

    With `sqlalchemy`, for FastAPI's untyped path: the encoder raises `SqlalchemyKeyError`
    where the model holds a key `jsonable_encoder` drops.
    """
    attribute = _ATTRIBUTE[by_alias, sqlalchemy]
    entry: tuple[_Source | None, Encode] | None = cls.__dict__.get(attribute)
    if entry is None:
        whole = (_SAFE_PYDANTIC if sqlalchemy else _BY_PYDANTIC)[by_alias]
        try:
            if PYDANTIC_MODELS:
                raise NotPlainError  # the switch takes the fallback's way
            source = _source(cls, by_alias, sqlalchemy)
        except ContextualError:
            entry = (None, _contextual)
        except _IncompleteError:  # tried again next time, once the class can be built
            return None, whole
        except NotPlainError:
            entry = (None, whole)
        else:
            name = f"encode_{_identifier(cls.__name__)}"
            lines = [f"def {name}(m):", *(f"    {line}" for line in source.body)]
            title = f"encode {_title(cls)}{_settings(by_alias, sqlalchemy)}"
            entry = (source, _compiled(name, lines, source.namespace, title))
        type.__setattr__(cls, attribute, entry)
    return entry


def _contextual(model: BaseModel) -> NoReturn:
    raise ContextualError(type(model).__qualname__)


def _pydantic_python(model: BaseModel, *, by_alias: bool) -> Any:
    """Return pydantic's conversion of `model` in JSON mode, for orjson to write."""
    return model.__pydantic_serializer__.to_python(
        model, mode="json", by_alias=by_alias, fallback=numpy_as_orjson
    )


def _by_pydantic(model: BaseModel, *, by_alias: bool) -> Any:
    """`_pydantic_python`, run once per response (`once`): it runs the model's user code."""
    return once(model, "", _PYDANTIC_PYTHON[by_alias], model)


_PYDANTIC_PYTHON = {
    flag: functools.partial(_pydantic_python, by_alias=flag) for flag in (True, False)
}
_BY_PYDANTIC = {flag: functools.partial(_by_pydantic, by_alias=flag) for flag in (True, False)}


def _safe_pydantic(model: BaseModel, *, by_alias: bool) -> Any:
    """`_by_pydantic`, for the untyped path: raises `SqlalchemyKeyError` as `class_encoder`."""
    converted = _by_pydantic(model, by_alias=by_alias)
    _found_sqlalchemy_key(converted)
    return converted


_SAFE_PYDANTIC = {flag: functools.partial(_safe_pydantic, by_alias=flag) for flag in (True, False)}


# Up to this many classes, the `default` callback tests the class of a value against each in
# turn, with each class's code inline (a Python call less per model); past it, one dict lookup
# finds the class's encoder.
_INLINE_CLASSES = 8


def default_for(
    classes: Iterable[type[BaseModel]], by_alias: bool, *, sqlalchemy: bool = False
) -> Callable[[Any], Any]:
    """Return the orjson `default` callback for values holding instances of `classes`.

    A model of `classes` or of a class their fields declare is written by its class's generated
    code; any other model as its own class (`model_json`), as pydantic's type inference writes
    it; any other value by pydantic's type inference, which is what pydantic does for a value
    of that type at a position declared as such or as `Any`.
    """
    roots = list(classes)
    known: dict[type[BaseModel], tuple[_Source | None, Encode]] = {}
    pending = list(roots)
    while pending:
        cls = pending.pop()
        if cls not in known:
            known[cls] = class_encoder(cls, by_alias, sqlalchemy=sqlalchemy)
            source, encode = known[cls]
            if encode is _contextual:
                raise ContextualError(cls.__qualname__)
            pending.extend(source.models if source is not None else ())
    other = functools.partial(_inferred, by_alias=by_alias, sqlalchemy=sqlalchemy)
    if len(known) > _INLINE_CLASSES:
        encoders = {cls: encode for cls, (_, encode) in known.items()}

        def default(value: Any) -> Any:
            encode = encoders.get(type(value))
            return other(value) if encode is None else encode(value)

        return _reading(default, known.values())
    namespace: dict[str, Any] = {"other_values": other}
    name = "default_for_" + "_".join(_identifier(cls.__name__) for cls in roots[:3])
    lines = [f"def {name}(m):", "    t = type(m)"]
    # The classes found last, the most deeply nested, are usually the most numerous: first.
    for cls, (source, encode) in reversed(known.items()):
        if source is None:
            tag = f"{_identifier(cls.__name__)}_{next(_numbers)}"
            namespace[f"{tag}_class"] = cls
            namespace[f"{tag}_encoder"] = encode
            lines += [f"    if t is {tag}_class:", f"        return {tag}_encoder(m)"]
        else:
            namespace[f"{source.tag}_class"] = cls
            namespace.update(source.namespace)
            lines.append(f"    if t is {source.tag}_class:")
            lines += (f"        {line}" for line in source.body)
    lines.append("    return other_values(m)")
    title = f"default {', '.join(_title(cls) for cls in roots)}{_settings(by_alias, sqlalchemy)}"
    return _reading(_compiled(name, lines, namespace, title), known.values())


def _reading(
    default: Callable[[Any], Any], entries: Iterable[tuple[_Source | None, Encode]]
) -> Callable[[Any], Any]:
    """Return `default`, noted as running user code where the code of one of its classes may.

    A model met at an `Any` position is written by its class's code too, which raises
    `KeepResultsError` where that class runs user code and results are not kept.
    """
    runs = any(source is None or source.runs_user_code for source, _ in entries)
    # Set either way: `orjson_models` reads it per value, and a missing attribute costs an
    # exception raised and caught inside getattr.
    setattr(default, _RUNS_USER_CODE, runs)
    return default


# What user code (serializers, computed fields, iterables held in fields) returned while one
# value is written, by (id of the model, what was converted), the model kept alive so that its
# id stays its own. Where orjson then refuses the value (an integer beyond 64 bits, a non-str
# key), the value is written again from these results: user code runs once per response, as in
# pydantic, and an iterable is not found consumed.
_RESULTS: contextvars.ContextVar[dict[tuple[int, str], tuple[Any, Any]] | None] = (
    contextvars.ContextVar("orjson_dispatch_results", default=None)
)
# The attribute marking a `default` whose classes run user code.
_RUNS_USER_CODE = "orjson_dispatch_runs_user_code"


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


def orjson_models(value: Any, default: Callable[[Any], Any], option: int) -> bytes:
    """Return orjson's JSON of `value`, its models written by `default` (from `default_for`).

    Where orjson refuses an integer beyond 64 bits or a non-str key, the value is written again
    from what `default` returned (user code is not run again), such integers as their digits
    and such keys as pydantic writes them.

    Raises:
        TypeError: orjson refuses a value (then pydantic decides).
    """
    if runs_user_code(default):
        return keeping_results(lambda: _orjson_models(value, default, option))
    try:
        return orjson.dumps(value, default=default, option=option)
    except TypeError as error:
        return _written_again(value, default, option, error)


def _orjson_models(value: Any, default: Callable[[Any], Any], option: int) -> bytes:
    try:
        return orjson.dumps(value, default=default, option=option)
    except TypeError as error:
        return _written_again(value, default, option, error)


def _written_again(
    value: Any, default: Callable[[Any], Any], option: int, error: TypeError
) -> bytes:
    if isinstance(error.__cause__, ContextualError):
        raise error
    signal = restart(error)
    if signal is not None:
        raise signal from None
    try:
        return orjson.dumps(exact(value, default), default=default, option=option)
    except Exception as again:  # a lone surrogate, a cycle...: pydantic decides
        signal = restart(again)
        if signal is not None:
            raise signal from None
        raise TypeError(again) from again


def exact(value: Any, default: Callable[[Any], Any]) -> Any:
    """Return `value` as orjson reads it through `default`, written as pydantic writes it.

    Integers beyond 64 bits become Fragments of their digits, non-str keys pydantic's text.

    Raises:
        TypeError: Two keys of one dict are written alike (pydantic writes both).
    """
    kind = type(value)
    if kind is int:
        return value if -(2**63) <= value < 2**64 else orjson.Fragment(int.__repr__(value))
    if kind in (str, float, bool) or value is None or kind is orjson.Fragment:
        return value
    if kind is dict:
        converted = {
            key if type(key) is str else _pydantic_key(key): exact(item, default)
            for key, item in value.items()
        }
        if len(converted) != len(value):
            raise TypeError("two keys written alike")
        return converted
    if kind in (list, tuple):
        return [exact(item, default) for item in value]
    if kind.__module__ == "numpy":
        return value  # orjson writes it (OPT_SERIALIZE_NUMPY)
    return exact(default(value), default)


def _pydantic_key(key: Any) -> str:
    """Return the object key pydantic's JSON writes for a dict key held at an `Any` position."""
    text: str = next(iter(json.loads(to_json({key: None}, inf_nan_mode="null"))))
    return text


def _inferred(value: Any, *, by_alias: bool, sqlalchemy: bool) -> Any:
    if isinstance(value, BaseModel):  # at a position declared `Any`: written as its own class
        source, encode = class_encoder(type(value), by_alias, sqlalchemy=sqlalchemy)
        if (source is None or source.runs_user_code) and _RESULTS.get() is None:
            raise KeepResultsError(type(value).__qualname__)
        return encode(value)
    converted = to_jsonable_python(value, by_alias=by_alias)
    if sqlalchemy:
        _found_sqlalchemy_key(converted)
    if type(converted) in (list, dict):
        # pydantic's own JSON, as `dump_json` writes it (NaN and infinities as null): a
        # non-finite float key is written "None", twice in a dict with two such keys, where
        # `to_jsonable_python` has "nan"/"inf"/"-inf" (one "None" in `inf_nan_mode="null"`).
        return orjson.Fragment(to_json(value, by_alias=by_alias, inf_nan_mode="null"))
    return converted  # a scalar (a datetime's string...): as orjson writes it, and faster


class Declared(NamedTuple):
    """What values declared as one type must be to be written by orjson exactly.

    Attributes:
        check: Tells whether a value is written exactly; None when every value is, or when
            `root` says it all.
        root: The model class a value must be exactly of, where the type is one model class
            (tested inline: a call less per value).
        models: The model classes the type declares, nested ones included.
    """

    check: Check | None
    root: type[BaseModel] | None
    models: frozenset[type[BaseModel]]


def declared(schema: Any) -> Declared:
    """Return what values of a core schema must be to be written by orjson exactly.

    Raises:
        NotPlainError: pydantic's serialization of the schema may differ from orjson's.
    """
    checks = _Checks(_definitions(schema), {}, "declared")
    resolved = checks.resolve(schema)
    if resolved["type"] == "model":
        return Declared(None, resolved["cls"], frozenset({resolved["cls"]}))
    expression = checks.expression(schema, "value")
    if expression is None:
        return Declared(None, None, frozenset(checks.models))
    lines = [
        "def check(value):",
        "    try:",
        f"        return {expression}",
        "    except (TypeError, AttributeError):",
        "        return False",
    ]
    check = _compiled("check", lines, checks.namespace, f"check {expression}")
    return Declared(check, None, frozenset(checks.models))


def model_json(model: BaseModel, *, by_alias: bool, sqlalchemy: bool = False) -> bytes:
    """Serialize `model` as its own class: the JSON of `model.model_dump_json(by_alias=...)`.

    Uses the generated code of its class (and of the classes in it) with orjson where it
    applies; otherwise, and whenever orjson refuses a value, pydantic's own serializer.

    Raises:
        SqlalchemyKeyError: With `sqlalchemy`, `model` holds a key `jsonable_encoder` drops.
    """
    default = model_default(type(model), by_alias, sqlalchemy)
    if default is not None:
        if sqlalchemy and runs_user_code(default):  # FastAPI's untyped path: see `_untyped`
            raise KeepResultsError(type(model).__qualname__)
        try:
            return orjson_models(model, default, encode_option())
        except RestartError:
            raise
        except TypeError:
            pass
    body = pydantic_json(model, by_alias=by_alias)
    if sqlalchemy and b'"_sa' in body:
        raise SqlalchemyKeyError(type(model).__qualname__)
    return body


def model_python(model: BaseModel, *, by_alias: bool) -> Any:
    """Return what `model.model_dump(mode="json", by_alias=...)` holds, for orjson to write.

    Written by the class's code (its user code's results kept, see `keeping_results`), integers
    beyond 64 bits as Fragments of their digits.
    """
    default = model_default(type(model), by_alias)
    if default is not None:
        if runs_user_code(default):
            raise KeepResultsError(type(model).__qualname__)
        try:
            return exact(model, default)
        except RestartError:
            raise
        except TypeError:
            pass  # two keys written alike: pydantic's dict keeps the last
    return _by_pydantic(model, by_alias=by_alias)


def model_default(
    cls: type[BaseModel], by_alias: bool, sqlalchemy: bool = False
) -> Callable[[Any], Any] | None:
    """Return the `default` writing instances of `cls` as their own class.

    None where pydantic writes them whole (`ser_json_*` settings).
    """
    attribute = _DEFAULT_ATTRIBUTE[by_alias, sqlalchemy]
    default: Callable[[Any], Any] | None = cls.__dict__.get(attribute, _contextual)
    if default is _contextual:
        try:
            default = default_for((cls,), by_alias, sqlalchemy=sqlalchemy)
        except ContextualError:
            default = None
        type.__setattr__(cls, attribute, default)
    return default


def pydantic_json(model: BaseModel, *, by_alias: bool) -> bytes:
    """Return pydantic's JSON of `model`, NaN and infinities written as null (strict JSON).

    The body is looked at, not the class's schema: a model held by a field declared `Any` has
    settings of its own (`ser_json_inf_nan="constants"`), which some pydantic releases apply.
    """
    body = model.__pydantic_serializer__.to_json(model, by_alias=by_alias, fallback=numpy_as_orjson)
    return without_nan(body)


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
