"""The ``openai`` and ``anthropic`` SDKs' root types, sampled, and values of them drawn from
their fields.

``ROOT_TYPES`` are the pydantic models of every public module of ``openai.types`` and
``anthropic.types`` (not the ``*_param``/``*_params`` modules, which hold the requests'
TypedDicts; not generic classes) that no other model of the two packages has as a field's type:
what a server sends whole (responses, stream events, webhook payloads, the items of list pages).
Every other model is a part of one of them, reached when its root is drawn; the roots are the
classes an endpoint declares or returns. ``sampled_roots(count)`` takes a deterministic spread
of them, the same in every run (the classes whose qualified names hash first, which changes
only by the classes an SDK release adds or removes), with the reference shapes servers answer
most (``REFERENCE_TYPES``: chat completions and their chunks, responses, messages).

``wire_data(cls)`` draws the JSON a server sends for ``cls``, from its fields' annotations:
required fields always, optional ones now and then (all left out below ``MAX_DEPTH`` models, so
that recursive types end), each union member, literals, lists and dicts of up to two items,
integers beyond 64 bits, ints where floats are declared (``1`` for ``1.0``, and ``2**53 + 1``,
which no float holds), dates and times as RFC 3339 strings, JSON values for ``object``, and
extra fields beside the declared ones (the SDKs' models allow them: servers add token ids).
``mutated(model)`` then changes a built value in the ways a type checker accepts and
validation would not produce.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import importlib
import pkgutil
import types
import typing
from functools import cache
from typing import Annotated, Any, Literal, TypeGuard, TypeVar, Union

from anthropic.types import Message, RawMessageStartEvent
from hypothesis import strategies as st
from openai.types import Completion, CreateEmbeddingResponse
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.responses import Response, ResponseCompletedEvent
from pydantic import BaseModel

from tests.orjson_dispatch.strategies.leaves import Kind, Tag, big_ints, finite_floats
from tests.orjson_dispatch.strategies.sdk import EXTRAS
from tests.orjson_dispatch.strategies.unvalidated import assign_unvalidated

SDK_PACKAGES = ("openai.types", "anthropic.types")
#: Models this many levels down hold only their required fields, Optional fields None, lists
#: and dicts nothing: the SDKs' recursive types (JSON schemas, nested content) end there.
MAX_DEPTH = 3


def _modules(package_name: str) -> list[types.ModuleType]:
    package = importlib.import_module(package_name)
    names = [info.name for info in pkgutil.walk_packages(package.__path__, f"{package_name}.")]
    return [
        importlib.import_module(name)
        for name in sorted(names)
        if not any(part.startswith("_") for part in name.split("."))
        and not name.endswith(("_param", "_params"))
    ]


def _is_model(value: object) -> TypeGuard[type[BaseModel]]:
    """Whether ``value`` is a pydantic model class, by its MRO: before pydantic 2.10,
    ``issubclass(cls, BaseModel)`` of a class that is none walks every subclass of BaseModel
    (ABCMeta), thousands once the SDKs are imported (25 s of CPU on pydantic 2.7 here)."""
    return isinstance(value, type) and BaseModel in value.__mro__


def _models() -> list[type[BaseModel]]:
    """Every public, non-generic pydantic model defined in the SDKs' ``types`` packages."""
    return [
        value
        for package in SDK_PACKAGES
        for module in _modules(package)
        for name, value in sorted(vars(module).items())
        if _is_model(value)
        and value.__module__ == module.__name__
        and not name.startswith("_")
        and not value.__pydantic_generic_metadata__["parameters"]
    ]


def _referenced(annotation: Any, found: set[type[BaseModel]]) -> None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        found.add(annotation)
    for argument in typing.get_args(annotation):
        _referenced(argument, found)


def _roots(models: list[type[BaseModel]]) -> list[type[BaseModel]]:
    referenced: set[type[BaseModel]] = set()
    for model in models:
        for field in model.model_fields.values():
            found: set[type[BaseModel]] = set()
            _referenced(field.annotation, found)
            referenced |= found - {model}
    return [model for model in models if model not in referenced]


def qualified_name(cls: type) -> str:
    """``cls``'s module and name: ``openai.types.chat.chat_completion.ChatCompletion``."""
    return f"{cls.__module__}.{cls.__qualname__}"


ROOT_TYPES = _roots(_models())


#: The reference shapes, always sampled: the corpus's types (``bodies.sdk_corpus``; ``Response``
#: and ``Message`` are no roots, being fields of the stream events that end with them) and the
#: other bodies model servers answer most.
REFERENCE_TYPES: tuple[type[BaseModel], ...] = (
    ChatCompletion,
    ChatCompletionChunk,
    Completion,
    CreateEmbeddingResponse,
    Response,
    ResponseCompletedEvent,
    Message,
    RawMessageStartEvent,
)


def sampled_roots(count: int) -> list[type[BaseModel]]:
    """``REFERENCE_TYPES`` and ``count`` of the other ``ROOT_TYPES``: those whose qualified names
    hash first (sha256); sorted by qualified name."""
    others = [cls for cls in ROOT_TYPES if cls not in REFERENCE_TYPES]
    others.sort(key=lambda cls: hashlib.sha256(qualified_name(cls).encode()).hexdigest())
    return sorted([*REFERENCE_TYPES, *others[:count]], key=qualified_name)


# --- wire data -----------------------------------------------------------------------------------

