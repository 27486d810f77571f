# pyright: strict
"""The public API of uvicorn_keepalive, used the way its users write it.

Never run, only type-checked: ``mypy --strict`` and ``pyright`` (strict) must both
accept every line, and every expected type is spelled out as an annotation, so a
change that loosens or breaks a public signature fails scripts/test.
"""

from __future__ import annotations

import asyncio
import socket
from asyncio.trsock import TransportSocket
from collections.abc import Callable
from typing import Any

import httpx
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol as UvicornH11Protocol
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from uvicorn_keepalive import (
    H11Protocol,
    KeepaliveSettings,
    Protocol,
    protocol,
    set_keepalive,
    socket_factory,
    socket_options,
)

# The two classes are uvicorn's own protocol classes, usable wherever those are.
httptools_class: type[HttpToolsProtocol] = Protocol
h11_class: type[UvicornH11Protocol] = H11Protocol

# protocol() returns a class whose type follows `http`.
default_factory: type[Protocol] = protocol()
tuned_factory: type[Protocol] = protocol(idle=30, interval=5, count=4, user_timeout=70_000)
given_factory: type[Protocol] = protocol(KeepaliveSettings(idle=30, interval=5, count=4))
replaced_factory: type[H11Protocol] = protocol(KeepaliveSettings(), count=5, http="h11")
h11_factory: type[H11Protocol] = protocol(idle=30, http="h11")
httptools_factory: type[Protocol] = protocol(http="httptools")
without_nodelay: type[Protocol] = protocol(idle=30, nodelay=False)
factory: Callable[..., type[Protocol]] = protocol

# A library forwards its user's http= choice: a name or a class, as uvicorn.Config takes it.
auto_factory: type[asyncio.Protocol] | str = protocol(http="auto")
from_uvicorn_class: type[asyncio.Protocol] | str = protocol(http=HttpToolsProtocol)
kept_class: type[asyncio.Protocol] | str = protocol(KeepaliveSettings(), http=H11Protocol)


def library_config(user_http: str | type[asyncio.Protocol] = "auto") -> uvicorn.Config:
    http = protocol(KeepaliveSettings(idle=30), http=user_http, count=4)
    return uvicorn.Config(app, http=http)


async def app(scope: object, receive: object, send: object) -> None: ...


def serve() -> None:
    uvicorn.run(app, http=Protocol)
    uvicorn.run(app, http=protocol(idle=30), workers=2)
    uvicorn.run("main:app", http="uvicorn_keepalive:Protocol")
    config: uvicorn.Config = uvicorn.Config(app, http=protocol(count=5, http="h11"))
    uvicorn.Server(config).run()


def client_socket() -> dict[str, int]:
    sock = socket.create_connection(("127.0.0.1", 8000))
    applied: dict[str, int] = set_keepalive(sock, idle=30, interval=5, count=4, user_timeout=None)
    return applied


def transport_socket(transport: asyncio.Transport) -> dict[str, int]:
    sock: TransportSocket = transport.get_extra_info("socket")
    return set_keepalive(sock, idle=30)


def clients() -> None:
    options: list[tuple[int, int, int]] = socket_options(idle=30, user_timeout=None, nodelay=True)
    httpx.Client(transport=httpx.HTTPTransport(socket_options=options))
    httpx.AsyncClient(transport=httpx.AsyncHTTPTransport(socket_options=socket_options(idle=30)))
    factory: Callable[[tuple[Any, ...]], socket.socket] = socket_factory(idle=30, nodelay=False)
    factory((socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", ("192.0.2.1", 80)))


settings: KeepaliveSettings = KeepaliveSettings(idle=30, interval=5, count=4, user_timeout=None)
from_config: KeepaliveSettings = KeepaliveSettings.from_environment({"X_IDLE": "30"}, prefix="X_")
environment: KeepaliveSettings = KeepaliveSettings.from_environment()
from_settings: list[tuple[int, int, int]] = socket_options(settings)
set_from_settings: dict[str, int] = set_keepalive(socket.socket(), settings, nodelay=False)
nodelay: bool = KeepaliveSettings(nodelay=False).nodelay
idle: int = settings.idle
interval: int = settings.interval
count: int = settings.count
user_timeout: int | None = settings.user_timeout
detection_time: int = settings.detection_time
