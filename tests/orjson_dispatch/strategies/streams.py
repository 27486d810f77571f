"""Streams of generator endpoints: an item type, the items yielded, sync or async.

``stream_cases()`` draws the item type (a type from ``specs``, or none: FastAPI's untyped path),
the items (values of that type, some wrapped in ``ServerSentEvent`` items with data, raw text,
event names, ids, retry times and comments) and the route's ``response_model_*`` settings.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterable, Callable, Iterable, Iterator
from typing import Any

from fastapi.sse import ServerSentEvent
from hypothesis import strategies as st

from tests.orjson_dispatch.apps import UNTYPED, declare
from tests.orjson_dispatch.strategies.http_cases import ROUTE_FLAGS, route_options
from tests.orjson_dispatch.strategies.specs import type_specs
from tests.orjson_dispatch.strategies.untyped import untyped_values

#: Untyped items, built once: a recursive strategy built per draw replays inconsistently
#: (FlakyStrategyDefinition).
_UNTYPED_VALUES = untyped_values(max_leaves=6)
#: One line of an event's field (event names and ids are single lines without NUL).
_LINES = st.text(st.characters(exclude_characters="\r\n\x00", codec="utf-8"), max_size=8)


def server_sent_events(data: st.SearchStrategy[Any]) -> st.SearchStrategy[ServerSentEvent]:
    """``ServerSentEvent`` items: JSON ``data`` drawn from ``data``, or raw text, or neither."""
    fields = {
        "event": st.none() | _LINES,
        "id": st.none() | _LINES,
        "retry": st.none() | st.integers(0, 10**9),
        "comment": st.none() | st.text(max_size=12),  # line breaks become comment lines
    }
    return st.one_of(
        st.builds(ServerSentEvent, data=data, **fields),
        st.builds(ServerSentEvent, raw_data=st.text(max_size=12), **fields),
        st.builds(ServerSentEvent, **fields),
    )


@dataclasses.dataclass(frozen=True)
class StreamCase:
    """A generator endpoint: item type, items, route options, sync or async.

    Attributes:
        annotation: The item type, or ``UNTYPED``.
        items: What the generator yields.
        options: The route's ``response_model_*`` settings.
        is_async: An async generator (else a sync one, which FastAPI runs in threads).
    """

    annotation: Any
    items: list[Any]
    options: dict[str, Any]
    is_async: bool

    def endpoint(self) -> Callable[..., Any]:
        """A fresh generator function yielding the items, declared with the item type."""
        return generator(self.items, annotation=self.annotation, is_async=self.is_async)


def generator(
    items: Iterable[Any], *, annotation: Any = UNTYPED, is_async: bool = True
) -> Callable[..., Any]:
    """A generator function yielding ``items``, declared ``-> (Async)Iterable[annotation]``."""
    endpoint: Callable[..., Any]
    container: Any
    if is_async:

        async def async_stream() -> Any:
            for item in items:
                yield item

        endpoint, container = async_stream, AsyncIterable
    else:

        def sync_stream() -> Iterator[Any]:
            yield from items

        endpoint, container = sync_stream, Iterable
    return declare(endpoint, UNTYPED if annotation is UNTYPED else container[annotation])


@st.composite
def stream_cases(draw: st.DrawFn, *, events: bool) -> StreamCase:
    """A generator endpoint's case; with ``events``, some items are ``ServerSentEvent``s."""
    if draw(st.booleans()):
        spec = draw(type_specs())
        annotation, values, options = spec.annotation, spec.values, draw(route_options(spec))
    else:
        # FastAPI ignores the response_model_* settings without an item type.
        annotation, values, options = UNTYPED, _UNTYPED_VALUES, draw(st.just({}) | ROUTE_FLAGS)
    item = st.one_of(values, server_sent_events(values)) if events else values
    return StreamCase(
        annotation=annotation,
        items=draw(st.lists(item, max_size=5)),
        options=options,
        is_async=draw(st.booleans()),
    )
