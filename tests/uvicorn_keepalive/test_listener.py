"""Keepalive set once on the listening socket: Linux copies it to every accepted socket."""

from __future__ import annotations

import os
import socket
from typing import Any

import pytest

from tests.uvicorn_keepalive.servers import (
    REQUEST,
    expected,
    get,
    keepalive_options,
    read_response,
    running_server,
)
from uvicorn_keepalive import _listener, _socket, protocol

LOOPS = ["asyncio", "uvloop"]
EXPECTED = expected(17, 3, 9, 200_000)


@pytest.fixture
def applied_to(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The descriptor of each socket the listener logic sets options on (they are still set)."""
    descriptors: list[int] = []
    real_apply = _socket.apply

    def recording_apply(sock: Any, plan: _socket.Plan) -> dict[str, int]:
        descriptors.append(sock.fileno())
        return real_apply(sock, plan)

    monkeypatch.setattr(_listener, "apply", recording_apply)
    return descriptors


@pytest.mark.parametrize("loop", LOOPS)
def test_later_connections_inherit_the_settings_from_the_listener(
    loop: str, applied_to: list[int]
) -> None:
    with running_server(http=protocol(17, 3, 9, user_timeout=200_000), loop=loop) as running:
        [listener] = running.server.servers[0].sockets
        assert listener.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 0
        first, _ = get(running.port)  # accepted before the listener was configured
        later = [get(running.port)[0] for _ in range(3)]
        with first, later[0], later[1], later[2]:
            assert keepalive_options(listener) == EXPECTED
            assert keepalive_options(running.server_side_socket(first)) == EXPECTED
            for client in later:
                accepted = running.server_side_socket(client)
                assert keepalive_options(accepted) == EXPECTED
                assert accepted.fileno() not in applied_to  # inherited, never set
            assert applied_to == [listener.fileno(), running.server_side_socket(first).fileno()]


def test_connections_queued_before_the_listener_was_configured_are_set_one_by_one(
    applied_to: list[int],
) -> None:
    # Three connections complete their handshake in the kernel before uvicorn starts
    # (uvicorn --fd): each was cloned from the listener before it carried the settings.
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        queued = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(3)]
        with running_server(
            http=protocol(17, 3, 9, user_timeout=200_000), fd=listener.fileno()
        ) as running:
            for client in queued:
                client.sendall(REQUEST)
                assert read_response(client).startswith(b"HTTP/1.1 200 OK")
            late, _ = get(port)
            with late:
                assert keepalive_options(listener) == EXPECTED
                for client in [*queued, late]:
                    assert keepalive_options(running.server_side_socket(client)) == EXPECTED
                set_one_by_one = {running.server_side_socket(c).fileno() for c in queued}
                assert set_one_by_one <= set(applied_to)
                assert running.server_side_socket(late).fileno() not in applied_to
        for client in queued:
            client.close()


def test_a_port_reused_by_a_new_server_gets_its_own_listener_configured() -> None:
    cls = protocol(17, 3, 9, user_timeout=200_000)
    with running_server(http=cls) as first_server:
        port = first_server.port
        for _ in range(2):  # the second one inherits from the first server's listener
            client, _ = get(port)
            client.close()
    with running_server(http=cls, port=port) as second_server:
        for _ in range(2):
            client, _ = get(port)
            with client:
                accepted = second_server.server_side_socket(client)
                assert keepalive_options(accepted) == EXPECTED


def test_without_inheritance_each_connection_is_set(
    monkeypatch: pytest.MonkeyPatch, applied_to: list[int]
) -> None:
    # Other kernels (macOS does not copy TCP_KEEPALIVE to accepted sockets).
    monkeypatch.setattr(_listener, "INHERITS", False)
    with running_server(http=protocol(17, 3, 9, user_timeout=200_000)) as running:
        clients = [get(running.port)[0] for _ in range(3)]
        [listener] = running.server.servers[0].sockets
        assert listener.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 0
        accepted = [running.server_side_socket(client) for client in clients]
        for sock in accepted:
            assert keepalive_options(sock) == EXPECTED
        assert applied_to == [sock.fileno() for sock in accepted]
        for client in clients:
            client.close()


def test_a_default_timeout_leaves_the_other_sockets_of_the_process_blocking(
    applied_to: list[int],
) -> None:
    # socket.socket(fileno=...) would make each socket it wraps non-blocking.
    left, right = socket.socketpair()
    previous = socket.getdefaulttimeout()
    socket.setdefaulttimeout(30)
    try:
        with left, right, running_server(http=protocol(17, 3, 9, user_timeout=200_000)) as running:
            clients = [get(running.port)[0] for _ in range(2)]
            for client in clients:
                with client:
                    accepted = running.server_side_socket(client)
                    assert keepalive_options(accepted) == EXPECTED
                    assert accepted.fileno() in applied_to  # set on its own
            assert os.get_blocking(left.fileno())
            assert os.get_blocking(right.fileno())
    finally:
        socket.setdefaulttimeout(previous)
