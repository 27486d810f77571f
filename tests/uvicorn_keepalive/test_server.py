"""Real uvicorn servers on port 0: every accepted connection carries the keepalive settings."""

from __future__ import annotations

import asyncio
import errno
import logging
import socket
import ssl
import struct
from pathlib import Path
from typing import Any

import pytest
import trustme
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol as UvicornH11Protocol
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import ServerState

import uvicorn_keepalive
from tests.live_server import wait_for
from tests.uvicorn_keepalive.servers import (
    REQUEST,
    expected,
    get,
    hello,
    keepalive_options,
    read_response,
    running_server,
)
from uvicorn_keepalive import _protocol, _socket, protocol

LOGGER = "uvicorn.error.keepalive"
LOOPS = ["asyncio", pytest.param("uvloop", id="uvloop")]


@pytest.fixture
def count_connections(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record the socket of each call that keeps a connection alive (the real one still runs)."""
    calls: list[int] = []
    real_apply = _socket.apply

    def counting_apply(sock: Any, plan: Any) -> dict[str, int]:
        calls.append(sock.fileno())
        return real_apply(sock, plan)

    monkeypatch.setattr(_protocol, "apply", counting_apply)
    return calls


@pytest.mark.parametrize("loop", LOOPS)
@pytest.mark.parametrize("name", ["Protocol", "H11Protocol"])
def test_public_classes_apply_the_settings_read_at_their_lookup(loop: str, name: str) -> None:
    # What they read from the environment is tested in processes (test_processes.py).
    http = getattr(uvicorn_keepalive, name)
    settings = http.keepalive
    with running_server(http=http, loop=loop) as running:
        client, response = get(running.port)
        with client:
            assert response.startswith(b"HTTP/1.1 200 OK")
            accepted = running.server_side_socket(client)
            wanted = (settings.idle, settings.interval, settings.count, settings.user_timeout or 0)
            assert keepalive_options(accepted) == expected(*wanted, nodelay=settings.nodelay)
            # The client's own socket is not the server's business.
            assert client.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 0


class OwnProtocol(HttpToolsProtocol):
    """A user's own protocol class: honoured, served without keepalive."""


@pytest.mark.parametrize("loop", LOOPS)
@pytest.mark.parametrize(
    ("http", "base"),
    [
        ("httptools", HttpToolsProtocol),
        ("h11", UvicornH11Protocol),
        ("auto", HttpToolsProtocol),  # uvicorn's "auto" with httptools installed
        (HttpToolsProtocol, HttpToolsProtocol),
        (UvicornH11Protocol, UvicornH11Protocol),
    ],
)
def test_protocol_factory_applies_its_settings(
    loop: str, http: str | type[asyncio.Protocol], base: type[asyncio.Protocol]
) -> None:
    cls = protocol(idle=17, interval=3, count=9, http=http)
    assert isinstance(cls, type)
    assert issubclass(cls, base)
    with running_server(http=cls, loop=loop) as running:
        client, response = get(running.port)
        with client:
            assert response.startswith(b"HTTP/1.1 200 OK")
            assert keepalive_options(running.server_side_socket(client)) == expected(17, 3, 9)


def test_a_users_own_protocol_class_is_served_as_given() -> None:
    with running_server(http=protocol(idle=18, http=OwnProtocol)) as running:
        client, response = get(running.port)
        with client:
            assert response.startswith(b"HTTP/1.1 200 OK")
            accepted = running.server_side_socket(client)
            assert type(running.server.server_state.connections.copy().pop()) is OwnProtocol
            assert accepted.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 0


def test_applied_once_per_connection_not_per_request(count_connections: list[int]) -> None:
    with running_server(http=protocol(idle=20)) as running:
        client, _ = get(running.port)
        with client:
            for _ in range(4):  # HTTP keep-alive: more requests on the same connection
                client.sendall(REQUEST)
                assert read_response(client).startswith(b"HTTP/1.1 200 OK")
            assert len(count_connections) == 1
            second, _ = get(running.port)
            second.close()
    assert len(count_connections) == 2


def test_tls(tmp_path: Path) -> None:
    authority = trustme.CA()
    certificate = authority.issue_cert("127.0.0.1")
    certfile, keyfile = tmp_path / "cert.pem", tmp_path / "key.pem"
    certificate.cert_chain_pems[0].write_to_path(certfile)
    certificate.private_key_pem.write_to_path(keyfile)
    context = ssl.create_default_context()
    authority.configure_trust(context)
    with running_server(
        http=protocol(idle=23, interval=4, count=2),
        ssl_certfile=str(certfile),
        ssl_keyfile=str(keyfile),
    ) as running:
        raw = socket.create_connection(("127.0.0.1", running.port), timeout=5)
        with context.wrap_socket(raw, server_hostname="127.0.0.1") as client:
            client.sendall(REQUEST)
            assert read_response(client).startswith(b"HTTP/1.1 200 OK")
            accepted = running.server_side_socket(client)
            assert keepalive_options(accepted) == expected(23, 4, 2)


@pytest.mark.parametrize("loop", LOOPS)
def test_inherited_file_descriptor(loop: str) -> None:
    # uvicorn --fd labels the listener AF_UNIX (socket.fromfd(fd, AF_UNIX, ...)).
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        with running_server(
            http=protocol(idle=29, interval=2, count=3), fd=listener.fileno()
        ) as running:
            client, response = get(port)
            with client:
                assert response.startswith(b"HTTP/1.1 200 OK")
                accepted = running.server_side_socket(client)
                assert accepted.family == socket.AF_UNIX  # the label, not the truth
                assert keepalive_options(accepted) == expected(29, 2, 3)


def test_unix_socket_is_served_and_untouched(tmp_path: Path, count_connections: list[int]) -> None:
    path = str(tmp_path / "uvicorn.sock")
    with (
        running_server(http=protocol(idle=5), uds=path) as running,
        socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client,
    ):
        client.connect(path)
        client.sendall(REQUEST)
        assert read_response(client).startswith(b"HTTP/1.1 200 OK")
        [connection] = running.server.server_state.connections
        accepted = connection.transport.get_extra_info("socket")
        assert accepted.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 0
    assert count_connections == []  # skipped before any setsockopt


def test_a_failing_setsockopt_still_serves_the_request(
    monkeypatch: pytest.MonkeyPatch, logs: pytest.LogCaptureFixture
) -> None:
    # The kernel answers ENOPROTOOPT for an option number it does not know.
    monkeypatch.setattr(socket, "TCP_KEEPCNT", 9999)
    logs.set_level(logging.DEBUG, logger=LOGGER)
    with running_server(http=protocol(idle=19, interval=6, count=4)) as running:
        client, response = get(running.port)
        with client:
            assert response.startswith(b"HTTP/1.1 200 OK")
            options = keepalive_options(running.server_side_socket(client))
    assert options["TCP_KEEPIDLE"] == 19
    assert options["TCP_KEEPCNT"] != 4
    refusals = [r for r in logs.records if "refused" in r.getMessage()]
    assert [r.levelno for r in refusals] == [logging.DEBUG]
    assert all(f"[Errno {errno.ENOPROTOOPT}]" in r.getMessage() for r in refusals)


@pytest.mark.parametrize("loop", LOOPS)
def test_connections_reset_by_the_peer_leave_nothing_behind(
    loop: str, count_connections: list[int]
) -> None:
    connections = 150
    with running_server(http=protocol(idle=30), loop=loop) as running:
        for index in range(connections):
            client = socket.create_connection(("127.0.0.1", running.port), timeout=5)
            if index % 2:
                client.sendall(REQUEST[:10])  # a request cut short by the reset
            # SO_LINGER with a zero timeout: close() sends RST instead of FIN.
            client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            client.close()
        wait_for(lambda: len(count_connections) == connections)
        wait_for(lambda: not running.server.server_state.connections)
        # The server still works afterwards, with keepalive.
        client, response = get(running.port)
        with client:
            assert response.startswith(b"HTTP/1.1 200 OK")
            assert keepalive_options(running.server_side_socket(client))["TCP_KEEPIDLE"] == 30
    assert running.server.server_state.connections == set()


class StubTransport:
    """A transport as uvicorn's own protocol tests build it: its socket is whatever is given."""

    def __init__(self, sock: Any) -> None:
        self.sock = sock

    def get_extra_info(self, key: str, default: Any = None) -> Any:
        extra = {"socket": self.sock, "sockname": ("127.0.0.1", 8000)}
        return extra.get(key, default)

    def is_closing(self) -> bool:
        return False

    def close(self) -> None:
        pass


def connect(cls: type[Any], sock: Any) -> Any:
    """Build ``cls`` as uvicorn's server does and hand it a stub transport."""
    loop = asyncio.new_event_loop()
    try:
        config = uvicorn.Config(hello, http=cls, lifespan="off", log_config=None)
        config.load()
        state = ServerState()
        instance = cls(config=config, server_state=state, app_state={}, _loop=loop)
        instance.connection_made(StubTransport(sock))
        assert state.connections == {instance}  # uvicorn's connection_made ran
        return instance
    finally:
        loop.close()


def test_a_transport_without_a_socket_is_skipped_silently(
    count_connections: list[int], logs: pytest.LogCaptureFixture
) -> None:
    cls = protocol(idle=5)
    logs.set_level(logging.DEBUG, logger=LOGGER)
    connect(cls, None)
    assert count_connections == []
    assert logs.records == []


class BrokenSocket:
    """A socket object that fails in a way no socket does."""

    family = socket.AF_INET

    def fileno(self) -> int:
        raise RuntimeError("not a socket after all")

    def getsockname(self) -> tuple[str, int]:
        return ("127.0.0.1", 8000)

    def getpeername(self) -> tuple[str, int]:
        return ("127.0.0.1", 50000)


def test_an_unexpected_error_is_logged_and_the_connection_proceeds(
    logs: pytest.LogCaptureFixture,
) -> None:
    cls = protocol(idle=5)
    logs.set_level(logging.DEBUG, logger=LOGGER)
    connect(cls, BrokenSocket())
    [record] = [r for r in logs.records if r.levelno > logging.INFO]
    assert record.levelno == logging.ERROR
    assert record.exc_info is not None
    assert "unexpected failure" in record.getMessage()


def test_a_class_made_before_logging_shows_info_says_its_settings_at_its_first_connection(
    logs: pytest.LogCaptureFixture,
) -> None:
    logs.set_level(logging.WARNING, logger=LOGGER)
    cls = protocol(idle=26, interval=4)  # as uvicorn.run(app, http=protocol(...)) does
    logs.set_level(logging.INFO, logger=LOGGER)
    assert logs.records == []
    with running_server(http=cls) as running:
        for _ in range(2):
            client, _ = get(running.port)
            client.close()
    assert [r.getMessage() for r in logs.records] == [
        "TCP keepalive: idle=26, interval=4, count=3, nodelay=True"
    ]


@pytest.mark.parametrize("loop", LOOPS)
def test_servers_of_one_process_on_one_port_keep_their_own_settings(loop: str) -> None:
    # Two addresses, one port: each server's connections get that server's settings only.
    with running_server(http=protocol(idle=33, interval=3, count=3), loop=loop) as first:
        port = first.port
        with (
            running_server(http="httptools", loop=loop, host="127.0.0.2", port=port) as stock,
            running_server(
                http=protocol(idle=93, interval=9, count=9), loop=loop, host="127.0.0.3", port=port
            ) as third,
        ):
            for _ in range(2):  # each server after the others accepted
                for running, host, wanted in (
                    (first, "127.0.0.1", expected(33, 3, 3)),
                    (stock, "127.0.0.2", None),
                    (third, "127.0.0.3", expected(93, 9, 9)),
                ):
                    client, _ = get(port, host)
                    with client:
                        options = keepalive_options(running.server_side_socket(client))
                        if wanted is None:
                            assert options["SO_KEEPALIVE"] == 0
                        else:
                            assert options == wanted


@pytest.mark.parametrize(
    ("loop", "nodelay", "wanted"),
    [
        ("asyncio", True, 1),
        ("uvloop", True, 1),
        ("asyncio", False, 0),  # left as asyncio leaves it
        ("uvloop", False, 1),  # uvloop sets it on every TCP connection
    ],
)
def test_nodelay_on_a_listener_without_ipproto_tcp(loop: str, nodelay: bool, wanted: int) -> None:
    # uvicorn's --workers listener (Config.bind_socket) and gunicorn's are created with
    # proto=0; asyncio sets TCP_NODELAY only when it sees IPPROTO_TCP.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        assert listener.proto == 0
        listener.bind(("127.0.0.1", 0))
        http = protocol(idle=21, nodelay=nodelay)
        with running_server(http=http, loop=loop, sockets=[listener]) as running:
            client, _ = get(listener.getsockname()[1])
            with client:
                accepted = running.server_side_socket(client)
                assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == wanted
                assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE) == 21


def test_asyncio_leaves_nodelay_off_on_such_a_listener() -> None:
    # What the option restores: stock uvicorn on the asyncio loop.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        with running_server(http="httptools", loop="asyncio", sockets=[listener]) as running:
            client, _ = get(listener.getsockname()[1])
            with client:
                accepted = running.server_side_socket(client)
                assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 0
