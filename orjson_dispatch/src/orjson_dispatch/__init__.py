"""FastAPI and Starlette endpoints that return models or dicts, answered at orjson speed.

`dispatch` wraps an endpoint so that what it returns is answered with a finished Response
serialized by orjson, with every semantic of FastAPI's own handling of returned data;
`DispatchRoute` does the same for every route of a FastAPI router through FastAPI's own request
handler, generator endpoints streamed as JSON Lines or Server-Sent Events included; `dumps` is
the conversion on its own, `json_lines` and `server_sent_events` the streams for hand-built
responses (Starlette endpoints). An endpoint of a `DispatchRoute` answers JSON or a stream, as
the request asks, by returning `JSONLines(...)` or `ServerSentEvents(...)` where its return type
says so; `StreamSettings` sets the ping interval and send timeout of streams.
`dispatched_routes` tells which routes of an app are served with orjson. `DispatchRoute` parses
JSON request bodies with orjson, with `json.loads`'s values and errors; `request_json(request)` is
the same parse for Starlette endpoints and `@dispatch` users.
"""

from typing import TYPE_CHECKING

from orjson_dispatch._dispatch import dispatch
from orjson_dispatch._dumps import dumps
from orjson_dispatch._inventory import dispatched_routes
from orjson_dispatch._request_body import request_json
from orjson_dispatch._stream_settings import StreamSettings
from orjson_dispatch._streamed import JSONLines, ServerSentEvents
from orjson_dispatch._streams import json_lines, server_sent_events

if TYPE_CHECKING:  # imported on first use: it needs FastAPI, which Starlette apps do without
    from orjson_dispatch._route import DispatchRoute, use_dispatch_routes

__all__ = [
    "DispatchRoute",
    "JSONLines",
    "ServerSentEvents",
    "StreamSettings",
    "__version__",
    "dispatch",
    "dispatched_routes",
    "dumps",
    "json_lines",
    "request_json",
    "server_sent_events",
    "use_dispatch_routes",
]
__version__ = "0.1.0.dev0"


def __getattr__(name: str) -> object:
    if name in ("DispatchRoute", "use_dispatch_routes"):
        try:
            from orjson_dispatch import _route  # noqa: PLC0415
        except ModuleNotFoundError as error:
            msg = f"{name} needs FastAPI: pip install 'orjson-dispatch[fastapi]'"
            raise ImportError(msg) from error
        return getattr(_route, name)
    msg = f"module 'orjson_dispatch' has no attribute {name!r}"
    raise AttributeError(msg)
