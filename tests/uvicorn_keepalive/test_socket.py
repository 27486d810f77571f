"""set_keepalive() on real sockets, and each platform's branch through its constants."""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import socket
import sys
from collections.abc import Iterator

import pytest
from uvicorn_keepalive._socket import apply, plan

from tests.uvicorn_keepalive.servers import expected, keepalive_options
from uvicorn_keepalive import KeepaliveSettings, set_keepalive

LOGGER = "uvicorn.error.keepalive"
# The real Linux number, kept before any test hides or fakes the constant.
TCP_KEEPIDLE = socket.TCP_KEEPIDLE
# Option numbers the Linux kernel does not know: setsockopt answers ENOPROTOOPT.
UNKNOWN_OPTION = 9999


def reported(**options: int) -> dict[str, int]:
    """What ``set_keepalive`` returns when it set ``options``: with SO_KEEPALIVE and
    TCP_NODELAY, which it sets on every platform."""
    return {"SO_KEEPALIVE": 1, **options, "TCP_NODELAY": 1}


@pytest.fixture
def tcp_pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    """A connected client and the server side of a loopback TCP connection."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        client = socket.create_connection(listener.getsockname())
        server, _ = listener.accept()
    with client, server:
        yield client, server


def test_every_value_reads_back(tcp_pair: tuple[socket.socket, socket.socket]) -> None:
    _, server = tcp_pair
    applied = set_keepalive(server, idle=37, interval=11, count=6, user_timeout=250_000)
    assert applied == reported(
        TCP_KEEPIDLE=37, TCP_KEEPINTVL=11, TCP_KEEPCNT=6, TCP_USER_TIMEOUT=250_000
    )
    assert keepalive_options(server) == expected(37, 11, 6, 250_000)


def test_defaults_are_60_10_3(tcp_pair: tuple[socket.socket, socket.socket]) -> None:
    client, _ = tcp_pair
    set_keepalive(client)
    assert keepalive_options(client) == expected(60, 10, 3)


def test_ipv6() -> None:
    try:
        listener = socket.create_server(("::1", 0), family=socket.AF_INET6)
    except OSError as exc:
        pytest.skip(f"no IPv6 loopback here: {exc}")
    with listener, socket.create_connection(listener.getsockname()[:2]) as client:
        assert client.family == socket.AF_INET6
        set_keepalive(client, idle=5, interval=2, count=2)
        assert keepalive_options(client) == expected(5, 2, 2)


def test_unix_socket_is_left_untouched() -> None:
    left, right = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with left, right:
        assert set_keepalive(left, idle=5) == {}
        assert left.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 0


def test_a_tcp_socket_labelled_af_unix_is_recognised_by_its_address(
    tcp_pair: tuple[socket.socket, socket.socket],
) -> None:
    # uvicorn --fd wraps the inherited listener as AF_UNIX whatever it is; the sockets
    # it accepts carry that label too.
    _, server = tcp_pair
    with socket.fromfd(server.fileno(), socket.AF_UNIX, socket.SOCK_STREAM) as mislabelled:
        assert mislabelled.family == socket.AF_UNIX
        assert set_keepalive(mislabelled, idle=9, interval=3, count=2)["TCP_KEEPIDLE"] == 9
    assert keepalive_options(server) == expected(9, 3, 2)


def test_asyncio_transport_socket() -> None:
    async def scenario() -> dict[str, int]:
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            writer.close()

        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        async with server:
            port = server.sockets[0].getsockname()[1]
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            transport_socket = writer.get_extra_info("socket")
            assert not isinstance(transport_socket, socket.socket)  # asyncio's TransportSocket
            set_keepalive(transport_socket, idle=8, interval=4, count=5)
            options = keepalive_options(transport_socket)
            writer.close()
            return options

    assert asyncio.run(scenario()) == expected(8, 4, 5)


def test_macos_sets_the_idle_time_with_tcp_keepalive(
    monkeypatch: pytest.MonkeyPatch, tcp_pair: tuple[socket.socket, socket.socket]
) -> None:
    # macOS has no TCP_KEEPIDLE; its TCP_KEEPALIVE (0x10) is the idle time. Aliased to
    # Linux's TCP_KEEPIDLE here so that the kernel really receives and stores the value.
    monkeypatch.delattr(socket, "TCP_KEEPIDLE")
    monkeypatch.setattr(socket, "TCP_KEEPALIVE", TCP_KEEPIDLE, raising=False)
    _, server = tcp_pair
    applied = set_keepalive(server, idle=21, interval=7, count=4)
    assert applied == reported(TCP_KEEPALIVE=21, TCP_KEEPINTVL=7, TCP_KEEPCNT=4)
    # The kernel stored the idle time as TCP_KEEPIDLE (the alias above).
    assert keepalive_options(server) == expected(21, 7, 4)


@pytest.mark.parametrize(
    ("missing", "kept"),
    [
        # OpenBSD: the idle time and interval are system-wide sysctls.
        (["TCP_KEEPIDLE", "TCP_KEEPINTVL", "TCP_KEEPCNT"], {}),
        # Windows 10 1703: TCP_KEEPCNT, not yet TCP_KEEPIDLE and TCP_KEEPINTVL (1709).
        (["TCP_KEEPIDLE", "TCP_KEEPINTVL"], {"TCP_KEEPCNT": 3}),
    ],
)
def test_the_options_a_platform_lacks_are_one_warning_line_per_settings(
    missing: list[str],
    kept: dict[str, int],
    monkeypatch: pytest.MonkeyPatch,
    tcp_pair: tuple[socket.socket, socket.socket],
    logs: pytest.LogCaptureFixture,
) -> None:
    for name in missing:
        monkeypatch.delattr(socket, name)
    logs.set_level(logging.DEBUG, logger=LOGGER)
    client, server = tcp_pair
    only = reported(**kept)
    assert set_keepalive(server, idle=5) == only
    assert set_keepalive(client, idle=5) == only
    assert server.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 1
    assert [(r.levelno, r.getMessage()) for r in logs.records] == [
        (
            logging.WARNING,
            f"TCP keepalive: {', '.join(missing)} not available on this "
            f"platform ({sys.platform}): left at the system default",
        )
    ]
    assert set_keepalive(client, idle=6) == only  # other settings: said again
    assert len(logs.records) == 2


def test_missing_tcp_user_timeout_is_warned_only_when_asked_for(
    monkeypatch: pytest.MonkeyPatch,
    tcp_pair: tuple[socket.socket, socket.socket],
    logs: pytest.LogCaptureFixture,
) -> None:
    _, server = tcp_pair
    monkeypatch.delattr(socket, "TCP_USER_TIMEOUT")
    logs.set_level(logging.WARNING, logger=LOGGER)
    assert "TCP_USER_TIMEOUT" not in set_keepalive(server)
    assert logs.records == []
    assert "TCP_USER_TIMEOUT" not in set_keepalive(server, user_timeout=100_000)
    [record] = logs.records
    assert record.getMessage().startswith("TCP keepalive: TCP_USER_TIMEOUT not available")


def test_an_option_the_kernel_refuses_is_skipped_at_debug(
    monkeypatch: pytest.MonkeyPatch,
    tcp_pair: tuple[socket.socket, socket.socket],
    logs: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setattr(socket, "TCP_KEEPINTVL", UNKNOWN_OPTION)
    logs.set_level(logging.DEBUG, logger=LOGGER)
    _, server = tcp_pair
    applied = set_keepalive(server, idle=13, interval=3, count=2)
    assert applied == reported(TCP_KEEPIDLE=13, TCP_KEEPCNT=2)
    [record] = logs.records
    assert record.levelno == logging.DEBUG
    assert record.getMessage().startswith(
        f"TCP keepalive: TCP_KEEPINTVL refused on fd {server.fileno()}"
    )
    assert f"[Errno {errno.ENOPROTOOPT}]" in record.getMessage()


def test_a_closed_socket_is_left_alone(logs: pytest.LogCaptureFixture) -> None:
    logs.set_level(logging.DEBUG, logger=LOGGER)
    sock = socket.socket()
    sock.close()
    assert set_keepalive(sock, idle=71) == {}
    assert logs.records == []


def test_a_descriptor_closed_underneath_is_refused_at_debug(
    tcp_pair: tuple[socket.socket, socket.socket], logs: pytest.LogCaptureFixture
) -> None:
    # What a protocol meets when its connection's descriptor is gone: EBADF on SO_KEEPALIVE,
    # and nothing else is tried.
    logs.set_level(logging.DEBUG, logger=LOGGER)
    _, server = tcp_pair
    twin = socket.socket(fileno=os.dup(server.fileno()))
    os.close(twin.fileno())  # the object still holds the number
    try:
        assert apply(twin, plan(KeepaliveSettings(idle=72))) == {}
    finally:
        twin.detach()
    [record] = logs.records
    assert record.levelno == logging.DEBUG
    assert "SO_KEEPALIVE refused" in record.getMessage()
    assert f"[Errno {errno.EBADF}]" in record.getMessage()


def test_bad_arguments_raise_before_touching_the_socket(
    tcp_pair: tuple[socket.socket, socket.socket],
) -> None:
    _, server = tcp_pair
    with pytest.raises(ValueError, match=r"^count=128 is out of range: 1 to 127 probes$"):
        set_keepalive(server, count=128)
    with pytest.raises(TypeError, match=r"^interval must be an int"):
        set_keepalive(server, interval=2.5)  # type: ignore[arg-type]
    assert server.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 0
