"""Sample classes whose Python protocols disagree with what they hold.

Hand-written hostile tests found encoder bugs in each kind; the strategies draw them so that the
property tests keep looking around them:

* enums whose ``.value`` is not their str/int content (``_value_`` set in ``__new__``): FastAPI
  writes ``.value`` on the untyped path, pydantic writes the content of a str/int enum held by a
  plain ``str``/``int`` field;
* enums whose value ``json.dumps`` cannot write (a Decimal, a date, a frozenset): FastAPI's untyped
  path answers 500, ``dispatch`` encodes the value by its own rules (a deliberate difference);
* a dict whose ``keys()``/``items()`` hide or rename keys and sequences whose ``__iter__`` differs
  from their storage: FastAPI's ``jsonable_encoder`` walks ``items()`` and ``iter()``, orjson and
  pydantic read the storage;
* ``JSONResponse`` subclasses whose own ``__init__`` sets a header.
"""

from __future__ import annotations

import datetime as dt
import enum
from collections.abc import Iterator, Mapping
from decimal import Decimal
from typing import Any

from fastapi.responses import JSONResponse
from starlette.background import BackgroundTask


class Letter(str, enum.Enum):
    """A str enum whose value ("Alpha", "Beta") is not its characters ("a", "b")."""

    ALPHA = "Alpha"
    BETA = "Beta"

    def __new__(cls, value: str) -> Letter:
        member = str.__new__(cls, value[0].lower())
        member._value_ = value
        return member


class Number(int, enum.Enum):
    """An int enum whose value (100, 200) is not its integer (1, 2)."""

    HUNDRED = 100
    TWO_HUNDRED = 200

    def __new__(cls, value: int) -> Number:
        member = int.__new__(cls, value // 100)
        member._value_ = value
        return member


class Renamed(enum.Enum):
    """A plain enum whose value ("#1") is not what its definition says (1)."""

    ONE = 1
    TWO = 2

    def __new__(cls, value: int) -> Renamed:
        member = object.__new__(cls)
        member._value_ = f"#{value}"
        return member


class Price(enum.Enum):
    """An enum with a Decimal value (``json.dumps`` cannot write it)."""

    HALF = Decimal("0.5")
    WHOLE = Decimal("2")


class Day(enum.Enum):
    """An enum with a date value (``json.dumps`` cannot write it)."""

    LEAP = dt.date(2024, 2, 29)


class Bits(enum.Enum):
    """An enum with a frozenset value (``json.dumps`` cannot write it)."""

    LOW = frozenset({1, 2})


#: Enums whose value is not their content.
DISGUISED_ENUMS: tuple[type[enum.Enum], ...] = (Letter, Number, Renamed)
#: Enums whose value FastAPI's ``json.dumps`` cannot write.
UNWRITABLE_ENUMS: tuple[type[enum.Enum], ...] = (Price, Day, Bits)


def is_unwritable_enum(value: Any) -> bool:
    """Whether ``value`` is an enum member whose value ``json.dumps`` cannot write."""
    return isinstance(value, enum.Enum) and not (
        value.value is None or isinstance(value.value, (str, int, float, list, tuple, dict))
    )


class HidingDict(dict[Any, Any]):
    """A dict whose ``keys()``, ``items()`` and ``iter()`` leave out the keys starting "h"."""

    def _shown(self) -> dict[Any, Any]:
        return {k: v for k, v in dict.items(self) if not (isinstance(k, str) and k[:1] == "h")}

    def keys(self) -> Any:
        return self._shown().keys()

    def items(self) -> Any:
        return self._shown().items()

    def __iter__(self) -> Iterator[Any]:
        return iter(self._shown())


class RenamingDict(dict[Any, Any]):
    """A dict whose ``items()`` (only) renames str keys: ``"k"`` is shown as ``"k!"``."""

    def items(self) -> Any:
        return {(f"{k}!" if isinstance(k, str) else k): v for k, v in dict.items(self)}.items()


class ReversedList(list[Any]):
    """A list whose ``__iter__`` yields its items last to first."""

    def __iter__(self) -> Iterator[Any]:
        return list.__reversed__(self)


class ReversedTuple(tuple[Any, ...]):
    """A tuple whose ``__iter__`` yields its items last to first."""

    def __iter__(self) -> Iterator[Any]:
        return iter(tuple(reversed(tuple.__getitem__(self, slice(None)))))


#: The container classes above, each rebuilt from its stored items by ``stored_items``.
HOSTILE_CONTAINERS = (HidingDict, RenamingDict, ReversedList, ReversedTuple)


def stored_items(value: Any) -> Any:
    """The items ``value`` stores (pairs for a dict), whatever its own iteration shows."""
    if isinstance(value, dict):
        return list(dict.items(value))
    if isinstance(value, list):
        return list(list.__iter__(value))
    return list(tuple.__iter__(value))


class HeaderAfterInit(JSONResponse):
    """A response class whose ``__init__`` sets a header after Starlette's."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.headers["x-set-by"] = "HeaderAfterInit"


class HeaderThroughArguments(JSONResponse):
    """A response class whose own ``__init__`` signature adds a header to those it is given."""

    def __init__(
        self,
        content: Any,
        status_code: int = 200,
        headers: Mapping[str, str] | None = None,
        media_type: str | None = None,
        background: BackgroundTask | None = None,
    ) -> None:
        headers = {**(headers or {}), "x-set-by": "HeaderThroughArguments"}
        super().__init__(content, status_code, headers, media_type, background)


RESPONSE_CLASSES: tuple[type[JSONResponse], ...] = (
    JSONResponse,
    HeaderAfterInit,
    HeaderThroughArguments,
)
