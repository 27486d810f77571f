"""What the installed pydantic supports, for tests that also run on the lowest versions (2.7)."""

from __future__ import annotations

from typing import Any

import pydantic
from pydantic import ConfigDict


def _writes_nan_as_strings() -> bool:
    try:
        pydantic.create_model("Probe", __config__=ConfigDict(ser_json_inf_nan="strings"))
    except Exception:  # pydantic 2.7's core rejects the value
        return False
    return True


#: pydantic 2.7, the lowest supported, has no ser_json_inf_nan="strings".
NAN_AS_STRINGS = _writes_nan_as_strings()
#: The ser_json_inf_nan modes the installed pydantic accepts.
INF_NAN_MODES: tuple[str, ...] = (
    ("null", "strings", "constants")
    if NAN_AS_STRINGS
    else (
        "null",
        "constants",
    )
)
#: Models validated by field name as well as by alias: pydantic 2.11 names it validate_by_name.
BY_NAME_AND_ALIAS: dict[str, Any] = (
    {"validate_by_name": True, "validate_by_alias": True}
    if "validate_by_name" in ConfigDict.__annotations__
    else {"populate_by_name": True}
)
NEEDS_NAN_AS_STRINGS = "this pydantic has no ser_json_inf_nan='strings'"

__all__ = ["BY_NAME_AND_ALIAS", "INF_NAN_MODES", "NAN_AS_STRINGS", "NEEDS_NAN_AS_STRINGS"]


def _fastapi_release() -> tuple[int, ...]:
    from importlib.metadata import version

    return tuple(int(part) for part in version("fastapi").split(".")[:3] if part.isdigit())


#: The installed FastAPI release, for expectations that follow FastAPI's own changes.
FASTAPI = _fastapi_release()
#: FastAPI 0.130 serializes typed values with pydantic's dump_json (NaN written null); before,
#: it rendered them with JSONResponse, whose json.dumps(allow_nan=False) answers 500.
FASTAPI_DUMPS_JSON = FASTAPI >= (0, 130)
#: FastAPI 0.140.9 passes exclude_defaults on to the values of dicts in jsonable_encoder
#: (https://github.com/fastapi/fastapi/pull/16043); before, a model inside a dict kept its
#: defaults. orjson-dispatch follows the fixed behaviour.
FASTAPI_NESTED_EXCLUDE_DEFAULTS = FASTAPI >= (0, 140, 9)
#: FastAPI 0.134 streams what generator endpoints yield (JSON Lines; 0.135 Server-Sent Events).
FASTAPI_STREAMS = FASTAPI >= (0, 134)
NEEDS_STREAMS = "FastAPI streams generator endpoints from 0.134"
