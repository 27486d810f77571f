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
    # The regular expression looks for `_sa`, not `"_sa`: it scans for the pattern's first byte
    # in C (about 3 GB/s), and quotes are dense in JSON where underscores are not; the rare
    # `_sa` inside a word is looked past. In a large body, where underscores are often sparse
    # (keys around long arrays of numbers), jumping from one `_` to the next with `find`
    # (memchr) is faster still, but costs a Python step per underscore: the walk takes at most
    # one step per `_WALKED_BYTES` of the body (a sixth of the scan's time where underscores
    # are dense), then the regular expression scans the rest.
    position = 0
    if len(body) >= _WALKED_FROM:
        find = body.find
        for _ in range(len(body) // _WALKED_BYTES):
            position = find(b"_", position) + 1
            if not position:
                return False
            if body[position - 2 : position - 1] == b'"' and body[position : position + 2] == b"sa":
                return True
    # `search`, not `finditer`: a body without `_sa` (most) costs one call, no iterator.
    match = _SQLALCHEMY_KEY.search(body, position)
    while match is not None:
        if body[match.start() - 1 : match.start()] == b'"':
            return True
        match = _SQLALCHEMY_KEY.search(body, match.end())
    return False


# The walk's budget, one step (~0.15 us) per this many bytes, and the least body it pays for
# (measured on the bodies of `bodies`: below it, the scan alone is faster on every one).
_WALKED_BYTES = 3000
_WALKED_FROM = 1 << 17
_SQLALCHEMY_KEY = re.compile(rb"_sa")
