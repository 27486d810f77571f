"""The wire form of one stream item: a JSON Lines line, or a Server-Sent Event.

FastAPI (0.134 JSON Lines, 0.135 Server-Sent Events) writes each item of a generator endpoint
as one JSON document and a newline, or as one `data:` event (`ServerSentEvent` items give their
own fields). The frames here are the same bytes, the JSON written by orjson (each frame
copies the item's JSON once), but for one deliberate divergence:

1. An untyped item (no declared item type), and the `data` of a `ServerSentEvent` that is not
   a model, are written compact and in UTF-8, as FastAPI writes typed items; FastAPI writes
   them with `json.dumps` (a space after `:` and `,`, non-ASCII characters escaped). The
   reason: one writer for every item; the values are the same, parsed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from orjson_dispatch import _fastapi
from orjson_dispatch._options import DEFAULTS
from orjson_dispatch._untyped import encode_untyped

__all__ = ["EVENT_STREAM", "JSON_LINES", "event_frame", "json_line_frame", "server_sent_event"]

JSON_LINES = "application/jsonl"
"""The media type of JSON Lines streams, as FastAPI sends it."""
EVENT_STREAM = "text/event-stream"
"""The media type of Server-Sent Events streams."""


def json_line_frame(encode: Callable[[Any], bytes]) -> Callable[[Any], bytes]:
    """Return the JSON Lines frame of an item: its JSON document and a newline."""
    return lambda item: encode(item) + b"\n"  # one copy of the JSON


def event_frame(encode: Callable[[Any], bytes]) -> Callable[[Any], bytes]:
    """Return the Server-Sent Events frame of an item.

    Args:
        encode: Returns the JSON of a plain item, sent as the event's `data:` line; a FastAPI
            `ServerSentEvent` item gives its own fields.
    """
    event_class = _fastapi.server_sent_event_class()
    # The class of the last item that was not a `ServerSentEvent`: the items of a stream are
    # mostly of one class, and an `isinstance` of a pydantic class (an ABCMeta) costs a
    # Python call, 200 ns (a frame of a chat-completion chunk costs 500 ns with it).
    plain: type | None = None

    def frame(item: Any) -> bytes:
        nonlocal plain
        if type(item) is not plain:
            if event_class is not None and isinstance(item, event_class):
                return server_sent_event(item)
            plain = type(item)
        # A JSON document holds no line break: it is the one `data:` line of its event.
        return b"".join((b"data: ", encode(item), b"\n\n"))  # one copy of the JSON

    return frame


def server_sent_event(item: Any) -> bytes:
    """Return the wire form of a FastAPI `ServerSentEvent` item.

    As FastAPI writes it: `raw_data` as it is, `data` as JSON (a model's `model_dump_json()`,
    anything else untyped), with its `event`, `id`, `retry` and `comment` lines, never validated
    against the stream's item type.
    """
    data = item.data
    if item.raw_data is not None:
        text: str | None = item.raw_data
    elif data is None:
        text = None
    elif hasattr(data, "model_dump_json"):
        text = data.model_dump_json()
    else:
        text = encode_untyped(data, DEFAULTS).decode()
    return _fastapi.format_sse_event(
        data_str=text, event=item.event, id=item.id, retry=item.retry, comment=item.comment
    )
