"""FastAPI and Starlette endpoints that return models or dicts, answered at orjson speed.

`dispatch` wraps an endpoint so that what it returns is answered with a finished Response
serialized by orjson, with every semantic of FastAPI's own handling of returned data;
`DispatchRoute` does the same for every route of a FastAPI router through FastAPI's own request
handler; `dumps` is the conversion on its own.
"""

from orjson_dispatch._dispatch import dispatch
from orjson_dispatch._dumps import dumps

__all__ = ["DispatchRoute", "__version__", "dispatch", "dumps"]
__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    # DispatchRoute needs FastAPI, which Starlette apps do without.
    if name == "DispatchRoute":
        from orjson_dispatch._route import DispatchRoute  # noqa: PLC0415

        return DispatchRoute
    msg = f"module 'orjson_dispatch' has no attribute {name!r}"
    raise AttributeError(msg)
