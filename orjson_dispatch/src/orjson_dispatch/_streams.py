"""What a JSON Lines or Server-Sent Events stream is sent with: `build_stream` and the helpers.

`build_stream` builds every stream (`_stream_sending.Stream`): `DispatchRoute`'s, and those of
`json_lines` and `server_sent_events`, the helpers for hand-built ones. It decides what a stream
of FastAPI's shape is sent with: its frames (`_stream_frames`), its pings and its headers.

Deliberate divergences from FastAPI's streams (0.134 JSON Lines, 0.135 `EventSourceResponse`)
in what they are sent with, each for the reason given (`_stream_sending` lists those of how
they are sent, `_stream_frames` those of the frames):

1. The ping interval is set per route (`StreamSettings.ping_interval`); FastAPI's is a module
   constant, `fastapi.routing._PING_INTERVAL`, read as the default.
2. `server_sent_events(bare=True)` sends the events without pings or headers of their own;
   FastAPI always pings and sets `Cache-Control` and `X-Accel-Buffering`. A hand-built stream
   moved to the helper must keep its bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from starlette.responses import StreamingResponse

from orjson_dispatch import _fastapi
from orjson_dispatch._encoders import UNTYPED, declared_encoder
from orjson_dispatch._options import DEFAULTS
from orjson_dispatch._stream_frames import EVENT_STREAM, JSON_LINES, event_frame, json_line_frame
from orjson_dispatch._stream_sending import Stream
from orjson_dispatch._stream_settings import BUFFER_BYTES, StreamSettings

__all__ = ["build_stream", "json_lines", "server_sent_events"]


def build_stream(
    items: Any,
    encode: Callable[[Any], bytes],
    *,
    events: bool,
    settings: StreamSettings,
    status_code: int = 200,
    headers: Mapping[str, str] | None = None,
    bare: bool = False,
    media_type: str | None = None,
) -> Stream:
    """Return the JSON Lines or Server-Sent Events response of `items`, as FastAPI sends it.

    Server-Sent Events have FastAPI's pings (`settings.ping_interval`, by default FastAPI's)
    and its `Cache-Control: no-cache` and `X-Accel-Buffering: no` headers, unless `bare`.

    Args:
        items: The generator.
        encode: Returns the JSON of a plain item.
        events: Server-Sent Events (else JSON Lines).
        settings: The ping interval, send timeout and buffer.
        status_code: The response status.
        headers: Headers of the response.
        bare: The frames alone, as a hand-built `StreamingResponse` of them sends them: no
            pings, no headers of the stream's own, an exception raised alone.
        media_type: The response's media type; None: `application/jsonl` or
            `text/event-stream`.
    """
    fastapi_events = events and not bare
    response = Stream(
        items,
        event_frame(encode) if events else json_line_frame(encode),
        media_type=media_type or (EVENT_STREAM if events else JSON_LINES),
        ping=_fastapi.keepalive_comment() if fastapi_events else None,
        ping_interval=(settings.ping_interval or _fastapi.ping_interval()) if fastapi_events else 0,
        send_timeout=settings.send_timeout,
        buffer_bytes=settings.buffer_bytes,
        group_failures=fastapi_events,
        status_code=status_code,
        headers=headers,
    )
    if fastapi_events:
        response.headers["Cache-Control"] = "no-cache"
        # nginx buffers responses unless told not to.
        response.headers["X-Accel-Buffering"] = "no"
    return response


def json_lines(
    items: Any,
    *,
    response_model: Any = UNTYPED,
    status_code: int = 200,
    headers: Mapping[str, str] | None = None,
    media_type: str = JSON_LINES,
    send_timeout: float | None = None,
    buffer_bytes: int = BUFFER_BYTES,
) -> StreamingResponse:
    r"""Stream what `items` yields as JSON Lines (`application/jsonl`), as FastAPI streams it.

    For Starlette endpoints (and anywhere a response is built by hand): each item is encoded
    as `dumps` encodes it, one JSON document and a newline per item; lines ready together are
    sent in one body message. No header or line is added: the bytes are those of a hand-built
    `StreamingResponse((c.model_dump_json() + "\n" for c in chunks), media_type=...)`.

    Args:
        items: An async or sync iterable (sync ones are iterated in the threadpool).
        response_model: The declared item type: each item is validated against it (a
            `pydantic.ValidationError` ends the stream) and filtered to it.
        status_code: The response status.
        headers: Headers added to the response.
        media_type: The response's media type (`application/x-ndjson`, say).
        send_timeout: As `StreamSettings.send_timeout`; None: no limit.
        buffer_bytes: As `StreamSettings.buffer_bytes`.

    Returns:
        The streaming response.

    Raises:
        ValueError: `send_timeout` is not a positive number of seconds, or `buffer_bytes` not
            a positive number of bytes.
    """
    settings = StreamSettings(send_timeout=send_timeout, buffer_bytes=buffer_bytes)
    return _helper_stream(
        items, response_model, settings, status_code, headers, events=False, media_type=media_type
    )


def server_sent_events(
    items: Any,
    *,
    response_model: Any = UNTYPED,
    status_code: int = 200,
    headers: Mapping[str, str] | None = None,
    ping_interval: float | None = None,
    send_timeout: float | None = None,
    buffer_bytes: int = BUFFER_BYTES,
    bare: bool = False,
) -> StreamingResponse:
    r"""Stream what `items` yields as Server-Sent Events (`text/event-stream`), as FastAPI does.

    Each item is a `data:` event holding its JSON (encoded as `dumps` encodes it); a FastAPI
    `ServerSentEvent` item gives its own fields. Events ready together are sent in one body
    message. A `: ping` comment is sent after `ping_interval` seconds without a send;
    `Cache-Control: no-cache` and `X-Accel-Buffering: no` are set, as FastAPI sets them.

    Args:
        items: An async or sync iterable (sync ones are iterated in the threadpool).
        response_model: The declared item type: each plain item is validated against it (a
            `pydantic.ValidationError` ends the stream) and filtered to it.
        status_code: The response status.
        headers: Headers added to the response.
        ping_interval: Seconds of silence before a ping; None: FastAPI's interval (15 s).
        send_timeout: As `StreamSettings.send_timeout`; None: no limit.
        buffer_bytes: As `StreamSettings.buffer_bytes`.
        bare: The events alone: no pings, no `Cache-Control` or `X-Accel-Buffering`, and an
            exception of the generator raised alone (not in an exception group). The bytes
            are those of a hand-built `StreamingResponse(f"data: {c.model_dump_json()}\n\n"
            for c in chunks), media_type="text/event-stream")`.

    Returns:
        The streaming response.

    Raises:
        ValueError: `ping_interval` or `send_timeout` is not a positive number of seconds,
            `buffer_bytes` not a positive number of bytes, or `ping_interval` is given with
            `bare=True`.
    """
    if bare and ping_interval is not None:
        msg = "server_sent_events(bare=True) sends no pings: ping_interval must be None"
        raise ValueError(msg)
    settings = StreamSettings(
        ping_interval=ping_interval, send_timeout=send_timeout, buffer_bytes=buffer_bytes
    )
    return _helper_stream(
        items, response_model, settings, status_code, headers, events=True, bare=bare
    )


def _helper_stream(
    items: Any,
    response_model: Any,
    settings: StreamSettings,
    status_code: int,
    headers: Mapping[str, str] | None,
    *,
    events: bool,
    bare: bool = False,
    media_type: str | None = None,
) -> Stream:
    """`build_stream` of a helper's items, each encoded as `dumps` encodes a value of the model."""
    return build_stream(
        items,
        declared_encoder(response_model, DEFAULTS),
        events=events,
        settings=settings,
        status_code=status_code,
        headers=headers,
        bare=bare,
        media_type=media_type,
    )
