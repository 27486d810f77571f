"""What an endpoint declared ``-> T`` may return: valid values and stand-ins for them.

A dict standing in for a model (with an extra ``password`` key), an instance of a subclass
carrying an extra ``password`` field, a plain object read through ``from_attributes``, or a value
that does not fit the type; ``disguised_values`` swaps model instances at any depth.
"""

from __future__ import annotations

import dataclasses
import types
from typing import Any

from hypothesis import strategies as st
from pydantic import BaseModel, Field, ValidationError, create_model

from tests.orjson_dispatch.strategies.leaves import walk_any
from tests.orjson_dispatch.strategies.specs import TypeSpec, unique_name


@dataclasses.dataclass(frozen=True)
class Returned:
    """A value a typed endpoint returns, and how it was made.

    Attributes:
        value: The returned object.
        how: ``valid``, ``dict`` (a model given as a dict with extra keys), ``subclass`` (an
            instance of a subclass with an extra ``password`` field), ``attrs`` (a plain object
            read via ``from_attributes``) or ``wrong`` (a value that does not fit the type).
    """

    value: Any
    how: str


def _subclass_instance(model: type[BaseModel], instance: BaseModel) -> BaseModel:
    sub = create_model(
        unique_name(f"{model.__name__}Sub"),
        __base__=model,
        password=(str, Field(default="hunter2", alias="pw")),
    )
    data = {name: getattr(instance, name) for name in instance.model_fields_set}
    data.update(instance.__pydantic_extra__ or {})
    try:
        result: BaseModel = sub.model_validate({**data, "pw": "s3cret"})
    except ValidationError:  # a model validator rejects these values: built without it
        result = sub.model_construct(**data, password="s3cret")
    return result


def returned_values(spec: TypeSpec) -> st.SearchStrategy[Returned]:
    """Values an endpoint declared ``-> spec.annotation`` may return."""
    valid = spec.values.map(lambda v: Returned(v, "valid"))
    wrong = st.sampled_from([object(), {"unexpected": object()}, [1, object()]]).map(
        lambda v: Returned(v, "wrong")
    )
    if spec.model is None:
        return st.one_of(valid, valid, valid, wrong)
    model = spec.model

    def as_dict(instance: BaseModel) -> Returned:
        data = {name: getattr(instance, name) for name in type(instance).model_fields}
        data.update(instance.__pydantic_extra__ or {})
        data["password"] = "s3cret"
        return Returned(data, "dict")

    def as_attrs(instance: BaseModel) -> Returned:
        obj = types.SimpleNamespace(
            **{n: getattr(instance, n) for n in type(instance).model_fields}
        )
        obj.password = "s3cret"
        return Returned(obj, "attrs")

    return st.one_of(
        valid,
        valid,
        spec.values.map(as_dict),
        spec.values.map(lambda i: Returned(_subclass_instance(model, i), "subclass")),
        spec.values.map(as_attrs),
        wrong,
    )


@st.composite  # at import: hypothesis reads a function's source each time it wraps one
def disguised_values(draw: st.DrawFn, spec: TypeSpec) -> Returned:
    """Valid values with nested model instances swapped for stand-ins at any depth.

    Each model instance inside lists, tuples, dicts and other models may become a dict of its
    fields (plus an extra ``password`` key), an instance of a subclass with a ``password`` field,
    or a plain object read through ``from_attributes``: the declared type has to validate and
    filter each one wherever it sits, as FastAPI's typed path does.
    """
    return Returned(_disguise(draw, draw(spec.values)), "nested")


def _disguise(draw: st.DrawFn, value: Any, depth: int = 0) -> Any:
    if depth > _MAX_DEPTH or not walk_any(value, lambda v: isinstance(v, BaseModel)):
        return value
    if isinstance(value, BaseModel):
        fields = {
            name: _disguise(draw, getattr(value, name), depth + 1)
            for name in value.model_fields_set
        }
        how = draw(st.sampled_from(["keep", "keep", "dict", "subclass", "attrs"]))
        if how == "keep":
            return value
        if how == "dict":
            return {**fields, **(value.__pydantic_extra__ or {}), "password": "s3cret"}
        if how == "attrs":
            return types.SimpleNamespace(**fields, password="s3cret")
        return _subclass_instance(type(value), value)
    if isinstance(value, dict):
        return {key: _disguise(draw, item, depth + 1) for key, item in value.items()}
    if isinstance(value, list):
        return [_disguise(draw, item, depth + 1) for item in value]
    if isinstance(value, tuple):
        return tuple(_disguise(draw, item, depth + 1) for item in value)
    return value


# Models nested deeper than this (under Any, in deep_values) stay as they are: a recursive walk
# would exceed Python's recursion limit.
_MAX_DEPTH = 50
