"""Generator endpoints of every shape a stream meets: when they wait, how they end, who leaves.

``generator_shapes()`` draws the steps of a generator (an item, a burst of eight ready items, a
wait that ends at once), how it ends (it returns, raises, or waits forever for a client that
leaves), sync or async, and when the client leaves (never, right after the headers, after the
first bytes of the body). ``GeneratorShape.endpoint`` builds the endpoint, with a dependency
with ``yield``; ``Marks`` tell when the generator's ``finally`` ran and the dependency closed.
(No postponed annotations here: FastAPI reads the endpoints' annotations, which name locals.)
"""

import dataclasses
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Annotated, Any

import anyio
from fastapi import Depends
from hypothesis import strategies as st
from pydantic import BaseModel


class Tok(BaseModel):
    """A streamed token: its JSON is the same bytes from pydantic and from orjson."""

    index: int
    text: str


@dataclasses.dataclass
class Marks:
    """Set by the endpoint: its generator's ``finally`` ran; its dependency was torn down."""

    finished: threading.Event = dataclasses.field(default_factory=threading.Event)
    torn_down: threading.Event = dataclasses.field(default_factory=threading.Event)


class Boom(RuntimeError):
    """What a generator drawn to fail raises."""


@dataclasses.dataclass(frozen=True)
class GeneratorShape:
    """A generator endpoint's steps, its end, sync or async, and when its client leaves.

    Attributes:
        steps: ``"item"``, ``"burst"`` (eight items yielded without waiting) or ``"wait"`` (an
            ``await anyio.sleep(0)``; a sync generator's ``time.sleep(0)``).
        ending: ``"return"``, ``"raise"`` (``Boom``) or ``"hang"`` (waits until cancelled;
            drawn only for an async generator whose client leaves).
        is_async: An async generator (else a sync one, run in the threadpool).
        leave_after: The client closes the connection once this many body bytes arrived (0:
            right after the headers), or None: it reads to the end.
    """

    steps: tuple[str, ...]
    ending: str
    is_async: bool
    leave_after: int | None

    def items(self) -> Iterator[Tok | None]:
        """The items in order, None for a wait."""
        index = 0
        for step in self.steps:
            if step == "wait":
                yield None
                continue
            for _ in range(8 if step == "burst" else 1):
                yield Tok(index=index, text=step)
                index += 1

    def endpoint(self, marks: Marks) -> Callable[..., Any]:
        """A fresh generator endpoint of this shape, setting ``marks``."""

        async def session() -> AsyncIterator[str]:
            try:
                yield "s"
            finally:
                marks.torn_down.set()

        if self.is_async:

            async def async_stream(s: Annotated[str, Depends(session)]) -> AsyncIterator[Tok]:
                try:
                    for item in self.items():
                        if item is None:
                            await anyio.sleep(0)
                        else:
                            yield item
                    if self.ending == "hang":
                        await anyio.sleep_forever()
                    if self.ending == "raise":
                        raise Boom
                finally:
                    marks.finished.set()

            return async_stream

        def sync_stream(s: Annotated[str, Depends(session)]) -> Iterator[Tok]:
            try:
                for item in self.items():
                    if item is None:
                        time.sleep(0)
                    else:
                        yield item
                if self.ending == "raise":
                    raise Boom
            finally:
                marks.finished.set()

        return sync_stream


@st.composite
def generator_shapes(draw: st.DrawFn) -> GeneratorShape:
    """A generator endpoint's shape (see ``GeneratorShape``)."""
    steps = tuple(draw(st.lists(st.sampled_from(["item", "burst", "wait"]), max_size=6)))
    is_async = draw(st.booleans())
    leave_after = draw(st.none() | st.sampled_from([0, 1]))
    # A generator that hangs is cut only by its client leaving, which needs a byte to leave on.
    leaves = leave_after == 0 or (leave_after == 1 and ("item" in steps or "burst" in steps))
    endings = ["return", "raise"] + (["hang"] if is_async and leaves else [])
    return GeneratorShape(steps, draw(st.sampled_from(endings)), is_async, leave_after)
