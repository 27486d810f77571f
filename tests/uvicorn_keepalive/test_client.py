"""The client side: httpx (and the openai client through it) and aiohttp get the same settings.

The options are read back with getsockopt on the client's own socket of a real request to a
stock uvicorn server.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Callable
from typing import Any

import aiohttp
import httpx
import httpx2
import openai
import pytest

from tests.uvicorn_keepalive.servers import (
    Message,
    Receive,
    Send,
    expected,
    keepalive_options,
    running_server,
)
from uvicorn_keepalive import KeepaliveSettings, socket_factory, socket_options

SETTINGS = KeepaliveSettings(idle=31, interval=4, count=6, user_timeout=100_000)
WANTED = expected(31, 4, 6, 100_000)


async def models(scope: Message, receive: Receive, send: Send) -> None:
    """Answer every request as an OpenAI-style ``GET /v1/models`` with no model."""
    body = json.dumps({"object": "list", "data": []}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def client_options(response: httpx.Response | httpx2.Response) -> dict[str, int]:
    """The options of the client's socket that carried ``response`` (httpcore's stream)."""
    return keepalive_options(response.extensions["network_stream"].get_extra_info("socket"))


def test_httpx_transport() -> None:
    transport = httpx.HTTPTransport(socket_options=socket_options(SETTINGS))
    with running_server(models) as running, httpx.Client(transport=transport) as client:
        response = client.get(f"http://127.0.0.1:{running.port}/")
        assert client_options(response) == WANTED
        with httpx.Client() as plain:
            assert (
                client_options(plain.get(f"http://127.0.0.1:{running.port}/"))["SO_KEEPALIVE"] == 0
            )


def test_httpx_async_transport() -> None:
    async def request(port: int) -> dict[str, int]:
        options = socket_options(SETTINGS)
        transport = httpx.AsyncHTTPTransport(socket_options=options)
        async with httpx.AsyncClient(transport=transport) as client:
            return client_options(await client.get(f"http://127.0.0.1:{port}/"))

    with running_server(models) as running:
        assert asyncio.run(request(running.port)) == WANTED


def test_openai_client_through_http_client() -> None:
    # openai 3 builds on httpx2, whose transport takes the same socket_options.
    options = socket_options(SETTINGS)
    transport = httpx2.HTTPTransport(socket_options=options)
    with running_server(models) as running, httpx2.Client(transport=transport) as http_client:
        client = openai.OpenAI(
            base_url=f"http://127.0.0.1:{running.port}/v1",
            api_key="unused",
            http_client=http_client,
        )
        raw = client.models.with_raw_response.list()
        assert list(raw.parse()) == []
        assert client_options(raw.http_response) == WANTED


def test_aiohttp_socket_factory() -> None:
    async def request(port: int) -> dict[str, int]:
        factory = socket_factory(SETTINGS)
        created: list[socket.socket] = []

        def recording_factory(address_info: Any) -> socket.socket:
            created.append(factory(address_info))
            return created[-1]

        connector = aiohttp.TCPConnector(socket_factory=recording_factory)
        async with aiohttp.ClientSession(connector=connector) as session:
            async with session.get(f"http://127.0.0.1:{port}/") as response:
                assert await response.json() == {"object": "list", "data": []}
            [sock] = created  # connected, in the pool for the next request
            assert sock.getpeername() == ("127.0.0.1", port)
            return keepalive_options(sock)

    with running_server(models) as running:
        assert asyncio.run(request(running.port)) == WANTED


def test_without_settings_they_come_from_the_environment_as_for_the_server(
    environ: Callable[..., None],
) -> None:
    environ(UVICORN_KEEPALIVE_IDLE="44", UVICORN_KEEPALIVE_NODELAY="0")
    assert socket_options() == [
        (socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1),
        (socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, 44),
        (socket.IPPROTO_TCP, socket.TCP_KEEPINTVL, 10),
        (socket.IPPROTO_TCP, socket.TCP_KEEPCNT, 3),
    ]  # no TCP_NODELAY


def test_given_settings_never_take_a_variable(environ: Callable[..., None]) -> None:
    environ(UVICORN_KEEPALIVE_USER_TIMEOUT="70000", UVICORN_KEEPALIVE_IDLE="0")
    assert socket_options(idle=30, interval=5, count=4) == [
        (socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1),
        (socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, 30),
        (socket.IPPROTO_TCP, socket.TCP_KEEPINTVL, 5),
        (socket.IPPROTO_TCP, socket.TCP_KEEPCNT, 4),
        (socket.IPPROTO_TCP, socket.TCP_NODELAY, 1),
    ]  # no TCP_USER_TIMEOUT
    assert socket_options(KeepaliveSettings(count=5), nodelay=False) == [
        (socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1),
        (socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, 60),
        (socket.IPPROTO_TCP, socket.TCP_KEEPINTVL, 10),
        (socket.IPPROTO_TCP, socket.TCP_KEEPCNT, 5),
    ]


def test_bad_settings_are_refused_naming_them(environ: Callable[..., None]) -> None:
    with pytest.raises(ValueError, match=r"^count=0 is out of range: 1 to 127 probes$"):
        socket_options(count=0)
    with pytest.raises(TypeError, match=r"^nodelay must be a bool, got 'no'$"):
        socket_factory(nodelay="no")  # type: ignore[arg-type]
    with pytest.raises(
        TypeError, match=r"^settings must be a KeepaliveSettings \(or idle=...\), got 30$"
    ):
        socket_options(30)  # type: ignore[arg-type]
    environ(UVICORN_KEEPALIVE_INTERVAL="0")
    with pytest.raises(ValueError, match=r"^UVICORN_KEEPALIVE_INTERVAL='0' is out of range"):
        socket_factory()
