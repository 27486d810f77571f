"""The HTTP client that the namespace tests run inside the client namespace.

Usage::

    python netns_client.py CLIENT URL MAX_TIME [IDLE INTERVAL COUNT]

CLIENT is ``httpx`` (no socket options: what a client gets by default), ``httpx-options``
(``httpx.HTTPTransport(socket_options=uvicorn_keepalive.socket_options(settings))``) or
``aiohttp-factory`` (``aiohttp.TCPConnector(socket_factory=uvicorn_keepalive.socket_factory(
settings))``), where settings is ``KeepaliveSettings(IDLE, INTERVAL, COUNT)``. It sends
``POST URL`` (aiohttp resends an idempotent request once on a new connection after a reset)
with a timeout of MAX_TIME seconds and prints one JSON line: ``{"event": "response", "body":
...}``, or ``{"event": "error", "error": ..., "after": seconds}``.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

import aiohttp
import httpx

import uvicorn_keepalive


async def aiohttp_get(
    url: str, max_time: float, settings: uvicorn_keepalive.KeepaliveSettings
) -> str:
    """POST to ``url`` with aiohttp and the package's socket factory."""
    connector = aiohttp.TCPConnector(socket_factory=uvicorn_keepalive.socket_factory(settings))
    timeout = aiohttp.ClientTimeout(total=max_time)
    async with (
        aiohttp.ClientSession(connector=connector, timeout=timeout) as session,
        session.post(url) as response,
    ):
        return await response.text()


def main() -> None:
    """Send the request; print its outcome."""
    client, url, max_time, *timers = sys.argv[1:]
    idle, interval, count = (int(value) for value in timers) if timers else (60, 10, 3)
    settings = uvicorn_keepalive.KeepaliveSettings(idle=idle, interval=interval, count=count)
    started = time.monotonic()
    try:
        if client == "aiohttp-factory":
            body = asyncio.run(aiohttp_get(url, float(max_time), settings))
        else:
            options = uvicorn_keepalive.socket_options(settings) if client != "httpx" else None
            transport = httpx.HTTPTransport(socket_options=options)
            with httpx.Client(transport=transport, timeout=float(max_time)) as session:
                body = session.post(url).text
    except Exception as error:
        after = time.monotonic() - started
        print(json.dumps({"event": "error", "error": repr(error), "after": after}), flush=True)
        return
    print(json.dumps({"event": "response", "body": body}), flush=True)


if __name__ == "__main__":
    main()
