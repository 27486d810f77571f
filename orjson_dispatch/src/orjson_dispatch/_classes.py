"""Class tables: orjson's own loop writes the models, one `default` call per model.

A class table holds, for every model class reachable from a declared type (or from one class,
for a model written as its own class), the function that returns what orjson writes for an
instance (`entry`): the instance's `__dict__` itself where its keys are the class's fields and
nothing is renamed, left out, converted or extra; else a dict built from it (aliases, `exclude`d
fields, extra fields, the fields pydantic converts); else pydantic's conversion of the whole
model. orjson calls the table's `default` for each model it meets, and for the few other values
it does not write itself (datetimes, decimals, bytes: pydantic's type inference). A table made
for `exclude_unset` or `exclude_none` leaves fields out of each model as pydantic does
(`_leaving`).

A model of a class the table does not hold is written as the nearest class of its MRO that the
table holds (a subclass instance where its parent is declared, as pydantic writes it), or else
as its own class (a model held at an `Any` position or in extra fields), as pydantic's type
inference writes it. Where a table holds both a class and one of its subclasses, the fields that
declare the parent are converted by pydantic, which alone knows which class a position declares.
Where the table's classes also hold positions that take any value (`Any`, `dict` values, extra
fields), a subclass instance could be meant as either class: the value is written by pydantic
(`AmbiguousClassError`), unless user code already ran for it, when it is written as the
declared class, never with more fields than pydantic writes.

Tables of one class are kept on that class (`_kept`).
"""

from __future__ import annotations

import datetime
import decimal
import enum
import functools
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, NamedTuple

import orjson
from pydantic import BaseModel
from pydantic_core import PydanticSerializationError, to_json, to_jsonable_python

from orjson_dispatch._kept import kept_on
from orjson_dispatch._leaving import held_entry, leaving
from orjson_dispatch._options import NOTHING_LEFT_OUT, LeftOut, encode_option
from orjson_dispatch._plans import IncompleteError, NotPlainError, Plan, plan, whole
from orjson_dispatch._results import (
    AmbiguousClassError,
    ContextualError,
    KeepResultsError,
    RestartError,
    exact,
    kept,
    numpy_as_orjson,
    once,
    restart,
    rewrite,
    without_nan,
    write,
)

__all__ = ["Table", "class_table", "json_writer", "model_python", "table"]

Entry = Callable[[Any], Any]
"""Returns what orjson writes for an instance: a dict, or pydantic's conversion of it."""


class Table(NamedTuple):
    """The models of a declared type, each class with its entry.

    Attributes:
        default: orjson's callback.
        user_code: Some entry runs user code (a conversion by pydantic).
        entries: Each class's entry.
    """

    default: Callable[[Any], Any]
    user_code: bool
    entries: dict[type[BaseModel], Entry]


