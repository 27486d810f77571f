"""orjson option handling shared by `dumps` and `dispatch`."""

from __future__ import annotations

import orjson

__all__ = ["FORMAT_OPTIONS", "MODEL_OPTION", "UNTYPED_OPTION", "check_format_option"]

# Options every call inside a model or a typed response uses; none of them is the caller's choice:
# - OPT_SERIALIZE_NUMPY: numpy arrays and scalars become JSON arrays and numbers (FastAPI answers
#   500 for them; this is one of the documented differences).
# - OPT_PASSTHROUGH_DATETIME and OPT_PASSTHROUGH_DATACLASS: orjson's own RFC 3339 and dataclass
#   output differs from both FastAPI's `isoformat()`/`asdict()` and pydantic's formats, so these
#   values are handed to our `default` callback, which applies the exact rule of each path.
# Non-str dict keys are refused there on purpose: pydantic writes a None key as "None" and a
# datetime key with "Z", orjson as "null" and "+00:00", so such a dict takes pydantic's path.
MODEL_OPTION = (
    orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
)
# Values returned without a declared type use the same options: FastAPI's `json.dumps` writes a
# float key as repr() does ("1e-07") and orjson does not ("1e-7"), so a dict with non-str keys is
# refused by the fast path and its keys are converted exactly by `_jsonable.to_jsonable`.
UNTYPED_OPTION = MODEL_OPTION

# Options that change only the layout of the JSON text, never its value. Every other orjson
# option (OPT_UTC_Z, OPT_STRICT_INTEGER, OPT_NAIVE_UTC, ...) would make the body differ from what
# FastAPI sends, so it is refused.
FORMAT_OPTIONS = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE

_OPTION_NAMES = {
    value: name
    for name, value in vars(orjson).items()
    if name.startswith("OPT_") and isinstance(value, int)
}


def check_format_option(option: int | None, where: str) -> int:
    """Return `option` as an int after checking that it only changes the JSON layout.

    Args:
        option: `None` or a bitwise OR of orjson options.
        where: What the option was given to, for the error message.

    Raises:
        TypeError: `option` is not an int, or it holds an option other than `OPT_INDENT_2`,
            `OPT_SORT_KEYS` and `OPT_APPEND_NEWLINE`.
    """
    if option is None:
        return 0
    if not isinstance(option, int) or isinstance(option, bool):
        msg = f"{where}: option must be an int made of orjson.OPT_* flags, not {option!r}"
        raise TypeError(msg)
    refused = option & ~FORMAT_OPTIONS
    if refused:
        names = sorted(_OPTION_NAMES.get(bit, hex(bit)) for bit in _bits(refused) if bit & refused)
        msg = (
            f"{where}: option {' | '.join(f'orjson.{n}' for n in names)} would change the JSON "
            "that FastAPI sends; only orjson.OPT_INDENT_2, orjson.OPT_SORT_KEYS and "
            "orjson.OPT_APPEND_NEWLINE are accepted"
        )
        raise TypeError(msg)
    return option


def _bits(value: int) -> list[int]:
    return [1 << shift for shift in range(value.bit_length()) if value >> shift & 1]
