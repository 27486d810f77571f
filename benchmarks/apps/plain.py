"""The keepalive suite's app: raw ASGI answering ``{}``, so that connections cost the most."""

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Message = MutableMapping[str, Any]
_HEADERS = [(b"content-type", b"application/json"), (b"content-length", b"2")]
_START: Message = {"type": "http.response.start", "status": 200, "headers": _HEADERS}
_BODY: Message = {"type": "http.response.body", "body": b"{}"}


async def app(
    scope: Message,
    receive: Callable[[], Awaitable[Message]],
    send: Callable[[Message], Awaitable[None]],
) -> None:
    """Answer every HTTP request with ``{}``; complete the lifespan events."""
    if scope["type"] == "lifespan":
        while True:
            event = (await receive())["type"]
            await send({"type": f"{event}.complete"})
            if event == "lifespan.shutdown":
                return
    await send(_START)
    await send(_BODY)