def table(
    roots: Iterable[type[BaseModel]],
    by_alias: bool,
    *,
    untyped: bool = False,
    declared: bool = True,
    left_out: LeftOut = NOTHING_LEFT_OUT,
) -> Table:
    """Return the table of `roots` and of every class their fields declare.

    Args:
        roots: The model classes a declared type holds at its plain positions.
        by_alias: Write fields under their serialization alias.
        untyped: FastAPI's untyped path: a model is written as its `model_dump` dict, a key
            that an extra field repeats once (pydantic's JSON writes it twice).
        declared: The roots are declared (a value may be of a subclass), not the values' own
            classes.
        left_out: The fields left out of every model, as pydantic leaves them out.

    Raises:
        ContextualError: A class's JSON depends on where it is written.
        NotPlainError: `declared`, and a root class has a subclass in the table: pydantic
            alone knows which of them a value is written as.
    """
    roots = frozenset(roots)
    plans: dict[type[BaseModel], Plan] = {}
    pending = list(roots)
    while pending:
        cls = pending.pop()
        if cls not in plans:
            try:
                plans[cls] = plan(cls, by_alias, left_out)
            except IncompleteError:  # pydantic writes it in this table (its entry not kept)
                plans[cls] = whole(cls, by_alias, left_out, "not fully defined")
            pending.extend(plans[cls].models)
    # A class's MRO, not `issubclass`, which below pydantic 2.10 walks BaseModel's subclasses.
    parents = {base for cls in plans for base in cls.__mro__[1:] if base in plans}
    if declared and not parents.isdisjoint(roots):
        raise NotPlainError(f"{sorted(c.__qualname__ for c in parents)} have subclasses in it")
    entries: dict[type[BaseModel], Entry] = {}
    # The classes whose instances are usually written as their `__dict__`, with its size:
    # tested first, inline (a Python call less per model). Where fields are left out, their
    # entry tests it (`_entry`).
    sizes: dict[type[BaseModel], int] = {}
    user_code = False
    for cls, planned in plans.items():
        by_parent = frozenset(n for n, models in planned.declared.items() if models & parents)
        found = planned.converting(by_parent) if by_parent else planned
        if by_parent:
            entries[cls] = _entry(found, untyped)
        else:
            entries[cls] = _class_entry(found, untyped)
        if found.as_held and not found.cached and left_out == NOTHING_LEFT_OUT:
            sizes[cls] = len(found.fields)
        user_code = user_code or bool(found.whole or found.converted)
    ambiguous = any(found.extras or found.free for found in plans.values())
    stranger = _stranger(entries, by_alias, untyped, ambiguous, left_out)
    find, size_of = entries.get, sizes.get

    def default(value: Any) -> Any:
        cls = type(value)
        size = size_of(cls)
        # As many keys as fields, as validation and `construct` leave `__dict__`: the instance's
        # own dict. Comparing the keys themselves would cost a model's time again; a key is put
        # into `__dict__` beside the fields only behind pydantic's back, or by a
        # `cached_property` (such classes compare their keys, in their entry). So an instance
        # missing a field and holding such a key is written as held (the docs' one exception).
        # Extra fields are a model's attribute, None where they are not allowed.
        if size is not None:
            held = value.__dict__
            if len(held) == size and not value.__pydantic_extra__:
                return held
        entry = find(cls)
        return stranger(value) if entry is None else entry(value)

    return Table(default, user_code, entries)


def class_table(
    cls: type[BaseModel],
    by_alias: bool,
    *,
    untyped: bool = False,
    left_out: LeftOut = NOTHING_LEFT_OUT,
) -> Table | None:
    """Return the table writing instances of `cls` as their own class, kept on `cls`.

    None where pydantic writes them whole (`ser_json_*` settings).
    """
    key = ("table", by_alias, untyped, left_out)
    kept_here = kept_on(cls)
    if key not in kept_here:
        try:
            kept_here[key] = table(
                (cls,), by_alias, untyped=untyped, declared=False, left_out=left_out
            )
        except ContextualError:
            kept_here[key] = None
    found: Table | None = kept_here[key]
    return found


def _class_entry(found: Plan, untyped: bool) -> Entry:
    key = ("entry", found.by_alias, untyped, found.left_out)
    kept_here = kept_on(found.cls)
    entry: Entry | None = kept_here.get(key)
    if entry is None:
        entry = _entry(found, untyped)
        if found.whole != "not fully defined":
            kept_here[key] = entry
    return entry


def _entry(found: Plan, untyped: bool) -> Entry:
    """Return the entry of the instances of `found.cls` (see the module docstring)."""
    whole_model = _whole_model(found.cls, found.by_alias, found.left_out)
    # An extra field holding a written field's key (the SDKs' `construct` keeps an alias's key
    # as an extra too): pydantic's JSON writer writes both keys, its conversion to a dict one.
    repeated = whole_model if untyped else _whole_json(found.cls, found.by_alias, found.left_out)
    if found.whole:
        return whole_model
    fields, size = dict.fromkeys(found.fields).keys(), len(found.fields)
    # Exactly the fields: counted as `default` counts them (see its comment) for an instance of
    # the class itself, else compared: a subclass instance holds its own fields too, a
    # `cached_property` its value.
    counted = None if found.cached else found.cls
    keys = found.keys
    converted = [(name, keys[name], convert) for name, convert in found.converted.items()]
    extras = found.extras
    # Every field written under its name: a `__dict__` holding exactly the fields is copied, or
    # written itself where no field is converted and no extra field is set; else renamed.
    own_names = found.own_names
    renamed = None if own_names else _renaming(keys)
    leave_out, nones = leaving(found.left_out), found.left_out.none

    def entry(model: Any) -> Any:
        held = model.__dict__
        extra = model.__pydantic_extra__ if extras else None
        if leave_out is not None:
            held = leave_out(model, held)
            if nones and extra:
                extra = {key: value for key, value in extra.items() if value is not None}
        exactly = len(held) == size if type(model) is counted else held.keys() == fields
        out: dict[str, Any] | None
        if exactly and own_names:
            if not converted and not extra:
                return held
            out = dict(held)
        else:
            try:
                out = renamed(held) if renamed is not None and exactly else None
            except KeyError:  # a field missing, a key put in beside the fields
                out = None
            if out is None:
                out = {keys[name]: value for name, value in held.items() if name in keys}
        for name, key, convert in converted:
            if name in held:
                out[key] = once(model, name, convert, held[name])
        if extra:
            # Iterating over the extra fields, the fewer (`isdisjoint` iterates over its
            # argument unless it is a set).
            if not out.keys().isdisjoint(extra):
                return repeated(model)
            out.update(extra)
        return out

    if leave_out is None or not found.as_held or found.cached:
        return entry
    return held_entry(found.fields, found.left_out, entry)


