"""FastAPI and Starlette endpoints that return models or dicts, answered at orjson speed.

`dispatch` wraps an endpoint so that what it returns is answered with a finished Response
serialized by orjson, with every semantic of FastAPI's own handling of returned data; `dumps` is
the same conversion on its own.
"""

from orjson_dispatch._dispatch import dispatch
from orjson_dispatch._dumps import dumps

__all__ = ["__version__", "dispatch", "dumps"]
__version__ = "0.1.0"