#: Text as servers send it (no lone surrogates, which no JSON body holds); keys FastAPI's
#: untyped path drops (``_sa`` prefix) among dict keys.
_texts = st.one_of(st.text(max_size=8), st.sampled_from(["", "é\u2028\x00", "\U0001f600", '"\\/']))
_keys = st.one_of(st.text(max_size=4), st.sampled_from(["_sa_instance_state", "id", "é"]))
_json = st.recursive(
    st.none() | st.booleans() | big_ints | finite_floats | _texts,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(_keys, inner, max_size=2),
    max_leaves=4,
)
_offsets = st.sampled_from([None, dt.timezone.utc, dt.timezone(dt.timedelta(hours=-7, minutes=30))])
_LEAVES: dict[Any, st.SearchStrategy[Any]] = {
    str: _texts,
    int: big_ints,
    # A server's 1 for 1.0, and integers no float holds exactly, which the SDKs' construct
    # leaves ints (it converts the others).
    float: st.one_of(finite_floats, st.integers(-3, 3), st.integers(2**53 + 1, 2**70)),
    bool: st.booleans(),
    dt.datetime: st.datetimes(timezones=_offsets).map(dt.datetime.isoformat),
    dt.date: st.dates().map(dt.date.isoformat),
    object: _json,
    Any: _json,
}


def wire_data(cls: type[BaseModel]) -> st.SearchStrategy[dict[str, Any]]:
    """The JSON a server sends for ``cls`` (a dict keyed by the fields' aliases), as drawn."""
    return _model(cls, 0)


@cache
def _model(cls: type[BaseModel], depth: int) -> st.SearchStrategy[dict[str, Any]]:
    if depth > MAX_DEPTH + 4:
        raise TypeError(f"{qualified_name(cls)} requires itself: no finite value")
    required: dict[str, st.SearchStrategy[Any]] = {}
    optional: dict[str, st.SearchStrategy[Any]] = {}
    for name, field in cls.model_fields.items():
        fields = required if field.is_required() else optional
        annotation: Any = field.annotation
        fields[field.alias or name] = _value(annotation, depth + 1)
    declared = required.keys() | optional.keys()
    extras = EXTRAS.map(lambda extra: {k: v for k, v in extra.items() if k not in declared})
    return st.builds(
        lambda data, extra: {**data, **extra},
        st.fixed_dictionaries(required, optional={} if depth >= MAX_DEPTH else optional),
        extras if depth <= 1 else st.just({}),
    )


@cache
def _value(annotation: Any, depth: int) -> st.SearchStrategy[Any]:
    origin = typing.get_origin(annotation)
    arguments = typing.get_args(annotation)
    deep = depth >= MAX_DEPTH
    if origin is Annotated:
        return _value(arguments[0], depth)
    if origin is Literal:
        return st.sampled_from(arguments)
    if origin in (Union, types.UnionType):
        if deep and type(None) in arguments:
            return st.none()
        return st.one_of([_value(member, depth) for member in arguments])
    if origin is list:
        return st.lists(_value(arguments[0], depth), max_size=0 if deep else 2)
    if origin is dict:
        return st.dictionaries(_keys, _value(arguments[1], depth), max_size=0 if deep else 2)
    if annotation is type(None):
        return st.none()
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _model(annotation, depth)
    if isinstance(annotation, TypeVar):
        return _json
    return _LEAVES[annotation]


# --- mutations -----------------------------------------------------------------------------------


def models_in(value: Any) -> list[BaseModel]:
    """The models in ``value``: itself and those its fields hold, directly or in lists/dicts."""
    found: list[BaseModel] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, BaseModel):
            found.append(item)
            stack.extend(item.__dict__.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
    return found


def _optional(annotation: Any) -> bool:
    return typing.get_origin(annotation) in (Union, types.UnionType) and type(None) in (
        typing.get_args(annotation)
    )


def _list_of(annotation: Any) -> Any:
    """The item type of a ``List[X]`` or ``Optional[List[X]]`` annotation, else ``None``."""
    if _optional(annotation):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        annotation = members[0] if len(members) == 1 else None
    return typing.get_args(annotation)[0] if typing.get_origin(annotation) is list else None


#: What a type checker accepts as an item of a ``List[X]`` that validation would not produce.
_ITEM_STANDINS: dict[Any, st.SearchStrategy[Any]] = {
    float: st.one_of(st.integers(-3, 3), st.booleans()),
    int: st.booleans(),
    str: st.sampled_from([Tag("t"), *Kind]),
}


@st.composite
def mutated(draw: st.DrawFn, value: BaseModel) -> BaseModel:
    """``value`` with some of its models' fields changed without validation, as a type checker
    accepts: ``unvalidated.assign_unvalidated``'s stand-ins (an int in a ``float`` field, a bool
    in an ``int`` field, a str subclass or str enum in a ``str`` field), ``None`` in an
    ``Optional`` field, an item appended to a list field (an int to a ``List[float]``, a bool to
    a ``List[int]``, a str enum to a ``List[str]``, one of its own items to any other)."""
    for model in models_in(value):
        assign_unvalidated(draw, model)
        for name, field in type(model).model_fields.items():
            held = model.__dict__.get(name)
            choice = draw(st.integers(0, 5))
            if choice == 0 and _optional(field.annotation):
                setattr(model, name, None)
            elif choice == 1 and isinstance(held, list) and _list_of(field.annotation):
                standins = _ITEM_STANDINS.get(_list_of(field.annotation))
                if standins is not None:
                    held.append(draw(standins))
                elif held:
                    held.append(draw(st.sampled_from(held)))
    return value