def _renaming(keys: Mapping[str, str]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """Return a function taking a `__dict__` to the fields `keys` names, each under its key.

    In the order of `keys`, the fields' order (in which validation and `construct` fill
    `__dict__`); it raises KeyError where a field is missing. A dict display compiled for the
    class: a comprehension over `__dict__` takes twice as long.
    """
    # Every name and key is written as a str literal (str's own `repr`, which a subclass of str
    # does not change): no text of the class becomes code.
    literal = str.__repr__
    items = ", ".join(f"{literal(key)}: held[{literal(name)}]" for name, key in keys.items())
    renamed: Callable[[dict[str, Any]], dict[str, Any]] = eval(f"lambda held: {{{items}}}")
    return renamed


def _stranger(
    entries: dict[type[BaseModel], Entry],
    by_alias: bool,
    untyped: bool,
    ambiguous: bool,
    left_out: LeftOut,
) -> Callable[[Any], Any]:
    """Return the function writing a value the table has no entry for (see the module docstring).

    pydantic's type inference takes no `exclude_unset`: where fields not set are left out
    (`left_out.unset`), a container it would write as a list is a list whose items the table
    writes, and any other (a dict subclass, a dataclass) raises `RestartError`: pydantic's
    serializer of the declared type writes the whole value.
    """
    inferred = functools.partial(
        to_jsonable_python, by_alias=by_alias, exclude_none=left_out.none, fallback=numpy_as_orjson
    )

    def write_stranger(value: Any) -> Any:
        if isinstance(value, BaseModel):
            for cls in type(value).__mro__[1:]:
                entry = entries.get(cls)
                if entry is not None:
                    if ambiguous and not kept():
                        raise AmbiguousClassError(type(value).__qualname__)
                    return entry(value)
            own = class_table(type(value), by_alias, untyped=untyped, left_out=left_out)
            if own is None:
                raise ContextualError(type(value).__qualname__)
            if own.user_code and not kept():
                raise KeepResultsError(type(value).__qualname__)
            return orjson.Fragment(write(value, own.default, encode_option(), own.user_code))
        if isinstance(value, _SCALARS):
            return inferred(value)
        if isinstance(value, Iterator):
            # Read once, what it gave kept for the call: orjson's second pass (`rewrite`) reads
            # that. Under `exclude_unset`, as a list whose items the table writes.
            if not kept():
                raise KeepResultsError(type(value).__qualname__)
            return once(value, "items", list if left_out.unset else inferred, value)
        if left_out.unset:
            if isinstance(value, (set, frozenset, list, tuple)):
                return list(value)
            raise RestartError(type(value).__qualname__)
        try:
            # A set, a dict subclass...: pydantic's own JSON, as `dump_json` writes it (NaN and
            # infinities as null): a non-finite float key is written "None", twice in a dict
            # with two such keys, where `to_jsonable_python` has "nan"/"inf"/"-inf".
            body = to_json(
                value,
                by_alias=by_alias,
                exclude_none=left_out.none,
                inf_nan_mode="null",
                fallback=numpy_as_orjson,
            )
        except PydanticSerializationError:  # a lone surrogate: orjson refuses it, and decides
            return inferred(value)
        return orjson.Fragment(body)

    return write_stranger


# What pydantic's type inference writes as one JSON scalar (an enum: its value), and a str, int
# or float subclass that orjson hands over (OPT_PASSTHROUGH_SUBCLASS).
_SCALARS = (
    datetime.date,
    datetime.time,
    datetime.timedelta,
    decimal.Decimal,
    uuid.UUID,
    bytes,
    enum.Enum,
    str,
    int,
    float,
)


def json_writer(cls: type[BaseModel], by_alias: bool) -> Callable[[BaseModel], bytes]:
    """Return the function writing an instance of exactly `cls` as `jsonable_encoder` has it.

    The JSON of `model.model_dump(mode="json", by_alias=...)`, NaN written null, with what a
    call would otherwise look up on the class bound once (the caller keeps it). The function
    raises `KeepResultsError` where the class runs user code and results are not kept:
    FastAPI's untyped path keeps them for the whole call, which may write the value again
    (`_untyped`).
    """
    own = class_table(cls, by_alias, untyped=True)
    if own is None:
        return functools.partial(_pydantic_json, by_alias=by_alias)
    # The options read once: see `_typed.TypedEncoder._writer`.
    default, user_code, option = own.default, own.user_code, encode_option()

    def write_json(model: BaseModel) -> bytes:
        if user_code and not kept():
            raise KeepResultsError(cls.__qualname__)
        try:
            try:
                return orjson.dumps(model, default=default, option=option)
            except TypeError as error:
                return rewrite(model, default, option, error)
        except TypeError as error:
            if not isinstance(restart(error), (AmbiguousClassError, type(None))):
                raise
        return _pydantic_json(model, by_alias=by_alias)

    return write_json


def model_python(model: BaseModel, *, by_alias: bool) -> Any:
    """Return what `model.model_dump(mode="json", by_alias=...)` holds, for orjson to write.

    Integers beyond 64 bits are Fragments of their digits.

    Raises:
        KeepResultsError: Its class runs user code and results are not kept.
    """
    own = class_table(type(model), by_alias, untyped=True)
    if own is not None:
        if own.user_code and not kept():
            raise KeepResultsError(type(model).__qualname__)
        try:
            return exact(model, own.default)
        except TypeError as error:
            # Two keys written alike (pydantic's dict keeps the last), an ambiguous class.
            if not isinstance(restart(error), (AmbiguousClassError, type(None))):
                raise
    return _whole_model(type(model), by_alias)(model)


def _pydantic_json(model: BaseModel, *, by_alias: bool) -> bytes:
    """Return pydantic's JSON of `model`, NaN and infinities written as null (strict JSON).

    The body is looked at, not the class's schema: a model held by a field declared `Any` has
    settings of its own (`ser_json_inf_nan="constants"`), which some pydantic releases apply.
    """
    body = model.__pydantic_serializer__.to_json(model, by_alias=by_alias, fallback=numpy_as_orjson)
    return without_nan(body)


def _whole_model(
    cls: type[BaseModel], by_alias: bool, left_out: LeftOut = NOTHING_LEFT_OUT
) -> Entry:
    """Return pydantic's conversion of instances written as `cls`, in JSON mode, run once.

    `cls`'s own serializer: an instance of a subclass is written as `cls` (pydantic's
    serializer of the subclass would write its fields too). Run once per response (`once`): it
    runs the model's user code.
    """

    def convert(model: Any) -> Any:
        # Read at each call: a class not fully defined yet has a stand-in until it is.
        return cls.__pydantic_serializer__.to_python(
            model,
            mode="json",
            by_alias=by_alias,
            exclude_unset=left_out.unset,
            exclude_none=left_out.none,
            fallback=numpy_as_orjson,
        )

    def entry(model: Any) -> Any:
        return once(model, cls.__qualname__, convert, model)

    return entry


def _whole_json(cls: type[BaseModel], by_alias: bool, left_out: LeftOut) -> Entry:
    """Return pydantic's JSON of instances written as `cls`, as a Fragment, run once."""

    def convert(model: Any) -> bytes:
        json: bytes = cls.__pydantic_serializer__.to_json(
            model,
            by_alias=by_alias,
            exclude_unset=left_out.unset,
            exclude_none=left_out.none,
            fallback=numpy_as_orjson,
        )
        return json

    def entry(model: Any) -> Any:
        return orjson.Fragment(once(model, f"{cls.__qualname__} JSON", convert, model))

    return entry
