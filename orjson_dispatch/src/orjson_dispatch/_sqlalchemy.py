"""FastAPI's `_sa` rule: `jsonable_encoder` drops every dict key beginning with `_sa`.

SQLAlchemy keeps an instance's state under `_sa_instance_state`; FastAPI's untyped path
(`jsonable_encoder(sqlalchemy_safe=True)`) drops such keys at any depth. Such a key can be
anywhere a dict is: extra fields, `dict` and `Any` values, what pydantic converts, and a dict
held where a model is declared (given to `model_construct`), which orjson writes as it is. So
every body the untyped path writes is searched once (`may_hold_sqlalchemy_key`); where a key may
be there, the value is written by the exact path, which drops it (`is_sqlalchemy_key`).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["is_sqlalchemy_key", "may_hold_sqlalchemy_key"]


def is_sqlalchemy_key(key: Any) -> bool:
    """Tell whether `jsonable_encoder(sqlalchemy_safe=True)` drops this dict key."""
    return isinstance(key, str) and key.startswith("_sa")


def may_hold_sqlalchemy_key(body: bytes) -> bool:
    """Tell whether a JSON document may hold a key that `jsonable_encoder` would have dropped.

    FastAPI drops every dict key that begins with `_sa` (SQLAlchemy's instance state). Looking
    for `"_sa` in the encoded body costs far less than walking the value; a string value that
    begins with `_sa` is a false alarm that only sends the value down the exact path.
    """
    # A regular expression scans about 3.5 GB/s whatever the text. Jumping from one "_" to the
    # next is memchr, faster still, but costs a Python step (~0.2 us) per underscore: it is
    # worth it while underscores are sparse (keys around long arrays of numbers). Walk at most
    # as many underscores as the regular expression would cost, then let it scan the rest.
    steps = len(body) // _BYTES_PER_STEP
    if not steps:  # a small body (a stream's chunk): one search in C, nothing to set up
        return b'"_sa' in body
    find = body.find
    position = find(b"_")
    for _ in range(steps):
        if position == -1:
            return False
        if body[position - 1 : position] == b'"' and body[position + 1 : position + 3] == b"sa":
            return True
        position = find(b"_", position + 1)
    if position == -1:
        return False
    # `_sa`, not `"_sa`: the scan for the first byte of the pattern runs in C, and quotes are
    # dense in text where underscores are not; the rare `_sa` inside a word is looked past.
    for match in _SQLALCHEMY_KEY.finditer(body, position):
        if body[match.start() - 1 : match.start()] == b'"':
            return True
    return False


# How many bytes the regular expression scans in the time of one Python step of the walk.
_BYTES_PER_STEP = 700
_SQLALCHEMY_KEY = re.compile(rb"_sa")
