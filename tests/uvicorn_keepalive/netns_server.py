"""The uvicorn server that the namespace tests run inside the server namespace.

Usage::

    python netns_server.py [--loop LOOP] HOST stock
    python netns_server.py [--loop LOOP] HOST protocol IDLE INTERVAL COUNT
    python netns_server.py [--loop LOOP] HOST environment

Binds HOST on an ephemeral port and listens before anything else, so that a client may connect
as soon as the port is announced; then serves the app below with

- ``stock``: uvicorn's own httptools protocol (``--http httptools``);
- ``protocol``: ``uvicorn_keepalive.protocol(idle=IDLE, interval=INTERVAL, count=COUNT)``;
- ``environment``: ``uvicorn_keepalive:Protocol``, named as on the command line
  (``--http uvicorn_keepalive:Protocol``), its timers read from ``UVICORN_KEEPALIVE_*``;

on uvicorn's event loop LOOP (``auto``, ``asyncio`` or ``uvloop``; default ``auto``).

Every event is one JSON object on its own line of standard output, flushed at once:

- ``{"event": "listening", "port": N}`` once the socket listens;
- ``GET /reply-after/<seconds>``: sleeps, answers ``200 done``, then ``{"event": "responded"}``;
- ``GET /await-disconnect``: reads the request (``{"event": "request"}``), then waits on
  ``receive()`` again and reports the message it gets, ``{"event": "http.disconnect"}`` when the
  connection is lost.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
from collections.abc import Awaitable, Callable
from typing import Any

import uvicorn

import uvicorn_keepalive

Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


def report(event: str, **details: object) -> None:
    """Write one event as a JSON line on standard output, flushed at once."""
    print(json.dumps({"event": event, **details}), flush=True)


async def app(scope: Message, receive: Receive, send: Send) -> None:
    """Answer late (``/reply-after/<seconds>``) or wait for the client to go away."""
    if scope["type"] != "http":
        return
    path: str = scope["path"]
    if path == "/await-disconnect":
        request = await receive()
        report("request", type=request["type"])
        message = await receive()
        report(message["type"])
        return
    await receive()
    await asyncio.sleep(float(path.removeprefix("/reply-after/")))
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"done"})
    report("responded")


def main(argv: list[str] | None = None) -> None:
    """Parse the command line, listen, announce the port, and serve until terminated."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loop", choices=["auto", "asyncio", "uvloop"], default="auto")
    parser.add_argument("host")
    parser.add_argument("variant", choices=["stock", "protocol", "environment"])
    parser.add_argument("timers", nargs="*", type=int, metavar="IDLE INTERVAL COUNT")
    arguments = parser.parse_args(argv)
    http: type[asyncio.Protocol] | str = "httptools"
    if arguments.variant == "protocol":
        idle, interval, count = arguments.timers
        http = uvicorn_keepalive.protocol(idle=idle, interval=interval, count=count)
    elif arguments.variant == "environment":
        http = "uvicorn_keepalive:Protocol"
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((arguments.host, 0))
    listener.listen()
    report("listening", port=listener.getsockname()[1])
    config = uvicorn.Config(
        app, http=http, loop=arguments.loop, log_level="warning", lifespan="off"
    )
    uvicorn.Server(config).run(sockets=[listener])


if __name__ == "__main__":
    main()
