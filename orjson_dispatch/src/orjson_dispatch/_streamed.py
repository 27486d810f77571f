"""`JSONLines` and `ServerSentEvents`: an endpoint answers JSON, or a stream, as the request asks.

FastAPI streams generator endpoints, always. An OpenAI-compatible server answers one path with
a JSON body or with a stream, chosen by the request's `"stream"` field. An endpoint of a
`DispatchRoute` declares both in its return type, and returns either::

    @router.post("/v1/chat/completions")
    async def chat(request: ChatRequest) -> ChatCompletion | ServerSentEvents[ChatChunk]:
        if request.stream:
            return ServerSentEvents(chunks(request))
        return complete(request)

The JSON body is answered as the route answers any value (validated against and filtered to the
rest of the return type); the stream as a generator endpoint's (each item validated against the
marker's item type), and the OpenAPI document shows both media types.

Deliberate divergences from FastAPI's streams (0.134 JSON Lines, 0.135 `EventSourceResponse`),
each for the reason given (the stream itself is sent as a generator endpoint's: `_streams`,
`_stream_sending` and `_stream_frames` list theirs):

1. An endpoint may return its stream (`JSONLines(items)`, `ServerSentEvents(items)`) instead of
   being a generator, and answer JSON on the same path; FastAPI streams generator endpoints
   only, and a plain `APIRoute` given such a return type fails when the route is made (a
   `TypeError` naming `DispatchRoute`). OpenAI-compatible servers choose by the request's
   `"stream"` field: one path, two answers.
2. The marker, not the route's `response_class`, chooses JSON Lines or Server-Sent Events for a
   returned stream; FastAPI reads `response_class=EventSourceResponse`. The endpoint returns
   either, so each value says which it is.
"""

from __future__ import annotations

import types
import typing
from collections.abc import AsyncIterable, Iterable
from typing import Any, Generic, NamedTuple, TypeVar, Union

from orjson_dispatch import _fastapi
from orjson_dispatch._stream_frames import EVENT_STREAM, JSON_LINES

__all__ = ["JSONLines", "ReturnedStream", "ServerSentEvents", "Streamed", "returned_stream"]

T = TypeVar("T")


class Streamed(Generic[T]):
    """What an endpoint returns to be streamed: the items of an async or sync iterable.

    Sync iterables are iterated in the threadpool, as FastAPI iterates sync generators.
    """

    __slots__ = ("items",)
    media_type = ""

    def __init__(self, items: AsyncIterable[T] | Iterable[T]) -> None:
        self.items = items

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        # A plain APIRoute (or pydantic) reading the return type would otherwise fail with a
        # message about schemas, far from the cause.
        msg = (
            f"{cls.__name__}[...] in a return type is answered by orjson_dispatch.DispatchRoute: "
            "serve the endpoint with route_class=DispatchRoute"
        )
        raise TypeError(msg)


class JSONLines(Streamed[T]):
    """Returned by an endpoint of a `DispatchRoute`: its items as JSON Lines, one per line."""

    __slots__ = ()
    media_type = JSON_LINES


class ServerSentEvents(Streamed[T]):
    """Returned by an endpoint of a `DispatchRoute`: its items as Server-Sent Events.

    A plain item is a `data:` event holding its JSON; a FastAPI `ServerSentEvent` gives its own
    fields. Pings and headers are those of FastAPI's `EventSourceResponse`.
    """

    __slots__ = ()
    media_type = EVENT_STREAM


class ReturnedStream(NamedTuple):
    """What a return type of `Body | JSONLines[Item]` (or `ServerSentEvents`) declares."""

    kind: type[Streamed[Any]]
    item: Any  # the item type, or None: untyped
    body: Any  # the JSON body's type, or None when the endpoint always streams


def returned_stream(annotation: Any) -> ReturnedStream | None:
    """Split a return type into its stream and its JSON body, or None if it declares no stream.

    Raises:
        TypeError: It declares two streams.
    """
    arguments = _union_arguments(annotation)
    streams = [a for a in arguments if _stream_kind(a) is not None]
    if not streams:
        return None
    if len(streams) > 1:
        msg = f"the return type {annotation!r} declares more than one stream"
        raise TypeError(msg)
    (stream,) = streams
    kind = _stream_kind(stream)
    assert kind is not None
    (item,) = typing.get_args(stream) or (None,)
    rest = [a for a in arguments if a is not stream]
    body = None if not rest else rest[0] if len(rest) == 1 else Union[tuple(rest)]  # noqa: UP007
    return ReturnedStream(kind, _data_item(item), body)


def _union_arguments(annotation: Any) -> tuple[Any, ...]:
    if typing.get_origin(annotation) in (Union, types.UnionType):
        return typing.get_args(annotation)
    return (annotation,)


def _stream_kind(annotation: Any) -> type[Streamed[Any]] | None:
    origin = typing.get_origin(annotation) or annotation
    if isinstance(origin, type) and issubclass(origin, Streamed) and origin is not Streamed:
        return origin
    return None


def _data_item(item: Any) -> Any:
    # A `ServerSentEvent` item type (or a subclass, as FastAPI's `lenient_issubclass` reads it)
    # is a transport wrapper, not data to validate or document; such items give their own fields.
    event_class = _fastapi.server_sent_event_class()
    if event_class is not None and isinstance(item, type) and issubclass(item, event_class):
        return None
    return item
