"""What is kept on a model class: its tables, writers and encoders, by key.

They live in the class's own `__dict__` (never inherited), so that a class created per request
is collected with what it keeps: a registry keyed by class would keep every class alive.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

__all__ = ["Kept", "kept_for", "kept_on"]


class Kept(dict[Any, Any]):
    """What is kept on one model class (`kept_on`), by key.

    A type of its own, which no value read from a request (an extra field) can be.

    Attributes:
        cls: The class it is kept on.
    """

    __slots__ = ("cls",)

    def __init__(self, cls: type[BaseModel]) -> None:
        super().__init__()
        self.cls = cls


def kept_on(cls: type[BaseModel]) -> Kept:
    """Return what is kept on `cls` itself, never what a parent class keeps.

    Read as an attribute (the type's attribute cache: `cls.__dict__` costs four times more), and
    marked with its class, for a subclass not to read, and keep alive, its parent's.
    """
    held = getattr(cls, _KEPT, None)
    if type(held) is not Kept or held.cls is not cls:
        held = Kept(cls)
        type.__setattr__(cls, _KEPT, held)
    return held


def kept_for(value: Any, key: Any, missing: Any = None) -> Any:
    """Return what the class of `value` keeps under `key` (`kept_on`), else `missing`.

    Read through the instance: a third of the time of a read on a model class, which pydantic's
    metaclass answers through Python (`ModelMetaclass.__getattr__`). Before the class keeps
    anything, a model's read falls back to its extra fields, which no `Kept` is, or to the
    class's own `__getattr__`, whatever it returns or raises.
    """
    try:
        held = getattr(value, _KEPT, None)
    except Exception:  # a class's own `__getattr__`, before the class keeps anything
        return missing
    if type(held) is Kept and held.cls is type(value):
        return held.get(key, missing)
    return missing


_KEPT = "__orjson_dispatch__"
