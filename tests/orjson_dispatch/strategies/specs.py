"""Annotations for typed endpoints, each with a strategy for values that validate against it.

Plain types, containers of them (dicts keyed by str, int or enums), enums (some whose value is
not their content, some whose value ``json.dumps`` cannot write), literals, values nested 250 to
900 levels deep under ``Any``, and generated pydantic model classes with aliases, alias
generators, defaults, serializers, model validators, computed and excluded fields, extra fields
and nested models or unions of models. Every generated model class is built with
``pydantic.create_model`` under a name unique per draw; its instances may be built with
``model_construct`` and may have fields assigned without validation.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime as dt
import enum
import ipaddress
import itertools
import pathlib
import uuid
from collections.abc import Callable
from decimal import Decimal
from typing import Any, Literal, Optional, Union

from hypothesis import reject
from hypothesis import strategies as st
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretBytes,
    SecretStr,
    ValidationError,
    computed_field,
    create_model,
    field_serializer,
    model_validator,
)
from pydantic.alias_generators import to_camel, to_pascal

from tests.orjson_dispatch.strategies.hostile import (
    DISGUISED_ENUMS,
    UNWRITABLE_ENUMS,
    Bits,
    Day,
    Letter,
    Number,
    Price,
    Renamed,
)
from tests.orjson_dispatch.strategies.leaves import (
    Color,
    Kind,
    Level,
    any_floats,
    big_ints,
    dates,
    datetimes,
    finite_decimals,
    json_leaves,
    paths,
    secrets,
    texts,
    timedeltas,
    times,
    utf8_bytes,
    uuids,
)
from tests.orjson_dispatch.strategies.untyped import deep_values, untyped_values
from tests.orjson_dispatch.strategies.unvalidated import assign_unvalidated
from tests.orjson_dispatch.versions import BY_NAME_AND_ALIAS, INF_NAN_MODES

_COUNTER = itertools.count()


def unique_name(prefix: str) -> str:
    """``prefix`` followed by a number never used before in this process."""
    return f"{prefix}{next(_COUNTER)}"


@dataclasses.dataclass(frozen=True)
class TypeSpec:
    """An annotation and a strategy for values that validate against it.

    Attributes:
        annotation: The type, usable as a return annotation or ``response_model``.
        values: Values that validate against ``annotation`` (as ``TypeAdapter`` would).
        hashable: Whether the values may go into sets and frozensets.
        model: The pydantic model class when ``annotation`` is one.
    """

    annotation: Any
    values: st.SearchStrategy[Any]
    hashable: bool = True
    model: type[BaseModel] | None = None


def _enum_spec(enum_class: type[enum.Enum]) -> TypeSpec:
    # Members by index: Hypothesis 6.170 cannot replay a str-subclass member drawn by
    # sampled_from while shrinking (FlakyStrategyDefinition).
    members = list(enum_class)
    return TypeSpec(enum_class, st.integers(0, len(members) - 1).map(members.__getitem__))


_SCALAR_SPECS: tuple[TypeSpec, ...] = (
    TypeSpec(str, st.text(max_size=8)),
    TypeSpec(int, big_ints),
    TypeSpec(float, any_floats),
    TypeSpec(bool, st.booleans()),
    TypeSpec(type(None), st.none()),
    TypeSpec(dt.datetime, datetimes),
    TypeSpec(dt.date, dates),
    TypeSpec(dt.time, times),
    TypeSpec(dt.timedelta, timedeltas),
    TypeSpec(uuid.UUID, uuids),
    TypeSpec(Decimal, finite_decimals),
    TypeSpec(bytes, utf8_bytes),
    TypeSpec(pathlib.Path, paths),
    TypeSpec(ipaddress.IPv4Address, st.ip_addresses(v=4)),
    TypeSpec(ipaddress.IPv6Address, st.ip_addresses(v=6)),
    TypeSpec(SecretStr, secrets, hashable=False),
    TypeSpec(SecretBytes, utf8_bytes.map(SecretBytes), hashable=False),
    TypeSpec(Color, st.sampled_from(Color)),
    TypeSpec(Level, st.sampled_from(Level)),
    TypeSpec(Kind, st.integers(0, len(Kind) - 1).map(list(Kind).__getitem__)),
    TypeSpec(Literal["a", "b", 3], st.sampled_from(["a", "b", 3])),
    *(_enum_spec(e) for e in (Letter, Number, Renamed, Price, Day, Bits)),
    TypeSpec(Any, untyped_values(max_leaves=4), hashable=False),
    TypeSpec(Any, deep_values(untyped_values(max_leaves=2)), hashable=False),
)
scalar_specs = st.sampled_from(_SCALAR_SPECS)


def _generic(origin: Any, *args: Any) -> Any:
    """``origin[args]`` built at run time (``list[x]``, ``Union[a, b]``, ...)."""
    return origin[args[0] if len(args) == 1 else args]


_KEY_ENUMS: tuple[type[enum.Enum], ...] = (Color, Level, Kind, *DISGUISED_ENUMS, *UNWRITABLE_ENUMS)


# Composites here are defined once, at import: hypothesis reads the source of the function each
# time st.composite wraps one (to check that it draws); wrapped anew for each value drawn, that
# was a quarter of the typed tests' CPU.
@st.composite
def _container_specs(draw: st.DrawFn, inner: st.SearchStrategy[TypeSpec]) -> TypeSpec:
    spec = draw(inner)
    kind = draw(
        st.sampled_from(
            [
                "optional",
                "list",
                "tuple",
                "set",
                "frozenset",
                "dict_str",
                "dict_int",
                "dict_enum",
                "union",
            ]
        )
    )
    if kind == "optional":
        return TypeSpec(
            _generic(Optional, spec.annotation),
            st.none() | spec.values,
            spec.hashable,
            None,
        )
    if kind == "list":
        return TypeSpec(_generic(list, spec.annotation), st.lists(spec.values, max_size=3), False)
    if kind == "tuple":
        return TypeSpec(
            _generic(tuple, spec.annotation, ...),
            st.lists(spec.values, max_size=3).map(tuple),
            spec.hashable,
        )
    if kind in {"set", "frozenset"} and spec.hashable:
        container = set if kind == "set" else frozenset
        return TypeSpec(
            _generic(container, spec.annotation),
            st.lists(spec.values, max_size=3).map(container),
            kind == "frozenset",
        )
    if kind == "dict_int":
        return TypeSpec(
            _generic(dict, int, spec.annotation),
            st.dictionaries(big_ints, spec.values, max_size=3),
            False,
        )
    if kind == "dict_enum":
        keys = _enum_spec(draw(st.sampled_from(_KEY_ENUMS)))
        return TypeSpec(
            _generic(dict, keys.annotation, spec.annotation),
            st.dictionaries(keys.values, spec.values, max_size=3),
            False,
        )
    if kind == "union":
        other = draw(scalar_specs)
        return TypeSpec(
            _generic(Union, spec.annotation, other.annotation),
            spec.values | other.values,
            spec.hashable and other.hashable,
        )
    return TypeSpec(
        _generic(dict, str, spec.annotation),
        st.dictionaries(texts, spec.values, max_size=3),
        False,
    )


_FIELD_NAMES = ("alpha", "beta_value", "gamma", "delta_x", "eps", "zeta_id", "eta", "theta")


@st.composite
def model_specs(draw: st.DrawFn, depth: int = 1) -> TypeSpec:
    """A freshly created pydantic model class and a strategy for its valid instances.

    The class may have per-field ``alias``/``serialization_alias``, a model ``alias_generator``,
    defaults, ``Field(exclude=True)``, a ``computed_field``, a ``field_serializer``, a model
    validator (before, after or wrap, redacting or rejecting), ``extra='allow'|'forbid'|'ignore'``
    and nested models or unions of models (``depth`` levels). Its instances are validated or
    built with ``model_construct`` (no validator ran).
    """
    inner = field_specs(depth - 1) if depth > 0 else scalar_specs
    names = draw(st.lists(st.sampled_from(_FIELD_NAMES), unique=True, max_size=4))
    config = ConfigDict(**BY_NAME_AND_ALIAS)  # type: ignore[typeddict-item]
    alias_generator = draw(st.sampled_from([None, None, to_camel, to_pascal, str.upper]))
    if alias_generator is not None:
        config["alias_generator"] = alias_generator
    extra: Literal["allow", "forbid", "ignore"] | None = draw(
        st.sampled_from([None, "allow", "forbid", "ignore"])
    )
    if extra is not None:
        config["extra"] = extra
    inf_nan: Literal["null", "strings", "constants"] | None = draw(
        st.sampled_from([None, None, None, *INF_NAN_MODES])
    )
    if inf_nan is not None:
        config["ser_json_inf_nan"] = inf_nan
    fields: dict[str, Any] = {}
    strategies: dict[str, st.SearchStrategy[Any]] = {}
    optional: set[str] = set()
    for name in names:
        spec = draw(inner)
        kwargs: dict[str, Any] = {}
        alias_kind = draw(st.sampled_from(["none", "none", "alias", "serialization_alias"]))
        if alias_kind != "none":
            kwargs[alias_kind] = draw(st.sampled_from(["Other", "x-y", name.upper(), "id"]))
        if draw(st.integers(0, 5)) == 0:
            kwargs["exclude"] = True
        if draw(st.booleans()):
            default = draw(spec.values)
            if _copyable(default):  # pydantic deep-copies mutable defaults
                kwargs["default"] = default
                optional.add(name)
        fields[name] = (spec.annotation, Field(**kwargs))
        strategies[name] = spec.values
    if len(set(_serialized_names(fields, alias_generator))) != len(fields):
        # Two fields serialized under one key: pydantic accepts it, JSON output is ill-defined.
        fields = {}
        strategies = {}
        optional = set()
    validators = draw(_validators(fields, strategies))
    model: type[BaseModel] = create_model(
        unique_name("Generated"),
        __config__=config,
        __validators__=validators,
        **fields,
    )
    return TypeSpec(model, _instances(model, strategies, optional, extra), False, model)


#: The model validators generated models may have: each redacts one field (sets it to a value
#: drawn once per class) or rejects the instance when that field holds that value.
MODEL_VALIDATOR_MODES = ("before", "after", "wrap", "reject")


def _model_validator(mode: str, target: str, redacted: Any) -> Any:
    """A model validator on the field ``target``: FastAPI runs it on every returned value."""
    if mode == "before":

        def before(cls: Any, data: Any) -> Any:
            return {**data, target: redacted} if isinstance(data, dict) else data

        return model_validator(mode="before")(classmethod(before))  # type: ignore[arg-type]
    if mode == "wrap":

        def wrap(cls: Any, data: Any, handler: Any) -> Any:
            model = handler(data)
            model.__dict__[target] = redacted
            return model

        return model_validator(mode="wrap")(classmethod(wrap))  # type: ignore[arg-type]

    def after(self: Any) -> Any:
        if mode == "reject" and self.__dict__.get(target, redacted) == redacted:
            raise ValueError(f"{target} must not be {redacted!r}")
        if mode == "after":
            self.__dict__[target] = redacted
        return self

    return model_validator(mode="after")(after)


@st.composite
def _validators(
    draw: st.DrawFn, fields: dict[str, Any], strategies: dict[str, st.SearchStrategy[Any]]
) -> dict[str, Any]:
    """A computed field, a field serializer, a model validator: each maybe."""
    validators: dict[str, Any] = {}
    if draw(st.integers(0, 3)) == 0:
        ret = draw(st.sampled_from(["int", "str", "ret"]))
        field_names = list(fields)
        if ret == "int":
            validators["total"] = computed_field(return_type=int)(lambda self: len(field_names))
        elif ret == "str":
            validators["summary"] = computed_field(alias="Summary", return_type=str)(
                lambda self: ",".join(field_names)
            )
        else:
            validators["when"] = computed_field(return_type=dt.date)(
                lambda self: dt.date(2024, 2, 29)
            )
    if fields and draw(st.integers(0, 3)) == 0:
        target = draw(st.sampled_from(sorted(fields)))
        validators["_ser"] = field_serializer(target)(lambda self, value: repr(value)[:16])
    if fields and draw(st.integers(0, 2)) == 0:
        target = draw(st.sampled_from(sorted(fields)))
        mode = draw(st.sampled_from(MODEL_VALIDATOR_MODES))
        validators["_check"] = _model_validator(mode, target, draw(strategies[target]))
    return validators


def _copyable(value: Any) -> bool:
    try:
        copy.deepcopy(value)
    except Exception:  # any failure: not usable as a default
        return False
    return True


def _serialized_names(fields: dict[str, Any], generator: Callable[[str], str] | None) -> list[str]:
    names = []
    for name, (_, info) in fields.items():
        alias = info.serialization_alias or info.alias
        names.append(alias or (generator(name) if generator else name))
    return names


@st.composite
def _instances(
    draw: st.DrawFn,
    model: type[BaseModel],
    strategies: dict[str, st.SearchStrategy[Any]],
    optional: set[str],
    extra: str | None,
) -> BaseModel:
    data: dict[str, Any] = {}
    for name, values in strategies.items():
        if name in optional and draw(st.booleans()):
            continue  # left unset: exercises exclude_unset
        data[name] = draw(values)
    if extra == "allow":
        for key in draw(st.lists(st.sampled_from(["x_extra", "note", "n2"]), unique=True)):
            data[key] = draw(json_leaves)
    how = draw(st.sampled_from(["validated", "validated", "constructed"]))
    if how == "constructed":  # no validator ran: FastAPI's response validation runs them
        instance = model.model_construct(**data)
    else:
        try:
            instance = model.model_validate(data)
        except ValidationError:
            reject()  # a generated validator rejects these values
    return assign_unvalidated(draw, instance) if draw(st.booleans()) else instance


def field_specs(depth: int = 1) -> st.SearchStrategy[TypeSpec]:
    """Field or return types: scalars, containers of them, models and unions of models."""
    if depth <= 0:
        return st.one_of(scalar_specs, _container_specs(scalar_specs))
    models = model_specs(depth=depth - 1)
    return st.one_of(
        scalar_specs,
        _container_specs(scalar_specs),
        models,
        _container_specs(models),
        _model_unions(models),
    )


def _model_unions(models: st.SearchStrategy[TypeSpec]) -> st.SearchStrategy[TypeSpec]:
    return st.tuples(models, models).map(
        lambda pair: TypeSpec(
            _generic(Union, pair[0].annotation, pair[1].annotation),
            pair[0].values | pair[1].values,
            False,
        )
    )


def type_specs() -> st.SearchStrategy[TypeSpec]:
    """Return types for typed endpoints: mostly generated models, also containers and scalars."""
    models = model_specs(depth=1)
    return st.one_of(models, models, field_specs(depth=1))
